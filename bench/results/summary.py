"""summary.csv, footprint.csv, throughput.csv and ttft.csv: the run's metrics as tables.

The numbers come from ``bench.results.metrics`` (one summary row per cell: engine × scenario ×
latency profile × transport, from the latest timed rows of runs.jsonl); this module only lays
them out as pandas frames with stable column names (docs/measurement.md). Ratios and token
overheads are against the ``raw`` engine on the same scenario, profile and transport; they are
empty when ``raw`` was not measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bench.results import metrics, stats
from bench.results.files import TTFT_KEY
from bench.results.metrics import FULL_METRICS, GROUP_COLUMNS, MEDIAN_METRICS, STATUSES
from bench.results.rows import FootprintRow, RunRow, ThroughputRow, TtftRow, timed

GROUP = list(GROUP_COLUMNS)
# summary.csv column suffix → attribute of ``stats.Summary``
_SUMMARY_STATS = {
    "median": "median",
    "mean": "mean",
    "stdev": "stdev",
    "min": "minimum",
    "max": "maximum",
    "p95": "p95",
    "p99": "p99",
    "q1": "q1",
    "q3": "q3",
    "iqr": "iqr",
    "ci_low": "ci_low",
    "ci_high": "ci_high",
}
FULL_STATS = tuple(_SUMMARY_STATS)
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
    "completed_per_s",
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


def summary_record(cell: metrics.CellStats) -> dict[str, Any]:
    """One summary.csv row (``SUMMARY_COLUMNS``) from a cell's statistics."""
    entry: dict[str, Any] = dict(zip(GROUP, cell.key, strict=True))
    entry["n"] = cell.n
    entry["crashed"] = cell.crashed
    for status in STATUSES:
        entry[f"status_{status}"] = cell.statuses[status]
    entry["expect_ok_rate"] = cell.expect_ok_rate
    entry["termination"] = cell.termination
    for metric in FULL_METRICS:
        summary = cell.summaries[metric]
        for column, attribute in _SUMMARY_STATS.items():
            entry[f"{metric}_{column}"] = getattr(summary, attribute)
    entry["ttft_ms_median"] = cell.ttft_median
    entry["ttft_ms_p95"] = cell.ttft_p95
    for metric in MEDIAN_METRICS:
        entry[f"{metric}_median"] = cell.medians[metric]
    entry["token_overhead"] = cell.token_overhead
    entry["token_overhead_per_request"] = cell.token_overhead_per_request
    entry["ratio_to_raw"], entry["ratio_to_raw_ci_low"], entry["ratio_to_raw_ci_high"] = (
        cell.ratio_to_raw
    )
    entry["cpu_ratio_to_raw"] = cell.cpu_ratio_to_raw
    entry["overhead_ratio_to_raw"] = cell.overhead_ratio_to_raw
    entry["unstable"] = cell.unstable
    entry["warnings"] = "; ".join(cell.wall.warnings)
    return entry


def build_summary(
    rows: Iterable[RunRow],
    *,
    seed: stats.Seed = stats.DEFAULT_SEED,
    engine_order: Sequence[str] = (),
    scenario_order: Sequence[str] = (),
) -> Any:
    """summary.csv as a DataFrame (columns: ``SUMMARY_COLUMNS``), scenario by scenario."""
    import pandas as pd

    groups = metrics.cells(rows)
    records = [
        summary_record(metrics.cell_stats(group, groups.get(metrics.baseline_key(key)), seed=seed))
        for key, group in groups.items()
    ]
    engines = metrics.order_index(engine_order)
    scenarios = metrics.order_index(scenario_order)
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


def build_throughput_table(rows: Iterable[ThroughputRow]) -> Any:
    """throughput.csv: the latest measurement of each engine × profile × concurrency level."""
    import pandas as pd

    records = [metrics.throughput_level(row) for row in rows]
    return pd.DataFrame(records, columns=THROUGHPUT_COLUMNS)


FOOTPRINT_COLUMNS = [
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


def build_footprint_table(rows: Sequence[FootprintRow]) -> Any:
    """footprint.csv: one row per engine, medians over its probes and workers."""
    import pandas as pd

    return pd.DataFrame(metrics.footprint_by_engine(rows), columns=FOOTPRINT_COLUMNS)


def build_ttft_table(rows: Iterable[TtftRow], *, engine_order: Sequence[str] = ()) -> Any:
    """ttft.csv: one row per engine × scenario × profile × transport of the TTFT phase
    (``bench.results.metrics.ttft_stats``)."""
    import pandas as pd

    groups: dict[metrics.CellKey, list[TtftRow]] = {}
    for row in timed(rows, TTFT_KEY):
        groups.setdefault(metrics.cell_key(row), []).append(row)
    records = []
    for key, group in groups.items():
        cell = metrics.ttft_stats(group, groups.get(metrics.baseline_key(key)))
        entry: dict[str, Any] = dict(zip(GROUP, key, strict=True))
        entry.update(
            n=cell.n,
            n_ttft=cell.n_ttft,
            crashed=cell.crashed,
            errors=cell.errors,
            expect_ok_rate=cell.expect_ok_rate,
            floor_ttft_ms=cell.floor_ms,
            extra_ttft_ms=cell.extra_ms,
            extra_ttft_vs_raw_ms=cell.extra_vs_raw_ms,
        )
        for name, v in cell.ttft.items():
            entry[f"ttft_ms_{name}"] = v
        for name, v in cell.medians.items():
            entry[f"{name}_median"] = v
        records.append(entry)
    engines = metrics.order_index(engine_order)
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
