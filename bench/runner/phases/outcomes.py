"""The outcome phase: every fault cell judged by its outcome, once, in concurrent lanes.

A fault scenario's runs measure timeouts, back-offs and the framework's reaction to a broken
call: what the report takes from them is the outcome (did the loop stop, was the unapproved
action never run), not a timing. So they leave the round-by-round suite:

- **One run per cell** (``fault_repeat``), unless that run misses its expectation: then
  ``fault_confirm`` more runs tell a flake from a failure ("1 of 3" against "3 of 3").
  ``--repeat N`` gives every cell N runs and no confirmation.
- **Concurrent lanes** (``outcome_lanes``): most of a fault run is waiting on a scripted
  deadline, not CPU, so several engines' workers run side by side, each lane one engine at a
  time (the longest first). ``tests/runner/test_outcome_phase.py`` checks that one lane and
  several give the same outcomes.
- The cells: every engine's pure fault scenarios (not also a happy path: those are timed in
  the suite), and the outcome-only engines' every fault scenario. Rows are round 0.
- **The suite's last workers**: an engine's cells play in the worker of the suite's last
  round when it is still alive (the TTFT and throughput phases use it too: warm, as a
  service is), so only the outcome-only engines, and a resumed run, start new ones.
- **The results cache** (``bench.runner.cache``): a cell whose code, environment, scenario
  and settings an earlier run measured takes that run's rows, timings null
  (``reused_from``), and starts no worker for it.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from bench.results.files import RUNS
from bench.results.folder import finished_repeats
from bench.runner.cache import (
    cacheable,
    cached_engine,
    code_fingerprint,
    environment_parts,
    key_of,
    without_timings,
)
from bench.runner.phases.context import PhaseContext
from bench.runner.phases.lanes import run_lanes
from bench.runner.phases.suite import run_batch, unstarted_rows
from bench.runner.plan import (
    Batch,
    RunConfig,
    estimate_run_s,
    outcome_only,
    scenario_subsets,
)
from bench.runner.workers import SPAWN_EST_S
from scenarios import Scenario

OUTCOME_ROUND = 0  # the round number of every outcome-phase row


@dataclasses.dataclass(frozen=True)
class Cell:
    engine: str
    scenario: str
    latency: str
    est_run_s: float


def outcome_cells(config: RunConfig, scenarios: Mapping[str, Scenario]) -> list[Cell]:
    """The cells this phase judges, in the configured order (see the module docstring)."""
    reduced = set(outcome_only(config.engines))
    only = scenario_subsets(config.engines)
    cells = []
    for engine in config.engines:
        for name in config.scenarios:
            scenario = scenarios[name]
            if not scenario.is_fault:
                continue
            if scenario.is_performance and engine not in reduced:
                continue  # timed in the suite
            if engine in only and name not in only[engine]:
                continue
            for latency in config.latencies:
                cells.append(Cell(engine, name, latency, estimate_run_s(scenario, latency)))
    return cells


def first_runs(config: RunConfig) -> int:
    """Runs per cell: ``--repeat`` if given, else ``fault_repeat``."""
    return config.repeat if config.repeat is not None else config.fault_repeat


def confirm_runs(config: RunConfig) -> int:
    """More runs for a cell whose run missed its expectation (none under ``--repeat``)."""
    return 0 if config.repeat is not None else config.fault_confirm


def runs_missing(config: RunConfig, scenarios: Mapping[str, Scenario], rows: list[Any]) -> int:
    """Outcome cells' first runs that have no row (crashed rows count as missing, as the
    suite's do): what ``--resume`` would run again."""
    done = finished_repeats([r for r in rows if r.round == OUTCOME_ROUND])
    first = first_runs(config)
    missing = 0
    for cell in outcome_cells(config, scenarios):
        finished = done.get((cell.engine, cell.scenario, cell.latency, OUTCOME_ROUND), set())
        missing += sum(1 for i in range(first) if i not in finished)
    return missing


def run(ctx: PhaseContext) -> None:
    """Judge every outcome cell that has no finished row yet (``--resume``: only those)."""
    cells = outcome_cells(ctx.config, ctx.scenarios)
    if not cells:
        return
    config = ctx.config
    rows = [r for r in ctx.store.rows(RUNS) if r.round == OUTCOME_ROUND]
    done = finished_repeats(rows)
    missed = {
        (r.engine, r.scenario, r.latency) for r in rows if r.phase == "timed" and not r.expect_ok
    }
    first, confirm = first_runs(config), confirm_runs(config)
    by_engine: dict[str, list[Cell]] = defaultdict(list)
    for cell in cells:
        by_engine[cell.engine].append(cell)
    est_by_engine = {e: sum(c.est_run_s for c in cs) * first for e, cs in by_engine.items()}
    lanes = max(1, min(config.outcome_lanes, len(by_engine)))
    total_est = sum(est_by_engine.values()) / lanes + len(by_engine) * SPAWN_EST_S / lanes
    ctx.progress.phase("outcomes", total_est, len(cells) * first)
    ctx.progress.message(
        f"outcome phase: {len(cells)} fault cells of {len(by_engine)} engines, "
        f"{first} run each (+{confirm} when one misses its expectation), {lanes} lanes"
    )

    def engine_cells(lane_ctx: PhaseContext, engine: str) -> None:
        try:
            _engine_cells(lane_ctx, by_engine[engine], done, missed, first, confirm)
        finally:
            ctx.workers.close(engine)

    longest_first = sorted(by_engine, key=lambda e: -est_by_engine[e])
    run_lanes(ctx, longest_first, lanes, engine_cells)


def _engine_cells(
    ctx: PhaseContext,
    cells: list[Cell],
    done: dict[tuple[str, str, str, int], set[int]],
    missed: set[tuple[str, str, str]],
    first: int,
    confirm: int,
) -> None:
    """One engine's cells in one worker: each cell's first runs, then its confirmations if
    a run missed its expectation; a cell with no row yet is taken from the results cache
    when it holds it, and kept there when it was measured whole."""
    for cell in cells:
        key = (cell.engine, cell.scenario, cell.latency)
        finished = done.get((*key, OUTCOME_ROUND), set())
        cached = ctx.cache.enabled and cached_engine(cell.engine)
        fresh = cached and not finished and key not in missed
        parts = _cache_parts(ctx, cell, first, confirm) if fresh else None
        entry_key = key_of(parts) if parts is not None else ""
        entry = ctx.cache.get("outcomes", entry_key) if parts is not None else None
        if entry is not None:
            for row in entry["value"]:
                ctx.store.append(RUNS, without_timings(row, entry["provenance"]))
            ctx.outcome.reused_runs += len(entry["value"])
            ctx.progress.advance(cell.est_run_s * first, first)
            continue
        todo = tuple(i for i in range(first) if i not in finished)
        rows = _play(ctx, cell, todo) if todo else []
        if confirm and (key in missed or any(not row.get("expect_ok") for row in rows)):
            more = tuple(i for i in range(first, first + confirm) if i not in finished)
            if more:
                rows += _play(ctx, cell, more)
        if parts is not None and cacheable(rows):
            ctx.cache.put("outcomes", entry_key, parts, rows)


def _cache_parts(ctx: PhaseContext, cell: Cell, first: int, confirm: int) -> dict[str, Any]:
    """What a cell's outcome depends on: the results cache's key parts (``bench.runner.cache``)."""
    config = ctx.config
    return {
        "phase": "outcomes",
        "engine": cell.engine,
        "scenario": ctx.scenarios[cell.scenario].model_dump(mode="json"),
        "latency": cell.latency,
        "transport": config.transport,
        "runs": first,
        "confirm": confirm,
        "seed": config.seed,
        "handlers": list(ctx.workers.handler_args),
        "code": code_fingerprint(),
        "environment": environment_parts(ctx.workers.packages_of(cell.engine)),
    }


def _play(ctx: PhaseContext, cell: Cell, repeats: tuple[int, ...]) -> list[dict[str, Any]]:
    batch = Batch(
        OUTCOME_ROUND, cell.engine, cell.scenario, cell.latency, 0, repeats, cell.est_run_s
    )
    ctx.progress.describe(f"{cell.engine} · {cell.scenario}")
    worker = ctx.workers.worker_for(cell.engine, ctx.config.rounds - 1, footprint=False)
    if worker is None:
        unstarted_rows(ctx, batch, OUTCOME_ROUND)
        ctx.progress.advance(batch.est_s, len(repeats))
        return []
    return run_batch(ctx, worker, batch)
