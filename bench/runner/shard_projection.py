"""What a run would take split over N hosts, projected from the files of a run on one host
(``schedbench shards RUN --hosts 2,4,8``).

Shard *i* of the split ``bench.runner.shard`` would make runs for the scenarios of its part,
and would run the phases placed on it. So its time is projected from what the one-host run
measured:

- **its scenarios' run time**: the ``outer_ms`` of their rows in runs.jsonl, warm-ups
  included. For the suite that is each run in turn. For the outcome phase it is divided by
  its lanes, which run side by side;
- **the phases placed on it** (``phase_homes``): their seconds in meta.json
  (``outcome.phase_s``);
- **the run's overhead**: suite and outcome seconds that are not run time (worker starts,
  the collection before each batch, gaps), plus the run's start and end (environments,
  tables). Every shard starts its own workers, so this may not shrink at all: the *high*
  projection keeps all of it on every shard. The *low* one divides it by the shard's share
  of the run time.

A projection is not a measurement: the report of a sharded run has its measured shard
times (meta.json ``shards``). Check the method against them (docs/cluster.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import UsageError
from bench.results.folder import load_run_folder
from bench.results.rows import latest
from bench.runner.plan import RunConfig, outcome_only
from bench.runner.shard import phase_homes, split, weights
from scenarios import Scenario, load_scenarios


@dataclass(frozen=True)
class ShardProjection:
    """One shard's projected seconds: ``low`` with the overhead shared out, ``high`` without."""

    index: int
    scenarios: tuple[str, ...]
    phases: tuple[str, ...]
    run_s: float  # its scenarios' run time
    phase_s: float  # the phases placed on it
    low_s: float
    high_s: float


@dataclass(frozen=True)
class Projection:
    hosts: int
    shards: tuple[ShardProjection, ...]

    @property
    def low_s(self) -> float:
        return max(s.low_s for s in self.shards)

    @property
    def high_s(self) -> float:
        return max(s.high_s for s in self.shards)


def scenario_seconds(
    rows: Sequence[Any], config: RunConfig, scenarios: Mapping[str, Scenario]
) -> tuple[dict[str, float], dict[str, float]]:
    """(suite, outcome phase) run seconds per scenario, from the rows' ``outer_ms``."""
    reduced = set(outcome_only(config.engines))
    suite = dict.fromkeys(config.scenarios, 0.0)
    outcomes = dict.fromkeys(config.scenarios, 0.0)
    lanes = max(1, config.outcome_lanes)
    for row in rows:
        scenario = scenarios.get(row.scenario)
        seconds = (row.outer_ms or row.wall_ms or 0.0) / 1000
        if scenario is None or row.scenario not in suite:
            continue
        if scenario.is_performance and row.engine not in reduced:
            suite[row.scenario] += seconds
        else:
            outcomes[row.scenario] += seconds / lanes
    return suite, outcomes


def project(folder: Path | str, hosts: int) -> Projection:
    """The projection for ``hosts`` shards of the one-host run in ``folder``."""
    data = load_run_folder(folder)
    meta = data.meta
    if "config" not in meta:
        raise UsageError(f"{folder}: meta.json has no config (not a run of schedbench run)")
    config = RunConfig.from_dict(meta["config"])
    scenarios = load_scenarios(config.scenario_dir)
    phase_s = {k: float(v) for k, v in (meta.get("outcome") or {}).get("phase_s", {}).items()}
    rows = list(latest(data.runs))
    suite, outcomes = scenario_seconds(rows, config, scenarios)
    run_s = {s: suite[s] + outcomes[s] for s in config.scenarios}
    overhead = max(0.0, phase_s.get("suite", 0.0) - sum(suite.values()))
    overhead += max(0.0, phase_s.get("outcomes", 0.0) - sum(outcomes.values()))
    overhead += max(0.0, float(meta.get("duration_s") or 0.0) - sum(phase_s.values()))
    total_run = sum(run_s.values()) or 1.0
    parts = split(config.scenarios, weights(config, scenarios), hosts)
    homes = phase_homes(hosts)
    shards = []
    for index, part in enumerate(parts, start=1):
        placed = tuple(p for p, home in homes.items() if home == index and p in phase_s)
        mine = sum(run_s[s] for s in part)
        phases = sum(phase_s[p] for p in placed)
        low = mine + phases + overhead * mine / total_run
        high = mine + phases + overhead
        shards.append(ShardProjection(index, part, placed, mine, phases, low, high))
    return Projection(hosts, tuple(shards))


__all__ = ["Projection", "ShardProjection", "project", "scenario_seconds"]
