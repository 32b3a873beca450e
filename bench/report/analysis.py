"""Numbers derived from a ``RunData``: small frames that charts, tables and rules share.

Conventions (also in docs/report.md):

- *performance numbers* come from **completed runs of the happy-path scenarios** (not the
  fault scenarios, whose timings measure timeouts and retries, not the framework);
  when runs were made under several latency profiles, the ``zero`` profile is used;
- *overhead per LLM step* is a run's framework overhead (wall − mock latency − tool time −
  waits by choice − the in-process mock's handler time) divided by its LLM calls, pooled over
  those runs, summarised by the median;
- *waits by choice* (``waited_ms``) are the sleeps a run chose (retry backoff): shown per run
  beside the overhead, never in it; NaN where unknown (runs recorded before the field);
- *tokens per request* is a run's prompt tokens ÷ its LLM calls; *token overhead* is that
  minus the ``raw`` engine's on the same scenario, averaged over the scenarios both ran.
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np
import pandas as pd

from bench.model.scenarios import reference_scenario
from bench.report.frames import (
    RAW,
    RunData,
    order_engines,
)
from bench.results import metrics, stats
from bench.results.folder import run_seed
from bench.results.per_engine import performance_profile
from scenarios.expect import misses as expect_misses

REFERENCE_LLM_LATENCY_MS = 1000.0  # "a typical hosted LLM call", for shares in the ledger
SHARE_THRESHOLDS = (0.01, 0.05, 0.10)


def _rows(frame: pd.DataFrame) -> list[object]:
    """A frame's rows as row-like objects for ``bench.results.metrics``."""
    return list(frame.itertuples(index=False))


def _by_cell(frame: pd.DataFrame) -> dict[tuple[str, str], list[object]]:
    """``_rows`` of a run frame grouped by (engine, scenario), in the frame's order."""
    cells: dict[tuple[str, str], list[object]] = {}
    for row in _rows(frame):
        cells.setdefault((row.engine, row.scenario), []).append(row)  # type: ignore[attr-defined]
    return cells


def _per_step(total: pd.Series, llm_calls: pd.Series) -> pd.Series:
    """``bench.results.metrics.per_step`` of each row (NaN without LLM calls)."""
    values = [metrics.per_step(t, c) for t, c in zip(total, llm_calls, strict=True)]
    return pd.Series([math.nan if v is None else v for v in values], index=total.index)


def perf_runs(data: RunData) -> pd.DataFrame:
    """Completed runs of the happy-path scenarios (``zero`` profile when there are several:
    ``bench.results.per_engine.performance_profile``)."""
    runs = data.runs
    runs = runs[(runs["status"] == "completed") & runs["scenario"].isin(data.happy_scenarios)]
    profile = performance_profile(runs["latency_profile"])
    if profile is not None:
        runs = runs[runs["latency_profile"] == profile]
    return runs.assign(
        step_overhead_ms=_per_step(runs["overhead_ms"], runs["llm_calls"]),
        step_cpu_ms=_per_step(runs["cpu_ms"], runs["llm_calls"]),
        tokens_per_request=_per_step(runs["prompt_tokens"], runs["llm_calls"]),
    )


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return frame
    order = {e: i for i, e in enumerate(order_engines(frame["engine"]))}
    return frame.sort_values("engine", key=lambda s: s.map(order), kind="stable").reset_index(
        drop=True
    )


def failure_reasons(data: RunData) -> dict[tuple[str, str], str]:
    """Engine, scenario → why its runs missed their expectations or did not complete
    (``metrics.failure_reason`` over the cell's runs, every latency profile)."""
    out: dict[tuple[str, str], str] = {}
    for (engine, scenario), rows in _by_cell(data.runs).items():
        if why := metrics.failure_reason(rows):
            out[(str(engine), str(scenario))] = why
    return out


def no_completed_run(data: RunData) -> dict[str, str | None]:
    """Engines of the performance scenarios with no completed run there → why (or None)."""
    runs = data.runs[data.runs["scenario"].isin(data.happy_scenarios)]
    out: dict[str, str | None] = {}
    for engine in order_engines(runs["engine"].dropna().unique()):
        g = runs[runs["engine"] == engine]
        if not (g["status"] == "completed").any():
            out[engine] = metrics.failure_reason(g.itertuples(index=False))
    return out


def step_overhead(data: RunData) -> pd.DataFrame:
    """Per engine: framework overhead per LLM step (ms) and CPU per step."""
    runs = perf_runs(data).dropna(subset=["step_overhead_ms"])
    rows = []
    for engine, g in runs.groupby("engine"):
        v = g["step_overhead_ms"]
        rows.append(
            {
                "engine": engine,
                "runs": len(g),
                "median_ms": stats.median(v),
                "p25_ms": stats.percentile(v, 25),
                "p75_ms": stats.percentile(v, 75),
                "p95_ms": stats.percentile(v, 95),
                "cpu_median_ms": stats.median(g["step_cpu_ms"]),
                "waited_median_ms": stats.median(g["waited_ms"]),
            }
        )
    return _ordered(pd.DataFrame(rows, columns=_STEP_COLS))


_STEP_COLS = [
    "engine",
    "runs",
    "median_ms",
    "p25_ms",
    "p75_ms",
    "p95_ms",
    "cpu_median_ms",
    "waited_median_ms",
]


def scenario_stats(data: RunData) -> pd.DataFrame:
    """Per engine x scenario: outcome counts, latency spread, overhead, tokens, TTFT.

    The numbers of each cell are ``bench.results.metrics.cell_stats`` (those of summary.csv):
    the same rows, the same seed, the same values.
    """
    runs = data.runs
    profile = performance_profile(runs["latency_profile"])
    if profile is not None:
        runs = runs[runs["latency_profile"] == profile]
    groups = _by_cell(runs)
    seed = run_seed(data.meta)
    rows = []
    for (engine, scenario), g in runs.groupby(["engine", "scenario"]):
        cell = metrics.cell_stats(
            groups[(engine, scenario)], groups.get((RAW, scenario)), seed=seed
        )
        wall = cell.wall
        measured = metrics.measured(groups[(engine, scenario)])
        statuses = g["status"].value_counts()
        rows.append(
            {
                **cell.medians,  # every median per run, under the metric's name
                "engine": engine,
                "scenario": scenario,
                "runs": len(g),
                "completed": cell.statuses["completed"],
                "status": ", ".join(f"{s} {n}" for s, n in statuses.items()),
                "median_ms": wall.median,
                "ci_low_ms": wall.ci_low,
                "ci_high_ms": wall.ci_high,
                "p25_ms": wall.q1,
                "p75_ms": wall.q3,
                "p95_ms": wall.p95,
                "p99_ms": wall.p99,
                "unstable": cell.unstable,
                "warnings": "; ".join(wall.warnings),
                "overhead_step_ms": cell.medians["overhead_per_step_ms"],
                "cpu_ms": cell.summaries["cpu_ms"].median,
                "waited_ms": stats.median(metrics.values(measured, "waited_ms")),
                "llm_calls": cell.medians["llm_calls"],
                "tool_calls": cell.medians["tool_calls"],
                "prompt_tokens": cell.medians["prompt_tokens"],
                "tokens_per_request": cell.medians["tokens_per_request"],
                "token_overhead": cell.token_overhead_per_request,
                "ttft_ms": cell.ttft_median,
            }
        )
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    return _ordered(frame.sort_values(["scenario"], kind="stable"))


def token_stats(data: RunData) -> pd.DataFrame:
    """Per engine: prompt tokens per request and the overhead per request over ``raw``."""
    cols = ["engine", "tokens_per_request", "overhead_per_request", "scenarios"]
    runs = perf_runs(data).dropna(subset=["tokens_per_request"])
    if runs.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    cells = _by_cell(runs)  # the frame's rows once: a frame per group is slow on wide frames
    for engine, g in runs.groupby("engine"):
        per_scenario = [stats.median(s["tokens_per_request"]) for _, s in g.groupby("scenario")]
        overheads = []
        if engine != RAW:
            for scenario in sorted(set(g["scenario"])):
                raw = cells.get((RAW, scenario))
                if raw:
                    mine = cells[(engine, scenario)]
                    overheads.append(metrics.token_overhead_per_request(mine, raw))
        elif (runs["engine"] == RAW).any():
            overheads = [0.0] * g["scenario"].nunique()
        overheads = [v for v in overheads if np.isfinite(v)]
        rows.append(
            {
                "engine": engine,
                "tokens_per_request": stats.mean(per_scenario),
                "overhead_per_request": stats.mean(overheads),
                "scenarios": len(overheads),
            }
        )
    return _ordered(pd.DataFrame(rows, columns=cols))


TTFT_TAG = "ttft"


def ttft_scenarios(data: RunData) -> list[str]:
    """The scenarios TTFT is judged on: those tagged ``ttft`` that have TTFT values, else all.

    In a multi-step run the first content token is the final answer's, so its TTFT is nearly
    the whole run; a scenario made for it (a long streamed answer) isolates the streaming path.
    """
    runs = perf_runs(data).dropna(subset=["ttft_ms"])
    tagged = {
        row.scenario
        for row in data.scenarios.itertuples()
        if isinstance(row.tags, list | tuple) and TTFT_TAG in row.tags
    }
    chosen = sorted(tagged & set(runs["scenario"]))
    return chosen or sorted(set(runs["scenario"]))


def ttft_stats(data: RunData) -> pd.DataFrame:
    """Per engine: time to first token (median, IQR, p95) and what it adds to the floor.

    From the TTFT phase (``data.ttft``) when the run has one: ``floor_ms`` is the scripted
    part (mock latency up to the first answer token), ``extra_ms`` the median of TTFT minus
    floor — the engine's own interception latency. Otherwise from the suite's runs on the
    ``ttft_scenarios``, on the zero-latency mock, where the floor is zero. ``added_ms``: the
    median TTFT minus the ``raw`` loop's (which also takes out what the harness itself adds:
    the in-process mock rendering a reply, timer granularity), else ``extra_ms``.
    """
    cols = [
        "engine", "runs", "median_ms", "p25_ms", "p75_ms", "p95_ms", "floor_ms", "extra_ms",
        "added_ms",
    ]  # fmt: skip
    if data.ttft is not None:
        runs = data.ttft[(data.ttft["status"] == "completed")].dropna(subset=["ttft_ms"])
        runs = runs.assign(floor_ttft_ms=runs["floor_ttft_ms"].fillna(0.0))
    else:
        runs = perf_runs(data).dropna(subset=["ttft_ms"])
        runs = runs[runs["scenario"].isin(ttft_scenarios(data))].assign(floor_ttft_ms=0.0)
    rows = [
        {
            "engine": engine,
            "runs": len(g),
            "median_ms": stats.median(g["ttft_ms"]),
            "p25_ms": stats.percentile(g["ttft_ms"], 25),
            "p75_ms": stats.percentile(g["ttft_ms"], 75),
            "p95_ms": stats.percentile(g["ttft_ms"], 95),
            "floor_ms": stats.median(g["floor_ttft_ms"]),
            "extra_ms": stats.median(map(metrics.ttft_over_floor, _rows(g))),
        }
        for engine, g in runs.groupby("engine")
    ]
    raw = next((r["median_ms"] for r in rows if r["engine"] == RAW), None)
    for r in rows:
        r["added_ms"] = r["extra_ms"] if raw is None else r["median_ms"] - raw
    return _ordered(pd.DataFrame(rows, columns=cols))


OUTCOMES = ("recovered", "completed", "failed", "aborted", "error")


def fault_matrix(data: RunData) -> pd.DataFrame:
    """Engine x fault scenario: the usual outcome and whether it is what production needs.

    ``as_expected``: the run meets the scenario's **base outcome** — the outcome fields of
    its ``expect`` block without per-engine overrides (``scenarios.Expect.outcome``): what
    a production agent must reach (the status, an action that must never run, a limit on
    calls, no request over the budget, a tool cut within its timeout, no call with invalid
    arguments, the text of the answer), judged by ``scenarios.expect.misses``, the runner's
    own judge. Flow fields (how many requests, which path) are not judged here.
    ``outcome``: the status, with ``completed`` runs that meet it called ``recovered``.
    A cell's outcome is its most frequent one; ``mixed`` says when its runs differed.
    """
    cols = ["engine", "scenario", "outcome", "as_expected", "runs", "mixed", "termination", "why"]
    faults = data.fault_scenarios
    if not faults:
        return pd.DataFrame(columns=cols)
    expect = data.scenarios.set_index("scenario")
    rows = []
    runs = data.runs[data.runs["scenario"].isin(faults)]
    # the frame's records once, grouped as groupby would (sorted keys, the frame's order)
    cells: dict[tuple[str, str], list[dict]] = {}
    for record in runs.to_dict("records"):
        cells.setdefault((record["engine"], record["scenario"]), []).append(record)
    for engine, scenario in sorted(cells):
        records = cells[(engine, scenario)]
        outcome_spec = expect.loc[scenario].get("expect_outcome")
        judged = [_judge(r, outcome_spec) for r in records]
        counts = pd.Series([o for o, _ in judged]).value_counts()
        outcome = str(counts.index[0])
        misses = next(m for o, m in judged if o == outcome)
        terminations = pd.Series([r.get("termination") for r in records]).dropna().astype(str)
        rows.append(
            {
                "engine": engine,
                "scenario": scenario,
                "outcome": outcome,
                "as_expected": not misses,
                "runs": len(records),
                "mixed": len(counts) > 1,
                "termination": terminations.mode().iloc[0] if len(terminations) else "",
                "why": "; ".join(misses),
            }
        )
    return _ordered(pd.DataFrame(rows, columns=cols))


def _judge(run: dict, outcome_spec: object) -> tuple[str, list[str]]:
    status = str(run.get("status") or "error")
    if status not in OUTCOMES:
        status = "error"
    spec = outcome_spec if isinstance(outcome_spec, dict) else {"status": "completed"}
    observed = {key: (None if _missing(value) else value) for key, value in run.items()}
    misses = expect_misses(spec, observed)
    outcome = "recovered" if status == "completed" and not misses else status
    return outcome, misses


def _missing(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


def fault_scores(data: RunData) -> pd.DataFrame:
    """Per engine: fault scenarios run, share handled as production needs, share of errors."""
    fm = fault_matrix(data)
    if fm.empty:
        return pd.DataFrame(columns=["engine", "scenarios", "handled", "errors", "recovered"])
    rows = [
        {
            "engine": engine,
            "scenarios": len(g),
            "handled": stats.share(g["as_expected"]),
            "errors": stats.share(g["outcome"] == "error"),
            "recovered": int((g["outcome"] == "recovered").sum()),
        }
        for engine, g in fm.groupby("engine")
    ]
    return _ordered(pd.DataFrame(rows))


@overload
def overhead_share(step_ms: float, llm_latency_ms: float) -> float: ...
@overload
def overhead_share(step_ms: float, llm_latency_ms: np.ndarray) -> np.ndarray: ...
def overhead_share(step_ms: float, llm_latency_ms: float | np.ndarray) -> float | np.ndarray:
    """Share of end-to-end time spent in the framework, per LLM step (tools ignored)."""
    return step_ms / (step_ms + llm_latency_ms)


def breakeven_latency(step_ms: float, share: float) -> float:
    """The per-call LLM latency above which ``step_ms`` is less than ``share`` of the total."""
    if not np.isfinite(step_ms) or step_ms <= 0:
        return 0.0
    return step_ms * (1 - share) / share


def breakeven_extra_latency(step_ms: float, ref_step_ms: float, share: float) -> float:
    """The LLM latency above which the *extra* overhead over ``ref`` is < ``share`` of total."""
    extra = step_ms - ref_step_ms
    if not np.isfinite(extra) or extra <= 0:
        return 0.0
    return max(0.0, extra / share - step_ms)


def cpu_per_run(data: RunData) -> pd.DataFrame:
    """Per engine: median CPU ms per run on the reference scenario (or all happy ones)."""
    runs = perf_runs(data)
    scenario = str(reference_scenario())
    if scenario in set(runs["scenario"]):
        runs = runs[runs["scenario"] == scenario]
    else:
        scenario = "all happy-path scenarios"
    frame = pd.DataFrame(
        [{"engine": e, "cpu_ms": stats.median(g["cpu_ms"])} for e, g in runs.groupby("engine")],
        columns=["engine", "cpu_ms"],
    )
    frame["basis"] = scenario
    return _ordered(frame.dropna(subset=["cpu_ms"]))


def peak_throughput(data: RunData, profile: str = "zero") -> pd.DataFrame:
    """Per engine: the highest completed runs/s measured under ``profile`` and where it was
    reached (engines that completed no run at any level left out)."""
    tp = data.throughput
    cols = ["engine", "runs_per_s", "concurrency", "p95_ms"]
    if tp is None:
        return pd.DataFrame(columns=cols)
    tp = tp[(tp["latency_profile"] == profile)].dropna(subset=["runs_per_s"])
    tp = tp[tp["runs_per_s"] > 0]  # a level with no completed run is never ranked
    rows = []
    for engine, g in tp.groupby("engine"):
        best = g.loc[g["runs_per_s"].idxmax()]
        rows.append(
            {
                "engine": engine,
                "runs_per_s": float(best["runs_per_s"]),
                "concurrency": best["concurrency"],
                "p95_ms": float(best["p95_ms"]),
            }
        )
    return _ordered(pd.DataFrame(rows, columns=cols))


DEBUG_RECALL_TIE = 0.05  # modes this close to an engine's best recall count as equally good


def debug_modes(data: RunData) -> pd.DataFrame:
    """Per engine x debug mode, over scenarios: mean recall, median bytes and bytes per fact,
    share of fault scenarios whose failing step it locates, median cost of the mode."""
    return debug_mode_table(data.debuggability)


DEBUG_MODE_COLUMNS = [
    "engine", "mode", "scenarios", "recall", "bytes", "bytes_per_fact", "localised",
    "mode_cost_ms",
]  # fmt: skip


def debug_mode_table(dbg: pd.DataFrame | None) -> pd.DataFrame:
    """``debug_modes`` of a debuggability frame (one row per engine x mode x scenario)."""
    if dbg is None:
        return pd.DataFrame(columns=DEBUG_MODE_COLUMNS)
    rows = []
    for (engine, mode), g in dbg.groupby(["engine", "mode"]):
        rows.append(
            {
                "engine": engine,
                "mode": mode,
                "scenarios": g["scenario"].nunique(),
                "recall": stats.mean(pd.to_numeric(g["recall"], errors="coerce")),
                "bytes": stats.median(pd.to_numeric(g["bytes"], errors="coerce")),
                "bytes_per_fact": stats.median(pd.to_numeric(g["bytes_per_fact"], errors="coerce")),
                "localised": stats.share(g["localised"].map(_truthy)),
                "mode_cost_ms": stats.median(pd.to_numeric(g["mode_cost_ms"], errors="coerce")),
            }
        )
    return pd.DataFrame(rows, columns=DEBUG_MODE_COLUMNS)


def debug_best(data: RunData) -> pd.DataFrame:
    """Per engine: its most useful debug mode, and the best fault localisation of any mode.

    The most useful mode has the fewest bytes per fact among the modes whose mean recall is
    within ``DEBUG_RECALL_TIE`` of the engine's highest (a user reaches for the mode that
    tells as much with less to read). ``localised_best``: the highest share of fault
    scenarios in which some mode of the engine lets you locate the failing step.
    """
    cols = [
        "engine", "mode", "recall", "bytes", "bytes_per_fact", "localised", "mode_cost_ms",
        "localised_best",
    ]  # fmt: skip
    modes = debug_modes(data)
    if modes.empty:
        return pd.DataFrame(columns=cols)
    modes = modes[modes["recall"].notna()]
    rows = []
    for _, g in modes.groupby("engine"):
        near = g[g["recall"] >= g["recall"].max() - DEBUG_RECALL_TIE]
        best = near.assign(_bpf=near["bytes_per_fact"].fillna(math.inf)).sort_values(
            ["_bpf", "recall"], ascending=[True, False]
        )
        row = best.iloc[0].drop("_bpf").to_dict()
        row["localised_best"] = g["localised"].max()
        rows.append(row)
    return _ordered(pd.DataFrame(rows, columns=cols))


def _truthy(value: object) -> float:
    if isinstance(value, str):
        return 1.0 if value.strip().lower() in ("1", "true", "yes", "y") else 0.0
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    return 1.0 if value else 0.0
