"""summary.csv, throughput.csv and ttft.csv: the statistics of a run's rows, built with pandas.

One summary row per engine × scenario × latency profile × transport, from the latest timed
rows of runs.jsonl (warm-ups and rows superseded by ``--resume`` left out). Ratios and token
overheads are against the ``raw`` engine on the same scenario, profile and transport; they are
empty when ``raw`` was not measured. Column names are stable: the report reads them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from bench import stats
from bench.results import THROUGHPUT_KEY, TTFT_KEY, latest, timed_rows

BASELINE = "raw"
GROUP = ["engine", "scenario", "latency", "transport"]
STATUSES = ("completed", "failed", "aborted", "error")

# metrics with a full set of statistics (median, p95, p99, IQR, CI, …)
FULL_METRICS = ("wall_ms", "cpu_ms", "overhead_ms")
FULL_STATS = (
    "median",
    "mean",
    "stdev",
    "min",
    "max",
    "p95",
    "p99",
    "q1",
    "q3",
    "iqr",
    "ci_low",
    "ci_high",
)
# metrics summarised by their median only
MEDIAN_METRICS = (
    "overhead_per_step_ms",
    "tool_ms",
    "mock_latency_ms",
    "outer_ms",
    "llm_calls",
    "tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "request_count",
    "gc_collections",
)

SUMMARY_COLUMNS = [
    *GROUP,
    "n",
    "crashed",
    *(f"status_{s}" for s in STATUSES),
    "expect_ok_rate",
    "termination",
    *(f"{m}_{s}" for m in FULL_METRICS for s in FULL_STATS),
    "ttft_ms_median",
    "ttft_ms_p95",
    *(f"{m}_median" for m in MEDIAN_METRICS),
    "token_overhead",
    "token_overhead_per_request",
    "ratio_to_raw",
    "ratio_to_raw_ci_low",
    "ratio_to_raw_ci_high",
    "cpu_ratio_to_raw",
    "overhead_ratio_to_raw",
    "unstable",
    "warnings",
]

THROUGHPUT_COLUMNS = [
    "engine",
    "scenario",
    "latency",
    "transport",
    "concurrency",
    "runs",
    "errors",
    "duration_s",
    "runs_per_s",
    "latency_mean_ms",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "overhead_median_ms",
    "cpu_ms_per_run",
    "cpu_utilization",
    "window_s",
    "crashed",
]


TTFT_COLUMNS = [
    "engine",
    "scenario",
    "latency",
    "transport",
    "n",
    "n_ttft",
    "crashed",
    "errors",
    "expect_ok_rate",
    "ttft_ms_median",
    "ttft_ms_p25",
    "ttft_ms_p75",
    "ttft_ms_p95",
    "ttft_ms_min",
    "ttft_ms_max",
    "floor_ttft_ms",
    "extra_ttft_ms",
    "extra_ttft_vs_raw_ms",
    "scripted_ttft_ms_median",
    "ttft_overhead_ms_median",
    "wall_ms_median",
    "llm_calls_median",
    "streamed_requests_median",
]


def _values(rows: list[dict[str, Any]], key: str) -> list[float]:
    out = []
    for row in rows:
        value = row.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out.append(float(value))
    return out


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else math.nan


def _per_request_tokens(rows: list[dict[str, Any]]) -> list[float]:
    """Median prompt tokens at each request index over the runs (index = turn of the run)."""
    columns: list[list[float]] = []
    for row in rows:
        for i, tokens in enumerate(row.get("request_prompt_tokens") or ()):
            if tokens is None:
                continue
            while len(columns) <= i:
                columns.append([])
            columns[i].append(float(tokens))
    return [_median(c) for c in columns]


def _token_overhead_per_request(mine: list[float], raw: list[float]) -> float:
    """Mean over aligned request indices of (engine's prompt tokens − raw's)."""
    n = min(len(mine), len(raw))
    if n == 0:
        return math.nan
    return float(np.mean([mine[i] - raw[i] for i in range(n)]))


def _mode(values: Iterable[Any]) -> Any:
    counts: dict[Any, int] = {}
    for value in values:
        if value is not None:
            counts[value] = counts.get(value, 0) + 1
    return max(counts, key=counts.get) if counts else None


def build_summary(
    rows: Iterable[dict[str, Any]],
    *,
    seed: int = stats.DEFAULT_SEED,
    engine_order: Iterable[str] = (),
    scenario_order: Iterable[str] = (),
) -> Any:
    """summary.csv as a DataFrame (columns: ``SUMMARY_COLUMNS``), scenario by scenario."""
    import pandas as pd

    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in timed_rows(rows):
        groups.setdefault(tuple(row.get(k) for k in GROUP), []).append(row)

    def measured(group: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in group if not r.get("crashed")]

    records = []
    for key, group in groups.items():
        _engine, scenario, latency, transport = key
        ok = measured(group)
        raw_rows = measured(groups.get((BASELINE, scenario, latency, transport), []))
        entry: dict[str, Any] = dict(zip(GROUP, key, strict=True))
        entry["n"] = len(_values(ok, "wall_ms"))
        entry["crashed"] = len(group) - len(ok)
        for status in STATUSES:
            entry[f"status_{status}"] = sum(1 for r in group if r.get("status") == status)
        expects = [bool(r.get("expect_ok")) for r in ok if "expect_ok" in r]
        entry["expect_ok_rate"] = float(np.mean(expects)) if expects else math.nan
        entry["termination"] = _mode(r.get("termination") for r in ok)
        warnings: tuple[str, ...] = ()
        for metric in FULL_METRICS:
            summary = stats.summarize(_values(ok, metric), seed=seed)
            if metric == "wall_ms":
                warnings = summary.warnings
                entry["unstable"] = summary.unstable
            for name, value in (
                ("median", summary.median),
                ("mean", summary.mean),
                ("stdev", summary.stdev),
                ("min", summary.minimum),
                ("max", summary.maximum),
                ("p95", summary.p95),
                ("p99", summary.p99),
                ("q1", summary.q1),
                ("q3", summary.q3),
                ("iqr", summary.iqr),
                ("ci_low", summary.ci_low),
                ("ci_high", summary.ci_high),
            ):
                entry[f"{metric}_{name}"] = value
        ttft = _values(ok, "ttft_ms")
        entry["ttft_ms_median"] = _median(ttft)
        entry["ttft_ms_p95"] = stats.percentile(ttft, 95)
        for metric in MEDIAN_METRICS:
            entry[f"{metric}_median"] = _median(_values(ok, metric))
        entry["warnings"] = "; ".join(warnings)
        if raw_rows:
            raw_tokens = _median(_values(raw_rows, "prompt_tokens"))
            entry["token_overhead"] = entry["prompt_tokens_median"] - raw_tokens
            entry["token_overhead_per_request"] = _token_overhead_per_request(
                _per_request_tokens(ok), _per_request_tokens(raw_rows)
            )
            ratio, low, high = stats.ratio_of_medians(
                _values(ok, "wall_ms"), _values(raw_rows, "wall_ms"), seed=seed
            )
            entry["ratio_to_raw"] = ratio
            entry["ratio_to_raw_ci_low"] = low
            entry["ratio_to_raw_ci_high"] = high
            for metric, column in (
                ("cpu_ms", "cpu_ratio_to_raw"),
                ("overhead_ms", "overhead_ratio_to_raw"),
            ):
                base = _median(_values(raw_rows, metric))
                mine = _median(_values(ok, metric))
                entry[column] = (
                    mine / base if base and math.isfinite(base) and base > 0 else math.nan
                )
        records.append(entry)
    engines = {name: i for i, name in enumerate(engine_order)}
    scenarios = {name: i for i, name in enumerate(scenario_order)}
    records.sort(
        key=lambda e: (
            scenarios.get(e["scenario"], len(scenarios)),
            str(e["scenario"]),
            str(e["latency"]),
            engines.get(e["engine"], len(engines)),
            str(e["engine"]),
        )
    )
    return pd.DataFrame(records, columns=SUMMARY_COLUMNS)


def build_throughput_table(rows: Iterable[dict[str, Any]]) -> Any:
    """throughput.csv: the latest measurement of each engine × profile × concurrency level."""
    import pandas as pd

    records = [{c: row.get(c) for c in THROUGHPUT_COLUMNS} for row in latest(rows, THROUGHPUT_KEY)]
    for record in records:
        record["crashed"] = bool(record.get("crashed"))
    return pd.DataFrame(records, columns=THROUGHPUT_COLUMNS)


def build_ttft_table(rows: Iterable[dict[str, Any]], *, engine_order: Iterable[str] = ()) -> Any:
    """ttft.csv: one row per engine × scenario × profile × transport of the TTFT phase.

    ``extra_ttft_ms`` is the engine's median TTFT minus the scripted floor (the same for every
    engine); ``extra_ttft_vs_raw_ms`` minus ``raw``'s median TTFT (empty without ``raw``),
    which also takes out what the harness itself adds (the in-process mock rendering a
    reply, timer granularity); ``ttft_overhead_ms_median`` is the median over runs of TTFT
    minus the scripted time for the requests that run really sent (differs from the floor
    for ReAct text and for non-streamed answers).
    """
    import pandas as pd

    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in latest(rows, TTFT_KEY):
        if row.get("phase") == "timed":
            groups.setdefault(tuple(row.get(k) for k in GROUP), []).append(row)
    medians = {
        key: _median(_values([r for r in group if not r.get("crashed")], "ttft_ms"))
        for key, group in groups.items()
    }
    records = []
    for key, group in groups.items():
        _engine, scenario, latency, transport = key
        ok = [r for r in group if not r.get("crashed")]
        ttft = _values(ok, "ttft_ms")
        floors = _values(ok, "floor_ttft_ms")
        entry: dict[str, Any] = dict(zip(GROUP, key, strict=True))
        entry["n"] = len(_values(ok, "wall_ms"))
        entry["n_ttft"] = len(ttft)
        entry["crashed"] = len(group) - len(ok)
        entry["errors"] = sum(1 for r in group if r.get("status") != "completed")
        expects = [bool(r.get("expect_ok")) for r in ok if "expect_ok" in r]
        entry["expect_ok_rate"] = float(np.mean(expects)) if expects else math.nan
        entry["ttft_ms_median"] = medians[key]
        for name, q in (("p25", 25), ("p75", 75), ("p95", 95)):
            entry[f"ttft_ms_{name}"] = stats.percentile(ttft, q)
        entry["ttft_ms_min"] = min(ttft) if ttft else math.nan
        entry["ttft_ms_max"] = max(ttft) if ttft else math.nan
        entry["floor_ttft_ms"] = _median(floors)
        entry["extra_ttft_ms"] = entry["ttft_ms_median"] - entry["floor_ttft_ms"]
        raw = medians.get((BASELINE, scenario, latency, transport), math.nan)
        entry["extra_ttft_vs_raw_ms"] = entry["ttft_ms_median"] - raw
        for metric in ("scripted_ttft_ms", "ttft_overhead_ms", "wall_ms", "llm_calls"):
            entry[f"{metric}_median"] = _median(_values(ok, metric))
        entry["streamed_requests_median"] = _median(_values(ok, "streamed_requests"))
        records.append(entry)
    engines = {name: i for i, name in enumerate(engine_order)}
    records.sort(
        key=lambda e: (
            str(e["scenario"]),
            str(e["latency"]),
            engines.get(e["engine"], len(engines)),
            str(e["engine"]),
        )
    )
    return pd.DataFrame(records, columns=TTFT_COLUMNS)


def write_csv(frame: Any, path: Any) -> None:
    """CSV with stable formatting: 6 significant digits, empty cells for missing values."""
    frame.to_csv(path, index=False, float_format="%.6g")
