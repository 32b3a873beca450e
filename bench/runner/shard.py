"""One run split over hosts by scenario: ``schedbench run --shard i/n``, merged later by
``schedbench merge`` (``bench.results.merge``).

A shard runs **every engine on its scenarios**, interleaved as a whole run is, so every
per-scenario ratio (engine ÷ engine) is measured inside one host. The split is by scenario,
never by engine: a ratio across two hosts would compare the hosts as much as the engines.

- ``split`` deals the run's scenarios into ``n`` parts, heaviest first to the lightest part
  (by the plan's expected seconds: ``weights``), so that the shards take about as long; the
  split depends only on the configuration and the scenario files, so every host computes the
  same one;
- the phases that are not per scenario go to one shard each (``phase_homes``): each compares
  engines among its own rows (ttft.jsonl, load.jsonl, ...), all measured on that one host;
- ``shard_config`` is the RunConfig of one shard: the whole run's, with its scenarios and
  phases, and the split recorded (``shard``, ``shard_scenarios``) for the merge to check.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.errors import UsageError
from bench.runner.plan import RunConfig, build_plan, estimate_run_s
from scenarios import Scenario

MAX_SHARDS = 64
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"2/4"`` → Shard(2, 4); a clear error for anything else."""
        match = _SHARD.match(text)
        if not match:
            raise UsageError(f"--shard: expected I/N like 2/4, not {text!r}")
        index, count = int(match.group(1)), int(match.group(2))
        if not 1 <= count <= MAX_SHARDS:
            raise UsageError(f"--shard {text}: N must be between 1 and {MAX_SHARDS}")
        if not 1 <= index <= count:
            raise UsageError(f"--shard {text}: I must be between 1 and N ({count})")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def weights(config: RunConfig, scenarios: Mapping[str, Scenario]) -> dict[str, float]:
    """Expected seconds of each of the run's scenarios: its timed batches in the suite, and
    its fault cells in the outcome phase (shared by its lanes)."""
    plan = build_plan(config, scenarios)
    out = dict.fromkeys(config.scenarios, 0.0)
    for batch in plan.batches:
        out[batch.scenario] += batch.est_s
    for name in config.scenarios:
        scenario = scenarios[name]
        if scenario.is_fault and not scenario.is_performance:
            runs = len(config.engines) * len(config.latencies) * max(1, config.fault_repeat)
            lanes = max(1, config.outcome_lanes)
            out[name] += runs * estimate_run_s(scenario, config.latencies[0]) / lanes
    return out


def split(
    names: Sequence[str], weight: Mapping[str, float], count: int
) -> tuple[tuple[str, ...], ...]:
    """``names`` in ``count`` parts of about equal weight (each part in the given order).

    Greedy: the heaviest scenario first, each to the part with the least weight so far (ties:
    the lower part). Deterministic for the same names and weights."""
    if count > len(names):
        raise UsageError(
            f"--shard: {len(names)} scenario(s) cannot fill {count} shards; use at most "
            f"{len(names)}"
        )
    order = {name: i for i, name in enumerate(names)}
    loads = [0.0] * count
    parts: list[list[str]] = [[] for _ in range(count)]
    for name in sorted(names, key=lambda n: (-weight.get(n, 0.0), order[n])):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        parts[lightest].append(name)
        loads[lightest] += weight.get(name, 0.0)
    return tuple(tuple(sorted(part, key=order.__getitem__)) for part in parts)


def phase_homes(count: int) -> dict[str, int]:
    """The shard of each phase that is not per scenario: the longest (load) on the last
    shard, TTFT on the one before, throughput before that, the import probes and the
    version matrix on shard 1 (as far as there are shards)."""
    return {
        "load": count,
        "ttft": max(1, count - 1),
        "throughput": max(1, count - 2),
        "footprint": 1,
        "versions": 1,
    }


def phases_of(config: RunConfig, shard: Shard) -> dict[str, Any]:
    """The RunConfig phase switches of ``shard`` (each phase on exactly one shard)."""
    homes = phase_homes(shard.count)
    return {name: bool(getattr(config, name)) and homes[name] == shard.index for name in homes}


def shard_config(config: RunConfig, scenarios: Mapping[str, Scenario], shard: Shard) -> RunConfig:
    """The RunConfig of ``shard`` of the run ``config`` describes (see the module docstring)."""
    parts = split(config.scenarios, weights(config, scenarios), shard.count)
    return dataclasses.replace(
        config,
        scenarios=parts[shard.index - 1],
        shard=str(shard),
        shard_scenarios=parts,
        **phases_of(config, shard),
    )


__all__ = ["MAX_SHARDS", "Shard", "phase_homes", "phases_of", "shard_config", "split", "weights"]
