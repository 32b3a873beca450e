"""bench.results.metrics: each metric of a run, on rows small enough to work out by hand."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from bench.results import metrics
from bench.results.rows import FootprintRow, Row, RunRow, ThroughputRow, TtftRow
from tests.results.folders import run_row


def typed(model: type[Row], data: dict) -> Row:
    """A row as the loader reads it: from its JSON line."""
    return model.model_validate_json(json.dumps(data))


def nan_to_none(value: object) -> object:
    """NaN → None, recursively, so that whole structures compare with ``==``."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, list):
        return [nan_to_none(v) for v in value]
    if isinstance(value, dict):
        return {k: nan_to_none(v) for k, v in value.items()}
    return value


def rows(engine: str, walls: list[float], **changes: object) -> list[RunRow]:
    return [
        typed(RunRow, run_row(engine, "customer_returns", i, wall, **changes))
        for i, wall in enumerate(walls)
    ]


def test_per_step_figures():
    assert metrics.per_step(9.0, 3) == 3.0
    assert [metrics.per_step(9.0, c) for c in (0, None, math.nan)] == [None, None, None]
    run = SimpleNamespace(overhead_ms=6.0, prompt_tokens=300, llm_calls=3)
    assert (metrics.step_overhead_ms(run), metrics.tokens_per_request(run)) == (2.0, 100.0)


def test_token_overhead_is_taken_turn_by_turn_against_raw():
    raw = [SimpleNamespace(request_prompt_tokens=(100, 150, 200), prompt_tokens=450)]
    react = [
        SimpleNamespace(request_prompt_tokens=(290, 340, None, 400), prompt_tokens=1030),
        SimpleNamespace(request_prompt_tokens=(300, 350), prompt_tokens=650),
    ]
    # per index, the median over the runs (a None count is not a count)
    assert nan_to_none(metrics.per_request_tokens(react)) == [295.0, 345.0, None, 400.0]
    # index 0: 295 − 100; index 1: 345 − 150; index 2 has no count; raw has no index 3
    assert metrics.token_overhead_per_request(react, raw) == 195.0
    assert metrics.token_overhead_per_run(react, raw) == 840.0 - 450.0


def test_cell_stats_of_a_cell_with_a_crashed_run():
    crash = {"wall_ms": None, "status": "error", "termination": "worker_crash", "crashed": True}
    mine = [
        *rows("scheduler", [2.0, 4.0, 3.0]),
        typed(RunRow, {**run_row("scheduler", "customer_returns", 3, 0.0), **crash}),
    ]
    raw = rows("raw", [1.0, 1.0, 1.0])
    cell = metrics.cell_stats(mine, raw)
    assert cell.key == ("scheduler", "customer_returns", "zero", "inprocess")
    assert (cell.n, cell.crashed, cell.termination) == (3, 1, "stop")
    assert cell.statuses == {"completed": 3, "failed": 0, "aborted": 0, "error": 1}
    assert cell.expect_ok_rate == 1.0
    assert (cell.wall.median, cell.wall.minimum, cell.wall.maximum) == (3.0, 2.0, 4.0)
    assert cell.wall.warnings == ("only 3 values", "IQR is 33% of the median",
                                  "standard deviation is 33% of the mean")  # fmt: skip
    assert cell.unstable
    assert cell.medians["overhead_per_step_ms"] == pytest.approx((3.0 - 0.01) / 3)
    assert cell.medians["tokens_per_request"] == 100.0
    assert cell.ratio_to_raw[0] == 3.0
    assert cell.ratio_to_raw[1] <= 3.0 <= cell.ratio_to_raw[2]
    assert cell.cpu_ratio_to_raw == pytest.approx(3.0)
    assert (cell.token_overhead, cell.token_overhead_per_request) == (0.0, 0.0)
    alone = metrics.cell_stats(mine)  # without raw: no ratios, no token overhead
    assert math.isnan(alone.ratio_to_raw[0]) and math.isnan(alone.token_overhead_per_request)


def test_cells_group_the_latest_timed_rows():
    warm = rows("raw", [9.0], phase="warmup")
    first = rows("raw", [5.0, 6.0])
    retried = rows("raw", [7.0])  # repeat 0 again: the later row wins
    grouped = metrics.cells([*warm, *first, *retried])
    assert list(grouped) == [("raw", "customer_returns", "zero", "inprocess")]
    assert [r.wall_ms for r in grouped[("raw", "customer_returns", "zero", "inprocess")]] == [
        7.0,
        6.0,
    ]


def test_ttft_over_the_scripted_floor():
    def ttft_rows(engine: str, values: list[float]) -> list[TtftRow]:
        return [
            typed(
                TtftRow,
                {
                    **run_row(engine, "streaming_long_answer", i, v + 50, latency="ttft"),
                    "ttft_ms": v,
                    "floor_ttft_ms": 200.0,
                },
            )
            for i, v in enumerate(values)
        ]

    raw, lc = ttft_rows("raw", [207.0, 208.0, 209.0]), ttft_rows("lc", [215.0, 217.0, 230.0])
    assert [metrics.ttft_over_floor(r) for r in lc] == [15.0, 17.0, 30.0]
    stats = metrics.ttft_stats(lc, raw)
    assert (stats.n, stats.n_ttft, stats.crashed, stats.errors) == (3, 3, 0, 0)
    assert stats.ttft == {"median": 217.0, "p25": 216.0, "p75": 223.5, "p95": 228.7,
                          "min": 215.0, "max": 230.0}  # fmt: skip
    assert (stats.floor_ms, stats.extra_ms, stats.extra_vs_raw_ms) == (200.0, 17.0, 9.0)
    assert stats.medians["wall_ms"] == 267.0


def test_throughput_percentiles_are_taken_over_the_latencies():
    row = typed(
        ThroughputRow,
        {
            "engine": "raw",
            "scenario": "customer_returns",
            "latency": "zero",
            "transport": "inprocess",
            "concurrency": 10,
            "runs": 5,
            "runs_per_s": 500.0,
            "latencies_ms": [1.0, 2.0, 3.0, 4.0, 10.0],
            "latency_p95_ms": 123.0,  # what a worker wrote is not read
        },
    )
    level = metrics.throughput_level(row)
    assert (level["latency_p50_ms"], level["latency_mean_ms"]) == (3.0, 4.0)
    assert level["latency_p95_ms"] == pytest.approx(8.8)
    assert level["latency_p99_ms"] == pytest.approx(9.76)
    assert level["runs_per_s"] == 500.0 and level["crashed"] is False


def test_footprint_medians_per_engine():
    probes = [
        typed(
            FootprintRow,
            {
                "kind": "stack",
                "engine": "raw",
                "status": "ok",
                "stack": ["httpx"],
                "import_ms": ms,
                "modules": 208,
                "rss_before_mb": 10.0,
                "rss_after_mb": 10.0 + mb,
            },
        )
        for ms, mb in ((80.0, 18.0), (90.0, 19.0), (200.0, 18.5))
    ]
    failed = typed(FootprintRow, {"kind": "stack", "engine": "raw", "status": "error"})
    worker = typed(FootprintRow,
        {"kind": "worker", "engine": "raw", "status": "ok", "harness_modules": 386,
         "modules_after_import": 512, "engine_import_ms": 65.0, "peak_rss_mb": 83.0,
         "first_run_status": "completed"}
    )  # fmt: skip
    assert nan_to_none(metrics.footprint_by_engine([*probes, failed, worker])) == [
        {
            "engine": "raw",
            "stack": "httpx",
            "stack_probes": 3,
            "stack_import_ms": 90.0,
            "stack_import_ms_min": 80.0,
            "stack_import_ms_max": 200.0,
            "stack_modules": 208.0,
            "stack_rss_mb": 18.5,
            "workers": 1,
            "harness_modules": 386.0,
            "engine_import_ms": 65.0,
            "engine_import_ms_min": 65.0,
            "engine_modules": 126.0,
            "modules_after_first_run": None,
            "rss_after_import_mb": None,
            "peak_rss_mb": 83.0,
            "first_run_ms": None,
            "first_run_status": "completed",
        }
    ]
