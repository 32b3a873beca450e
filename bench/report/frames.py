"""The report's own data model: a run directory as a few tidy pandas frames.

Everything the report draws or judges is computed from a ``RunData``. One adapter
(``bench.report.from_folder``) fills it from the runner's files; tests fill it with synthetic
numbers. Keeping the report on this model means a change in the runner's file formats
touches the adapter only.

Frames and their columns (one row per ...):

``runs``          one timed run: ``RUN_COLUMNS``
``scenarios``     one scenario: ``SCENARIO_COLUMNS``
``footprint``     one engine: ``FOOTPRINT_COLUMNS``
``throughput``    engine x latency profile x concurrency: ``THROUGHPUT_COLUMNS``
``debuggability`` engine x debug mode x scenario: ``DEBUG_COLUMNS``
``ttft``          one run of the TTFT phase: ``TTFT_COLUMNS``
``code_size``     one measured piece of code: ``CODE_SIZE_COLUMNS``

and, not a frame, the load phase as judged by ``bench.results.metrics``: ``load_levels``
(one ``LoadLevel`` per engine × processes × offered rate) and ``mock_ceilings``.

Optional frames may be ``None`` (not measured in this run); the report then skips what
depends on them and says so. Text columns (scenario names, descriptions, final answers,
errors) come from scenario files and tools: the renderers treat them as untrusted.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.engines.registry import ENGINE_NAMES, REGISTRY, engines_where
from bench.model.scenarios import happy_paths
from bench.results.rows import RunMeasurement, RunRow, is_number, run_overhead_ms
from scenarios.schema import FAULT_TAGS as FAULT_TAGS

# one column per field of a runs.jsonl row (its description in bench.results.rows), the
# row's ``latency`` as ``latency_profile``; where the run was measured (shard, host) and the
# row's phase (always timed here) left out
_FRAME_LEAVES_OUT = ("latency", "phase", "shard", "host")
RUN_COLUMNS: dict[str, str] = {
    **{
        name: info.description or ""
        for name, info in RunRow.model_fields.items()
        if name not in _FRAME_LEAVES_OUT
    },
    "latency_profile": RunRow.model_fields["latency"].description or "",
}
# the measured numbers of a run (an int or float field of the worker's measurement; the
# round and repeat are labels, kept as they are)
NUMERIC_RUN_COLUMNS = tuple(
    name
    for name in RUN_COLUMNS
    if name in RunMeasurement.model_fields and is_number(RunMeasurement, name)
)
TEXT_RUN_COLUMNS = ("engine", "scenario", "status", "termination", "final_answer", "error")

SCENARIO_COLUMNS: dict[str, str] = {
    "scenario": "scenario name",
    "description": "what it probes (untrusted text)",
    "tags": "tuple of tags",
    "fault": "True for fault scenarios (scenarios.Scenario.is_fault)",
    "performance": "True for performance scenarios (Scenario.is_performance); may be a fault too",
    "expect_outcome": "the base expectation's outcome fields (scenarios.Expect.outcome)",
    "fault_kind": "llm | tool | guard: what a fault scenario probes (Scenario.fault_kind)",
    "expect_status": "the status a production agent should reach (base expectation)",
    "expect_termination": "the expected termination reason, or None",
    "expect_final_contains": "text the final answer must contain, or None",
    "expect_tools": "the tool calls expected (names, any order), or None",
}

FOOTPRINT_COLUMNS: dict[str, str] = {
    "engine": "engine name",
    "import_ms": "time to import the engine's stack in a fresh interpreter",
    "modules": "modules loaded by that import (sys.modules growth)",
    "rss_mb": "resident set size after import and one run",
}

THROUGHPUT_COLUMNS: dict[str, str] = {
    "engine": "engine name",
    "latency_profile": "zero | realistic",
    "concurrency": "runs in flight at once",
    "runs_per_s": "completed runs per second",
    "p50_ms": "median latency of a run",
    "p95_ms": "95th percentile latency",
    "p99_ms": "99th percentile latency",
    "cpu_ms_per_run": "engine process CPU per run (optional)",
    "runs": "runs measured at that level, failed ones included (optional)",
    "errors": "of those, runs that did not complete (optional)",
}

DEBUG_COLUMNS: dict[str, str] = {
    "engine": "engine name",
    "mode": "debug mode (off, verbose, trace, ...)",
    "scenario": "scenario name",
    "recall": "share of the key facts found in the debug output, 0..1",
    "bytes": "size of the debug output",
    "bytes_per_fact": "bytes read per fact found",
    "localised": "whether a reader can identify the failing call from the output (its tool or "
    "LLM call, its error and its position; bench.debuggability.localise)",
    "mode_cost_ms": "extra run time of the debug mode",
}

TTFT_COLUMNS: dict[str, str] = {
    "engine": "engine name",
    "scenario": "the TTFT scenario (a long streamed answer)",
    "latency_profile": "the mock's latency profile of the TTFT phase",
    "status": "completed | failed | aborted | error",
    "ttft_ms": "time to the first token of the final answer through the engine's stream",
    "floor_ttft_ms": "the part of it the mock scripts (the same for every engine), or NA",
    "scripted_ttft_ms": "what the mock scripted before the first answer token for the requests "
    "this engine sent (its protocol: ReAct's text before 'Final Answer:' included)",
    "ttft_overhead_ms": "ttft_ms minus scripted_ttft_ms: what the engine itself adds",
}

CODE_SIZE_COLUMNS: dict[str, str] = {
    "component": "what was measured (e.g. scheduler, scheduler core loop)",
    "part": "code, or a production configuration's built-in / custom part",
    "path": "file, directory or file.py::name, relative to the repository",
    "files": "number of Python files",
    "statements": "syntax-tree statements, docstrings excluded (bench.engines.codesize)",
    "nodes": "syntax-tree nodes, docstrings excluded",
    "logical_lines": "logical lines (tokenize NEWLINEs), docstrings excluded",
}


# Engines, in the order every table and chart uses (the registry's order).
RAW = "raw"
SELF_BUILT = engines_where(role="self-built")
LANGCHAIN_DEFAULT = "lc-agentexecutor"
ENGINE_ORDER = ENGINE_NAMES


def is_langchain(engine: str) -> bool:
    """A LangChain engine (the registry's family ``langchain``)."""
    known = REGISTRY.get(engine)
    return known is not None and known.family == "langchain"


def family(engine: str) -> str:
    """How the report names the engine's family (unknown engines: their own name)."""
    known = REGISTRY.get(engine)
    return known.family_label if known is not None else engine


def order_engines(engines: Any) -> list[str]:
    """Known engines in ``ENGINE_ORDER``, then the others alphabetically."""
    present = list(dict.fromkeys(str(e) for e in engines))
    known = [e for e in ENGINE_ORDER if e in present]
    return known + sorted(e for e in present if e not in ENGINE_ORDER)


def _conform(frame: pd.DataFrame | None, columns: dict[str, str]) -> pd.DataFrame | None:
    """Add missing columns as NA, keep extra ones; ``None`` and empty stay ``None``."""
    if frame is None or frame.empty:
        return None
    frame = frame.copy()
    for name in columns:
        if name not in frame.columns:
            frame[name] = np.nan
    return frame


@dataclass(frozen=True)
class RunData:
    """One benchmark run, as the report sees it."""

    runs: pd.DataFrame
    scenarios: pd.DataFrame
    meta: dict[str, Any] = field(default_factory=dict)
    footprint: pd.DataFrame | None = None
    throughput: pd.DataFrame | None = None
    debuggability: pd.DataFrame | None = None
    code_size: pd.DataFrame | None = None
    ttft: pd.DataFrame | None = None
    profile: tuple[Any, ...] = ()  # profile.jsonl rows (bench.results.rows.ProfileRow)
    catalogue: Any = None  # catalogue.json (bench.results.rows.CatalogueRecord), None: not run
    load_levels: tuple[Any, ...] = ()  # bench.results.metrics.LoadLevel
    mock_ceilings: tuple[Any, ...] = ()  # bench.results.metrics.MockCeiling
    multimodel: Any = None  # multimodel.json (bench.results.rows.MultiModelFile), or None
    versions: tuple[Any, ...] = ()  # versions.json rows (bench.results.rows.VersionRow)
    run_dir: Path | None = None
    notes: tuple[str, ...] = ()  # what the adapter could not read, for the caveats

    def __post_init__(self) -> None:
        runs = _conform(self.runs, RUN_COLUMNS)
        if runs is None:
            runs = pd.DataFrame({name: pd.Series(dtype=object) for name in RUN_COLUMNS})
        for name in NUMERIC_RUN_COLUMNS:
            runs[name] = pd.to_numeric(runs[name], errors="coerce")
        missing = runs["overhead_ms"].isna()
        if missing.any():  # rows without overhead_ms: the formula per_engine uses too
            derived = runs.loc[missing, ["wall_ms", "mock_latency_ms", "tool_ms", "waited_ms"]]
            runs.loc[missing, "overhead_ms"] = pd.Series(
                [run_overhead_ms(r) for r in derived.itertuples(index=False)],
                index=derived.index,
                dtype=float,
            )
        profile = runs["latency_profile"].astype(object)
        runs["latency_profile"] = profile.where(profile.notna(), "zero")
        scenarios = _conform(self.scenarios, SCENARIO_COLUMNS)
        if scenarios is None:
            scenarios = scenarios_from_runs(runs)
        else:
            # every scenario that ran has a row, even if its file is gone
            extra = sorted(set(runs["scenario"].dropna()) - set(scenarios["scenario"]))
            if extra:
                scenarios = pd.concat(
                    [scenarios, scenarios_from_runs(runs[runs["scenario"].isin(extra)])],
                    ignore_index=True,
                )
        fault = scenarios["fault"].astype(object)
        scenarios["fault"] = fault.where(fault.notna(), False).astype(bool)
        performance = scenarios["performance"].astype(object)
        # a run folder written before the column: performance is "not a fault"
        scenarios["performance"] = performance.where(performance.notna(), ~scenarios["fault"])
        scenarios["performance"] = scenarios["performance"].astype(bool)
        object.__setattr__(self, "runs", runs)
        object.__setattr__(self, "scenarios", scenarios.reset_index(drop=True))
        object.__setattr__(self, "footprint", _conform(self.footprint, FOOTPRINT_COLUMNS))
        object.__setattr__(self, "throughput", _conform(self.throughput, THROUGHPUT_COLUMNS))
        object.__setattr__(self, "debuggability", _conform(self.debuggability, DEBUG_COLUMNS))
        object.__setattr__(self, "code_size", _conform(self.code_size, CODE_SIZE_COLUMNS))
        ttft = _conform(self.ttft, TTFT_COLUMNS)
        if ttft is not None:
            for name in ("ttft_ms", "floor_ttft_ms", "scripted_ttft_ms", "ttft_overhead_ms"):
                ttft[name] = pd.to_numeric(ttft[name], errors="coerce")
        object.__setattr__(self, "ttft", ttft)

    @property
    def engines(self) -> list[str]:
        return order_engines(self.runs["engine"].dropna())

    @property
    def fault_scenarios(self) -> list[str]:
        names = self.scenarios.loc[self.scenarios["fault"], "scenario"]
        return sorted(set(names) & set(self.runs["scenario"]))

    @property
    def happy_scenarios(self) -> list[str]:
        names = self.scenarios.loc[self.scenarios["performance"], "scenario"]
        return sorted(set(names) & set(self.runs["scenario"]))

    def with_(self, **changes: Any) -> RunData:
        """A copy with some frames replaced (tests use it to vary one input)."""
        return replace(self, **changes)


def scenarios_from_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """Scenario rows when the scenario files are unknown: names only, none a fault, each a
    happy path (``bench.model.scenarios.happy_paths`` without the files)."""
    names = sorted(set(runs["scenario"].dropna()))
    happy = happy_paths(None, names)
    return pd.DataFrame(
        {
            "scenario": names,
            "description": [""] * len(names),
            "tags": [()] * len(names),
            "fault": [False] * len(names),
            "performance": [name in happy for name in names],
            "expect_status": ["completed"] * len(names),
            "expect_termination": [None] * len(names),
            "expect_final_contains": [None] * len(names),
            "expect_tools": [None] * len(names),
        }
    )
