"""What an engine costs before its first request: import time, modules, memory.

Two complementary measurements, both in fresh processes:

- **stack probes** (``kind: "stack"``) — a pristine interpreter imports only the public entry
  points a service using the engine would import (``ENGINE_STACKS``), nothing of the
  harness: the import cost a user pays. Repeated in several fresh interpreters; engines
  sharing a stack (the three AgentExecutor engines) share its probes.
- **worker footprints** (``kind: "worker"``) — every measurement worker reports the import
  of the engine *on top of the harness* (mock, scenarios, pydantic are already loaded), the
  module count, and its peak RSS after one cold run of the reference scenario.

The stack probes are the run's first phase (``run``); the worker footprints arrive as each
worker starts (``bench.runner.workers``). Their per-engine medians (footprint.csv) are
``bench.results.metrics.footprint_by_engine``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.engines.registry import REGISTRY
from bench.results.files import FOOTPRINT
from bench.runner.metadata import machine_cores
from bench.runner.offline import offline_env
from bench.runner.phases.context import PhaseContext
from bench.runner.plan import measured, rotate
from bench.runner.process import environment_of

# engine → the modules a service built on it imports (its framework's entry points), and
# what its default configuration loads on first use (the registry declares both)
ENGINE_STACKS: dict[str, tuple[str, ...]] = {name: s.stack for name, s in REGISTRY.items()}
ENGINE_WARMUPS: dict[str, str] = {name: s.probe_warmup for name, s in REGISTRY.items()}

_PROBE = r"""
import importlib, json, os, resource, sys, time
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
n0 = len(sys.modules)
r0 = rss()
t0 = time.perf_counter()
warmup, names = sys.argv[1], sys.argv[2:]
for name in names:
    importlib.import_module(name)
exec(warmup)
t1 = time.perf_counter()
print(json.dumps({
    "import_ms": (t1 - t0) * 1000,
    "modules": len(sys.modules) - n0,
    "modules_total": len(sys.modules),
    "rss_before_mb": r0,
    "rss_after_mb": rss(),
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}))
"""


def probe_env() -> dict[str, str]:
    return offline_env(dict(os.environ))


def probe_stack(
    modules: Iterable[str],
    warmup: str = "",
    timeout_s: float = 120.0,
    python: str = sys.executable,
) -> dict[str, Any]:
    """Import ``modules`` in a pristine ``python`` (the engine's environment's interpreter),
    then run ``warmup`` (what the default configuration loads on first use); the import
    time, module count and RSS."""
    modules = list(modules)
    try:
        done = subprocess.run(
            [python, "-c", _PROBE, warmup, *modules],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=probe_env(),
        )
    except subprocess.TimeoutExpired:
        return {
            "status": "error",
            "stack": modules,
            "error": f"import probe timed out after {timeout_s:g}s",
        }
    if done.returncode != 0:
        return {"status": "error", "stack": modules, "error": done.stderr.strip()[-2000:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["status"] = "ok"
    result["stack"] = modules
    return result


def run(ctx: PhaseContext) -> None:
    """Probe each distinct stack (imports + warm-up) in fresh interpreters of its engine's
    environment, ``footprint_processes`` times; one row per engine using it."""
    Stack = tuple[str, tuple[str, ...], str]  # environment, modules, warm-up
    stacks: dict[Stack, list[str]] = {}
    for engine in measured(ctx.config.engines):
        env = environment_of(engine)
        if engine in ENGINE_STACKS and env not in ctx.workers.env_failures:
            key = (env, ENGINE_STACKS[engine], ENGINE_WARMUPS.get(engine, ""))
            stacks.setdefault(key, []).append(engine)
    done: dict[Stack, int] = {}
    for row in ctx.store.rows(FOOTPRINT):
        if row.kind == "stack" and row.status == "ok" and row.probe_of is None:
            key = (row.environment, row.stack, row.warmup)
            done[key] = done.get(key, 0) + 1
    order = tuple(stacks)
    todo = [
        (p, stack)
        for p in range(ctx.config.footprint_processes)
        for stack in rotate(order, p)
        if done.get(stack, 0) <= p
    ]
    if not todo:
        return
    beside = max(1, min(machine_cores(), len(todo)))
    ctx.progress.phase("imports", float(len(todo)) / beside, len(todo), "probes")
    ctx.progress.describe(f"fresh interpreters import each engine's stack, {beside} at a time")

    def one(task: tuple[int, Stack]) -> dict[str, Any]:
        _, (env, modules, warmup) = task
        return probe_stack(modules, warmup, python=ctx.workers.pythons[env])

    # one probe per core: each is a lone single-threaded interpreter (spawned_beside says so)
    with ThreadPoolExecutor(max_workers=beside) as pool:
        for (probe, (env, modules, warmup)), result in zip(todo, pool.map(one, todo), strict=True):
            engines = stacks[(env, modules, warmup)]
            # the first engine's row is the probe; the others share it (probe_of)
            for i, engine in enumerate(engines):
                row = {
                    "kind": "stack",
                    "engine": engine,
                    "probe": probe,
                    "warmup": warmup,
                    "environment": env,
                    "spawned_beside": beside,
                }
                row.update(result)
                if i:
                    row["probe_of"] = engines[0]
                ctx.store.append(FOOTPRINT, row)
            ctx.progress.advance(1.0 / beside)
