"""The suite: every timed engine × happy-path scenario, round by round, each run a runs.jsonl
row at once (the fault scenarios are judged in ``bench.runner.phases.outcomes``).

A worker that dies or stops answering is killed; the runs its batch still owed become error
rows (``crashed: true``, with its stderr tail) and the run goes on with a fresh worker. A
batch whose worker cannot start (or whose environment could not be built:
``env_unavailable``) becomes error rows with the reason. The TTFT phase plays its batches
the same way (``run_batch(..., ttft=True)``).
"""

from __future__ import annotations

import time
from typing import Any

from bench.errors import WorkerError
from bench.results.files import RUNS, TTFT
from bench.results.folder import finished_repeats
from bench.runner.metadata import machine_cores
from bench.runner.phases.context import PhaseContext
from bench.runner.plan import Batch, batch_timeout_s, build_plan
from bench.runner.process import TAIL_CHARS, WorkerProcess
from bench.runner.workers import SPAWN_EST_S


def run(ctx: PhaseContext) -> None:
    """The suite's batches (those that have no row yet), in the plan's interleaved order."""
    config = ctx.config
    done = finished_repeats(ctx.store.rows(RUNS))
    plan = build_plan(config, ctx.scenarios, done)
    ctx.outcome.skipped_runs = sum(len(v) for v in done.values())
    total_runs = sum(b.warmup + len(b.repeats) for b in plan.batches)
    spawns = len({(b.engine, b.round) for b in plan.batches})
    # a round's workers start side by side, one per core (WorkerPool.prespawn)
    spawn_s = spawns * SPAWN_EST_S / machine_cores()
    ctx.progress.phase("suite", plan.est_s + spawn_s, total_runs)
    current_round = None
    last_round = config.rounds - 1
    for batch in plan.batches:
        if batch.round != current_round:
            ctx.workers.close_all()
            current_round = batch.round
            engines = [b.engine for b in plan.batches if b.round == current_round]
            ctx.workers.prespawn(engines, current_round, machine_cores())
        latency = f" · {batch.latency}" if len(config.latencies) > 1 else ""
        ctx.progress.describe(
            f"round {batch.round + 1}/{config.rounds} · {batch.engine} · {batch.scenario}{latency}"
        )
        worker = ctx.workers.worker_for(batch.engine, batch.round)
        if worker is None:
            unstarted_rows(ctx, batch, batch.round)
            ctx.progress.advance(batch.est_s, batch.warmup + len(batch.repeats))
            continue
        run_batch(ctx, worker, batch)
    if current_round is not None and current_round != last_round:
        ctx.workers.close_all()


def _ids(ctx: PhaseContext, batch: Batch, phase: str, index: int) -> dict[str, Any]:
    return {
        "engine": batch.engine,
        "scenario": batch.scenario,
        "latency": batch.latency,
        "transport": ctx.config.transport,
        "round": batch.round,
        "repeat": index,
        "phase": phase,
    }


def run_batch(
    ctx: PhaseContext, worker: WorkerProcess, batch: Batch, *, ttft: bool = False
) -> list[dict[str, Any]]:
    """One batch into runs.jsonl, or (``ttft``) a TTFT batch into ttft.jsonl; the timed rows
    the worker sent."""
    target = TTFT if ttft else RUNS
    outcome = ctx.outcome
    pending = list(batch.repeats)
    received = 0
    timed: list[dict[str, Any]] = []
    command: dict[str, Any] = {
        "op": "batch",
        "scenario": batch.scenario,
        "latency": batch.latency,
        "warmup": batch.warmup,
        "repeats": list(batch.repeats),
    }
    if ttft:
        command["stream_tokens"] = True
    try:
        worker.send(command)
        timeout = batch_timeout_s(batch.est_run_s)
        while True:
            message = worker.receive(timeout)
            if message["type"] == "batch_done":
                break
            if message["type"] != "run":
                continue
            phase, index = message["phase"], int(message["index"])
            row = {**message["row"], **_ids(ctx, batch, phase, index)}
            ctx.store.append(target, row)
            received += 1
            if phase == "timed":
                timed.append(row)
                if index in pending:
                    pending.remove(index)
                if ttft:
                    outcome.ttft_runs += 1
                else:
                    outcome.timed_runs += 1
            else:
                outcome.warmup_runs += 1
            ctx.progress.advance(batch.est_run_s)
    except WorkerError as exc:
        tail = worker.stderr_tail()
        ctx.workers.drop(batch.engine)
        reason = f"{exc}\n--- stderr tail ---\n{tail}" if tail else str(exc)
        crash_rows(ctx, batch, pending, reason, ttft=ttft)
        ctx.progress.message(
            f"worker for {batch.engine} lost during {batch.scenario} "
            f"(round {batch.round + 1}): {exc}; {len(pending)} runs recorded as errors"
        )
        left = batch.warmup + len(batch.repeats) - received
        ctx.progress.advance(left * batch.est_run_s, left)
    finally:
        ctx.store.sync()
    return timed


def unstarted_rows(ctx: PhaseContext, batch: Batch, round_no: int, *, ttft: bool = False) -> None:
    """The batch's runs as error rows: its worker could not start (or its environment
    could not be built: ``env_unavailable``)."""
    reason = ctx.workers.spawn_failure(batch.engine, round_no)
    if ctx.workers.env_failure(batch.engine) is not None:
        crash_rows(ctx, batch, list(batch.repeats), reason, ttft=ttft, why="env_unavailable")
    else:
        crash_rows(ctx, batch, list(batch.repeats), f"worker could not start: {reason}", ttft=ttft)


def crash_rows(
    ctx: PhaseContext,
    batch: Batch,
    indices: list[int],
    reason: str,
    *,
    ttft: bool = False,
    why: str = "worker_crash",
) -> None:
    """Error rows (``crashed: true``) for the runs ``indices`` of ``batch``."""
    for index in indices:
        ctx.store.append(
            TTFT if ttft else RUNS,
            {
                **_ids(ctx, batch, "timed", index),
                "status": "error",
                "termination": why,
                "error": reason[-TAIL_CHARS * 2 :],
                "crashed": True,
                "expect_ok": False,
                "ended_at": time.time(),
            },
        )
    if ttft:
        ctx.outcome.crashed_ttft_runs += len(indices)
    else:
        ctx.outcome.crashed_runs += len(indices)
