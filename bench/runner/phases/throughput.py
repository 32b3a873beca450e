"""Throughput: closed-loop concurrency levels of the reference scenario, one throughput.jsonl
row per engine × latency profile × level (a lost worker costs its level: ``crashed: true``).
By default on the bare loop and the headline pairs (``throughput_engines``); every engine
with ``--throughput-engines all``."""

from __future__ import annotations

from bench.errors import WorkerError
from bench.results.files import THROUGHPUT, THROUGHPUT_KEY
from bench.results.rows import key_of, latest
from bench.runner.phases.context import PhaseContext
from bench.runner.plan import ceil_div, estimate_run_s, rotate, throughput_engines
from bench.runner.process import TAIL_CHARS


def run(ctx: PhaseContext) -> None:
    config = ctx.config
    scenario = config.throughput_scenario or ctx.reference
    assert scenario is not None, "the run has a reference scenario"
    done = {
        key_of(row, THROUGHPUT_KEY)
        for row in latest(ctx.store.rows(THROUGHPUT), THROUGHPUT_KEY)
        if not row.crashed
    }
    tasks = []
    for profile in config.throughput_profiles:
        run_s = estimate_run_s(ctx.scenarios[scenario], profile.latency)
        for i, level in enumerate(config.concurrency):
            for engine in rotate(throughput_engines(config), i):
                key = (engine, scenario, profile.latency, config.transport, level)
                if key in done:
                    continue
                waves = ceil_div(profile.min_runs, level)
                est = max(profile.window_s, waves * run_s) + profile.warmup_runs * run_s
                tasks.append((profile, level, engine, est))
    if not tasks:
        return
    ctx.progress.phase("throughput", sum(t[3] for t in tasks), len(tasks), "levels")
    last_round = config.rounds - 1
    for profile, level, engine, est in tasks:
        ctx.progress.describe(f"{engine} · {profile.latency} · concurrency {level}")
        ids = {
            "engine": engine,
            "scenario": scenario,
            "latency": profile.latency,
            "transport": config.transport,
            "concurrency": level,
        }
        worker = ctx.workers.worker_for(engine, last_round)
        try:
            if worker is None:
                raise WorkerError(
                    ctx.workers.env_failure(engine)
                    or "worker could not start: " + ctx.workers.spawn_failure(engine, last_round)
                )
            worker.send(
                {
                    "op": "throughput",
                    "scenario": scenario,
                    "latency": profile.latency,
                    "concurrency": level,
                    "window_s": profile.window_s,
                    "min_runs": profile.min_runs,
                    "warmup_runs": profile.warmup_runs,
                }
            )
            message = worker.receive(120.0 + 10 * est)
            if message["type"] != "throughput":
                raise WorkerError(f"worker {worker.pid} said {message['type']!r}, not throughput")
            ctx.store.append(THROUGHPUT, {**message["row"], **ids})
            ctx.outcome.throughput_levels += 1
        except WorkerError as exc:
            tail = worker.stderr_tail() if worker is not None else ""
            ctx.workers.drop(engine)
            ctx.store.append(
                THROUGHPUT,
                {**ids, "crashed": True, "error": f"{exc}\n{tail}".strip()[-TAIL_CHARS * 2 :]},
            )
            ctx.outcome.crashed_levels += 1
            ctx.progress.message(f"throughput of {engine} at {level} lost: {exc}")
        finally:
            ctx.store.sync()
        ctx.progress.advance(est)
