"""``schedbench run --cluster ADDRESS --spread-load``: the load phase across nodes.

The shards run without their load phase; once they are merged, the launcher runs it with the
mock pool on the first worker's node and the engine's load workers on the other workers'
nodes (``bench.runner.phases.load.nodes``), into the merged folder's load.jsonl. One arrival
schedule per level: its Poisson arrivals are split over the processes as independent seeded
streams (together one Poisson stream at the offered rate), process *i* on generator node
*i* mod the nodes, every process started at one time read in its own node's clock (the
clocks compared at the start). Each level's row names the mock's node and each process's,
so capacity reads per process (one process: one node) and for the deployment (every
generator node's cores).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.envs import MAIN, ensure
from bench.errors import EnvironmentUnavailable, UsageError
from bench.results.store import RunStore
from bench.runner.phases.load.nodes import on_cluster
from bench.runner.phases.load.phase import LoadPhase
from bench.runner.plan import RunConfig
from bench.runner.process import environment_of
from bench.runner.progress import make_progress
from scenarios import HandlerPolicy, load_scenarios


def python_of(engine: str) -> str | None:
    """The interpreter of ``engine``'s environment, as built on the nodes (``make envs``;
    the same checkout at the same path on every node)."""
    name = environment_of(engine)
    if name == MAIN:
        return sys.executable
    try:
        return str(ensure(name, build=False).python)
    except EnvironmentUnavailable:
        return None


def spread_load(client: Any, workers: list[str], folder: Path, say: Callable[[str], None]) -> int:
    """The load phase of the run in ``folder`` (merged, run without it), the mock on
    ``workers[0]``'s node and the load workers on the others'. Exit code: 0 every level
    measured, 1 a level lost or an engine left out by the time budget."""
    if len(workers) < 2:
        raise UsageError("--spread-load needs a cluster of 2 workers or more (the mock on one)")
    store = RunStore(folder)
    meta = store.read_meta()
    config = replace(RunConfig.from_dict(meta["config"]), load=True)
    placement = on_cluster(client, workers[0], workers[1:])
    say(
        f"load phase spread: the mock on {placement.mock.host}, load workers on "
        + ", ".join(g.host for g in placement.generators)
        + f" ({placement.cores} cores)"
    )
    progress = make_progress(sys.stderr)
    started = time.monotonic()
    try:
        outcome = LoadPhase(
            config,
            load_scenarios(config.scenario_dir),
            store,
            progress,
            config.scenario_dir,
            python_of=python_of,
            handler_args=HandlerPolicy().worker_args(),
            placement=placement,
        ).run()
    finally:
        progress.close()
    meta["config"]["load"] = True
    meta["load_placement"] = {
        "mock": placement.mock.host,
        "generators": [g.host for g in placement.generators],
        "cores": placement.cores,
    }
    phase_s = meta.setdefault("outcome", {}).setdefault("phase_s", {})
    phase_s["load"] = round(time.monotonic() - started, 1)
    meta["outcome"].update(
        {
            "load_levels": outcome.levels,
            "crashed_load_levels": outcome.crashed_levels,
            "load_skipped": outcome.skipped,
            "load_engines_skipped": list(outcome.skipped_engines),
            "load_s": round(outcome.elapsed_s, 1),
        }
    )
    complete = not outcome.crashed_levels and not outcome.skipped_engines
    meta["complete"] = bool(meta.get("complete")) and complete
    store.write_meta(meta)
    return 0 if complete else 1


__all__ = ["python_of", "spread_load"]
