"""What an engine costs before its first request: import time, modules, memory.

Two complementary measurements, both in fresh processes:

- **stack probes** (``kind: "stack"``) — a pristine interpreter imports only the public entry
  points a service using the engine would import (``ENGINE_STACKS``), nothing of the
  harness: the import cost a user pays. Repeated in several fresh interpreters; engines
  sharing a stack (the three AgentExecutor engines) share its probes.
- **worker footprints** (``kind: "worker"``) — every measurement worker reports the import
  of the engine *on top of the harness* (mock, scenarios, pydantic are already loaded), the
  module count, and its peak RSS after one cold run of the reference scenario.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from typing import Any

from bench.engines.registry import REGISTRY

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
    env = dict(os.environ)
    for var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
        env[var] = "false"
    env.setdefault("OPENAI_API_KEY", "sk-schedbench-mock")
    return env


def probe_stack(
    modules: Iterable[str], warmup: str = "", timeout_s: float = 120.0
) -> dict[str, Any]:
    """Import ``modules`` in a pristine interpreter, then run ``warmup`` (what the default
    configuration loads on first use); the import time, module count and RSS."""
    modules = list(modules)
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, warmup, *modules],
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
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["status"] = "ok"
    result["stack"] = modules
    return result


def build_footprint_table(rows: list[dict[str, Any]]) -> Any:
    """footprint.csv: one row per engine, medians over probes and workers."""
    import pandas as pd

    columns = [
        "engine",
        "stack",
        "stack_probes",
        "stack_import_ms",
        "stack_import_ms_min",
        "stack_import_ms_max",
        "stack_modules",
        "stack_rss_mb",
        "workers",
        "harness_modules",
        "engine_import_ms",
        "engine_import_ms_min",
        "engine_modules",
        "modules_after_first_run",
        "rss_after_import_mb",
        "peak_rss_mb",
        "first_run_ms",
        "first_run_status",
    ]
    frame = pd.DataFrame(rows)
    if frame.empty or "engine" not in frame:
        return pd.DataFrame(columns=columns)
    out = []
    for engine in dict.fromkeys(frame["engine"]):
        mine = frame[frame["engine"] == engine]
        entry: dict[str, Any] = {"engine": engine}
        stack = mine[(mine["kind"] == "stack") & (mine["status"] == "ok")]
        if not stack.empty:
            entry["stack"] = " ".join(stack["stack"].iloc[0])
            entry["stack_probes"] = len(stack)
            entry["stack_import_ms"] = stack["import_ms"].median()
            entry["stack_import_ms_min"] = stack["import_ms"].min()
            entry["stack_import_ms_max"] = stack["import_ms"].max()
            entry["stack_modules"] = stack["modules"].median()
            entry["stack_rss_mb"] = (stack["rss_after_mb"] - stack["rss_before_mb"]).median()
        workers = mine[mine["kind"] == "worker"]
        if not workers.empty:
            entry["workers"] = len(workers)
            entry["harness_modules"] = workers["harness_modules"].median()
            entry["engine_import_ms"] = workers["engine_import_ms"].median()
            entry["engine_import_ms_min"] = workers["engine_import_ms"].min()
            entry["engine_modules"] = (
                workers["modules_after_import"] - workers["harness_modules"]
            ).median()
            entry["modules_after_first_run"] = workers["modules_after_first_run"].median()
            entry["rss_after_import_mb"] = workers["rss_after_import_mb"].median()
            entry["peak_rss_mb"] = workers["peak_rss_mb"].median()
            if "first_run_ms" in workers:
                entry["first_run_ms"] = workers["first_run_ms"].median()
            if "first_run_status" in workers:
                statuses = workers["first_run_status"].dropna()
                entry["first_run_status"] = statuses.mode().iloc[0] if not statuses.empty else None
        out.append(entry)
    return pd.DataFrame(out, columns=columns)
