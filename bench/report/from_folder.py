"""The one adapter: a run directory written by ``schedbench run`` → a ``RunData``.

The run folder is read by ``bench.results.folder.load_run_folder`` (meta.json checked, every
row typed, corrupt lines counted); this module turns it into the report's frames:

- ``meta.json``         → ``RunData.meta`` (and the scenario directory of the run)
- ``runs.jsonl``        → ``runs`` (the latest *timed* rows; crashed rows become ``error``)
- scenario YAML files   → ``scenarios`` (descriptions, tags, base expectations)
- ``footprint.jsonl``   → ``footprint`` (per engine: the pristine-interpreter import probe,
  ``bench.results.metrics.footprint_by_engine``)
- ``throughput.jsonl``  → ``throughput`` (``bench.results.metrics.throughput_level``)
- ``debuggability.csv`` → ``debuggability`` (when the run was scored)
- ``ttft.jsonl``        → ``ttft`` (the TTFT phase: the latest timed rows)
- ``catalogue.json``    → ``catalogue`` (the customisation catalogue, ``schedbench catalogue``)
- ``load.jsonl``        → ``load_levels``, ``mock_ceilings`` (``bench.results.metrics``)
- ``multimodel.json``   → ``multimodel`` (the multi-model check, when it ran)
- ``meta.json``'s ``code_size`` → ``code_size`` (counted when the run was made, by
  ``bench.engines.codesize``: the report never reads the working tree)

A corrupt meta.json is an error (``bench.results.folder.BadMeta``, one line); anything missing
becomes ``None`` plus a note for the caveats, and so do corrupt rows (counted, with their
line numbers): a report of a partial run is still a report.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from bench.errors import NotARunFolder
from bench.model.scenarios import happy_paths
from bench.report.frames import RUN_COLUMNS, RunData
from bench.results import metrics
from bench.results.files import FOOTPRINT, THROUGHPUT
from bench.results.folder import RunFolder, load_run_folder
from bench.results.rows import RunRow, TtftRow

# the report's run columns, read from the row of the same name (latency_profile is the row's latency)
_RUN_FIELDS = tuple(name for name in RUN_COLUMNS if name != "latency_profile")


def _listed(value: Any) -> Any:
    """A row's tuple as the list the frame holds (tools, token counts, failures)."""
    return list(value) if isinstance(value, tuple) else value


def _runs(rows: list[RunRow]) -> pd.DataFrame:
    records = []
    for row in rows:
        rec = {name: _listed(getattr(row, name)) for name in _RUN_FIELDS}
        rec["latency_profile"] = row.latency or "zero"
        if row.crashed:
            rec["status"] = "error"
            rec["error"] = rec.get("error") or "the worker process crashed during this run"
            rec["termination"] = rec.get("termination") or "worker_crash"
        records.append(rec)
    return pd.DataFrame(records)


def _ttft(rows: list[TtftRow]) -> pd.DataFrame | None:
    records = [
        {
            "engine": row.engine,
            "scenario": row.scenario,
            "latency_profile": row.latency,
            "status": "error" if row.crashed else row.status,
            "ttft_ms": row.ttft_ms,
            "floor_ttft_ms": row.floor_ttft_ms,
            "scripted_ttft_ms": row.scripted_ttft_ms,
            "ttft_overhead_ms": row.ttft_overhead_ms,
        }
        for row in rows
    ]
    return pd.DataFrame(records) if records else None


def _scenarios(meta: dict[str, Any], names: set[str], notes: list[str]) -> pd.DataFrame | None:
    from scenarios import ScenarioError, load_scenarios

    scenario_dir = (meta.get("config") or {}).get("scenario_dir")
    try:
        library = load_scenarios(scenario_dir)
    except (ScenarioError, OSError) as exc:
        notes.append(f"Scenario files could not be read ({exc}); fault scenarios unknown.")
        return None
    happy = happy_paths(library, names)
    rows = []
    for name in sorted(names):
        scenario = library.get(name)
        if scenario is None:  # a happy path (happy_paths): RunData gives it a row
            notes.append(f"Scenario '{name}' ran but its file is gone; treated as happy-path.")
            continue
        tags = tuple(scenario.tags)
        rows.append(
            {
                "scenario": name,
                "description": " ".join(scenario.description.split()),
                "tags": tags,
                "fault": scenario.is_fault,
                "performance": name in happy,
                "fault_kind": scenario.fault_kind,
                "expect_outcome": scenario.expect.outcome(),
                "expect_status": scenario.expect.status,
                "expect_termination": scenario.expect.termination,
                "expect_final_contains": scenario.expect.final_contains,
                "expect_tools": (
                    None if scenario.expect.tools is None else tuple(scenario.expect.tools)
                ),
            }
        )
    return pd.DataFrame(rows) if rows else None


def _reused_note(rows: list[RunRow]) -> str | None:
    """What the results cache gave the run (``reused_from`` rows), or None."""
    reused = [row for row in rows if row.reused_from]
    if not reused:
        return None
    cells = {(row.engine, row.scenario, row.latency) for row in reused}
    sources = sorted({str(row.reused_from) for row in reused})
    return (
        f"{len(reused):,} runs of {len(cells):,} fault cells were taken from the results cache: "
        f"the same code, environments and scenarios were measured at {', '.join(sources)}. "
        "Their outcomes, calls and tokens count here; their timings were not measured in this "
        "run and are left out (`schedbench run --no-cache` measures them again)."
    )


def _first(frame: pd.DataFrame, *columns: str) -> pd.Series:
    """The first of ``columns`` that has values, row by row."""
    out = pd.Series([math.nan] * len(frame), index=frame.index, dtype=float)
    for column in columns:
        if column in frame:
            out = out.fillna(pd.to_numeric(frame[column], errors="coerce"))
    return out


def _missing(folder: RunFolder, name: str, what: str, notes: list[str]) -> bool:
    if (folder.directory / name).exists():
        return False
    notes.append(f"{name} not found: {what} not measured in this run.")
    return True


def _footprint(folder: RunFolder, notes: list[str]) -> pd.DataFrame | None:
    if _missing(folder, FOOTPRINT, "import footprint", notes) or not folder.footprint:
        return None
    frame = pd.DataFrame(metrics.footprint_by_engine(folder.footprint))
    out = pd.DataFrame({"engine": frame["engine"].astype(str)})
    # the pristine-interpreter probe (what a service importing the engine pays) first,
    # the measurement worker's numbers (on top of the harness) as a fallback
    out["import_ms"] = _first(frame, "stack_import_ms", "engine_import_ms")
    out["modules"] = _first(frame, "stack_modules", "engine_modules")
    out["rss_mb"] = _first(frame, "stack_rss_mb", "rss_after_import_mb")
    out["peak_rss_mb"] = _first(frame, "peak_rss_mb")
    out["stack"] = frame.get("stack")
    return out


def _throughput(folder: RunFolder, notes: list[str]) -> pd.DataFrame | None:
    if _missing(folder, THROUGHPUT, "throughput", notes):
        return None
    levels = [metrics.throughput_level(row) for row in folder.throughput if not row.crashed]
    if not levels:
        return None
    frame = pd.DataFrame(levels)
    return pd.DataFrame(
        {
            "engine": frame["engine"].astype(str),
            "latency_profile": frame["latency"],
            "concurrency": frame["concurrency"],
            "runs_per_s": _first(frame, "completed_per_s"),  # failed runs are not throughput
            "p50_ms": _first(frame, "latency_p50_ms"),
            "p95_ms": _first(frame, "latency_p95_ms"),
            "p99_ms": _first(frame, "latency_p99_ms"),
            "cpu_ms_per_run": _first(frame, "cpu_ms_per_run"),
            "errors": _first(frame, "errors"),
            "runs": _first(frame, "runs"),
            "scenario": frame["scenario"],
        }
    )


def _debuggability(folder: RunFolder, notes: list[str]) -> pd.DataFrame | None:
    if folder.debuggability is None:
        notes.append("debuggability.csv not found: debuggability not measured in this run.")
        return None
    frame = pd.DataFrame([row.model_dump() for row in folder.debuggability])
    return frame if not frame.empty else None


def load_run_dir(run_dir: Path | str) -> RunData:
    """Read a run directory (see the module docstring); ``NotARunFolder`` if it holds no
    runs, ``BadMeta`` if its meta.json is corrupt (both: one line)."""
    folder = load_run_folder(run_dir)
    notes = list(folder.notes)
    skipped = folder.skipped_summary()
    if skipped:
        notes.append(f"{skipped}: left out of every number in this report.")
    meta = folder.meta
    runs = _runs(folder.timed_runs)
    if runs.empty:
        raise NotARunFolder(f"{folder.directory}: runs.jsonl holds no timed runs")
    if meta and not meta.get("complete", True):
        notes.append("The run did not complete (meta.json: complete = false): numbers are partial.")
    if folder.config.get("quick"):
        notes.append("A --quick run: one round and few repeats; a smoke test, not a measurement.")
    reused = _reused_note(folder.timed_runs)
    if reused:
        notes.append(reused)
    scenarios = _scenarios(meta, set(runs["scenario"].dropna()), notes)
    footprint = _footprint(folder, notes)
    throughput = _throughput(folder, notes)
    debug = _debuggability(folder, notes)
    ttft = _ttft(folder.timed_ttft)
    if folder.catalogue is None:
        notes.append("catalogue.json not found: customisation and false simplicity not measured.")
    code = pd.DataFrame(meta.get("code_size") or []) if meta.get("code_size") else None
    if code is None:
        notes.append("meta.json has no code sizes (a run made before they were recorded).")
    return RunData(
        runs=runs,
        scenarios=scenarios,
        meta=meta,
        footprint=footprint,
        throughput=throughput,
        debuggability=debug,
        code_size=code,
        ttft=ttft,
        profile=tuple(folder.profile),
        catalogue=folder.catalogue,
        load_levels=tuple(metrics.load_levels(folder.load, seed=folder.seed)),
        mock_ceilings=tuple(metrics.mock_ceilings(folder.load)),
        multimodel=folder.multimodel,
        versions=tuple(folder.versions or ()),
        run_dir=folder.directory,
        notes=tuple(notes),
    )
