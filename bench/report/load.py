"""The one adapter: a run directory written by ``schedbench run`` → a ``RunData``.

Reads (formats in docs/measurement.md and docs/debuggability.md):

- ``meta.json``         → ``RunData.meta`` (and the scenario directory of the run)
- ``runs.jsonl``        → ``runs`` (the latest *timed* rows; crashed rows become ``error``)
- scenario YAML files   → ``scenarios`` (descriptions, tags, base expectations)
- ``footprint.csv``     → ``footprint`` (the pristine-interpreter import probe per engine)
- ``throughput.csv``    → ``throughput``
- ``debuggability.csv`` → ``debuggability`` (when the run was scored)
- ``ttft.jsonl``        → ``ttft`` (the TTFT phase: the latest timed rows)
- the repository        → ``code_size`` (counted now, by ``bench.report.codesize``)

Anything missing or unreadable becomes ``None`` plus a note for the caveats, never an
exception: a report of a partial run is still a report.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from bench.report import codesize
from bench.report.model import FAULT_TAGS, RunData
from bench.results import (
    FOOTPRINT_CSV,
    META,
    RUNS,
    THROUGHPUT_CSV,
    latest,
    read_jsonl,
    timed_rows,
)

TTFT_JSONL = "ttft.jsonl"
TTFT_KEY = ("engine", "scenario", "latency", "transport", "repeat", "phase")

DEBUG_CSV = "debuggability.csv"
REPO_ROOT = Path(__file__).resolve().parents[2]


class NotARunDir(ValueError):
    """The directory holds no ``runs.jsonl``."""


_RUN_FIELDS = (
    "engine",
    "scenario",
    "status",
    "termination",
    "wall_ms",
    "cpu_ms",
    "overhead_ms",
    "tool_ms",
    "mock_latency_ms",
    "llm_calls",
    "tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "ttft_ms",
    "final_answer",
    "error",
    "transport",
    "expect_ok",
    "request_prompt_tokens",
    "tools",
    "round",
    "repeat",
)


def _runs(rows: list[dict[str, Any]]) -> pd.DataFrame:
    records = []
    for row in timed_rows(rows):
        rec = {name: row.get(name) for name in _RUN_FIELDS}
        rec["latency_profile"] = row.get("latency") or "zero"
        if row.get("crashed"):
            rec["status"] = "error"
            rec["error"] = rec.get("error") or "the worker process crashed during this run"
            rec["termination"] = rec.get("termination") or "worker_crash"
        records.append(rec)
    return pd.DataFrame(records)


def _ttft(rows: list[dict[str, Any]]) -> pd.DataFrame | None:
    records = []
    for row in latest(rows, TTFT_KEY):
        if row.get("phase") != "timed":
            continue
        records.append(
            {
                "engine": row.get("engine"),
                "scenario": row.get("scenario"),
                "latency_profile": row.get("latency"),
                "status": "error" if row.get("crashed") else row.get("status"),
                "ttft_ms": row.get("ttft_ms"),
                "floor_ttft_ms": row.get("floor_ttft_ms"),
            }
        )
    return pd.DataFrame(records) if records else None


def _scenarios(meta: dict[str, Any], names: set[str], notes: list[str]) -> pd.DataFrame | None:
    from scenarios import ScenarioError, load_scenarios

    scenario_dir = (meta.get("config") or {}).get("scenario_dir")
    try:
        library = load_scenarios(scenario_dir)
    except (ScenarioError, OSError) as exc:
        notes.append(f"Scenario files could not be read ({exc}); fault scenarios unknown.")
        return None
    rows = []
    for name in sorted(names):
        scenario = library.get(name)
        if scenario is None:
            notes.append(f"Scenario '{name}' ran but its file is gone; treated as happy-path.")
            continue
        tags = tuple(scenario.tags)
        rows.append(
            {
                "scenario": name,
                "description": " ".join(scenario.description.split()),
                "tags": tags,
                "fault": bool(FAULT_TAGS & set(tags)),
                "expect_status": scenario.expect.status,
                "expect_termination": scenario.expect.termination,
                "expect_final_contains": scenario.expect.final_contains,
                "expect_tools": (
                    None if scenario.expect.tools is None else tuple(scenario.expect.tools)
                ),
            }
        )
    return pd.DataFrame(rows) if rows else None


def _read_csv(path: Path, what: str, notes: list[str]) -> pd.DataFrame | None:
    if not path.exists():
        notes.append(f"{path.name} not found: {what} not measured in this run.")
        return None
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        notes.append(f"{path.name} unreadable ({exc}): {what} left out.")
        return None
    return frame if not frame.empty else None


def _first(frame: pd.DataFrame, *columns: str) -> pd.Series:
    """The first of ``columns`` that has values, row by row."""
    out = pd.Series([math.nan] * len(frame), index=frame.index, dtype=float)
    for column in columns:
        if column in frame:
            out = out.fillna(pd.to_numeric(frame[column], errors="coerce"))
    return out


def _footprint(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    if frame is None or "engine" not in frame:
        return None
    out = pd.DataFrame({"engine": frame["engine"].astype(str)})
    # the pristine-interpreter probe (what a service importing the engine pays) first,
    # the measurement worker's numbers (on top of the harness) as a fallback
    out["import_ms"] = _first(frame, "stack_import_ms", "engine_import_ms")
    out["modules"] = _first(frame, "stack_modules", "engine_modules")
    out["rss_mb"] = _first(frame, "stack_rss_mb", "rss_after_import_mb")
    out["peak_rss_mb"] = _first(frame, "peak_rss_mb")
    out["stack"] = frame.get("stack")
    return out


def _throughput(frame: pd.DataFrame | None) -> pd.DataFrame | None:
    if frame is None or "engine" not in frame:
        return None
    if "crashed" in frame:
        frame = frame[~frame["crashed"].astype(str).str.lower().isin(("true", "1"))]
    return pd.DataFrame(
        {
            "engine": frame["engine"].astype(str),
            "latency_profile": frame.get("latency", "zero"),
            "concurrency": pd.to_numeric(frame["concurrency"], errors="coerce"),
            "runs_per_s": _first(frame, "runs_per_s"),
            "p50_ms": _first(frame, "latency_p50_ms", "p50_ms"),
            "p95_ms": _first(frame, "latency_p95_ms", "p95_ms"),
            "p99_ms": _first(frame, "latency_p99_ms", "p99_ms"),
            "cpu_ms_per_run": _first(frame, "cpu_ms_per_run"),
            "errors": _first(frame, "errors"),
            "scenario": frame.get("scenario"),
        }
    )


def load_run_dir(run_dir: Path | str, *, repo_root: Path | None = REPO_ROOT) -> RunData:
    """Read a run directory (see the module docstring); ``NotARunDir`` if it holds no runs."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotARunDir(f"{run_dir}: not a directory")
    if not (run_dir / RUNS).exists():
        raise NotARunDir(f"{run_dir}: no {RUNS} (not a schedbench run directory)")
    notes: list[str] = []
    meta: dict[str, Any] = {}
    try:
        meta = json.loads((run_dir / META).read_text(encoding="utf-8"))
    except FileNotFoundError:
        notes.append("meta.json not found: environment unknown.")
    except ValueError as exc:
        notes.append(f"meta.json unreadable ({exc}): environment unknown.")
    runs = _runs(read_jsonl(run_dir / RUNS))
    if runs.empty:
        raise NotARunDir(f"{run_dir}: {RUNS} holds no timed runs")
    if meta and not meta.get("complete", True):
        notes.append("The run did not complete (meta.json: complete = false): numbers are partial.")
    if (meta.get("config") or {}).get("quick"):
        notes.append("A --quick run: one round and few repeats; a smoke test, not a measurement.")
    scenarios = _scenarios(meta, set(runs["scenario"].dropna()), notes)
    footprint = _footprint(_read_csv(run_dir / FOOTPRINT_CSV, "import footprint", notes))
    throughput = _throughput(_read_csv(run_dir / THROUGHPUT_CSV, "throughput", notes))
    debug = _read_csv(run_dir / DEBUG_CSV, "debuggability", notes)
    ttft = _ttft(read_jsonl(run_dir / TTFT_JSONL))
    code = codesize.measure(repo_root) if repo_root is not None else None
    return RunData(
        runs=runs,
        scenarios=scenarios,
        meta=meta,
        footprint=footprint,
        throughput=throughput,
        debuggability=debug,
        code_size=code,
        ttft=ttft,
        run_dir=run_dir,
        notes=tuple(notes),
    )
