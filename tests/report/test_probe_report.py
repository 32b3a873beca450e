"""The profiling probe's chart and tables (bench.report.charts.package_breakdown,
bench.report.probe)."""

from __future__ import annotations

import matplotlib as mpl
import pandas as pd
import pytest

from bench.report import charts, probe
from bench.report.charts import NoData
from bench.results.rows import ProfileRow


def _row(
    engine: str, scenario: str, calls: int, samples: dict[str, int], **kw: object
) -> ProfileRow:
    fields: dict[str, object] = {
        "engine": engine,
        "scenario": scenario,
        "kind": "scenario",
        "status": "ok",
        "llm_calls": 2,
        "tool_calls": 1,
        "calls_per_run": (calls, calls),
        "wall_ms": (4.0,),
        "sampled_wall_ms": (4.4,),
        "cprofile_wall_ms": (10.0,),
        "mock_ms": (0.4,),
        "send_depths": (27, 27),
        "send_modules": (14, 14),
        "send_classes": (11, 11),
        "tool_depths": (14,),
        "tool_modules": (8,),
        "tool_classes": (7,),
        "samples": sum(samples.values()),
        "samples_by_group": samples,
        "leaf_samples_by_group": samples,
        "cprofile_ms_by_group": {g: float(n) for g, n in samples.items()},
        "samples_in_mock": 1,
    }
    fields.update(kw)
    return ProfileRow.model_validate(fields)


ROWS = [
    _row("raw", "single_tool", 700, {"httpx": 50, "harness": 50}),
    _row(
        "raw", "single_tool+tool", 790, {}, kind="variant", variant_of="single_tool", tool_calls=2
    ),
    _row(
        "raw", "single_tool+step", 1100, {}, kind="variant", variant_of="single_tool", llm_calls=3
    ),
    _row(
        "lc-create-agent",
        "single_tool",
        20_000,
        {"langchain_core.callbacks": 10, "langchain_core.runnables": 10, "openai": 80},
    ),
    ProfileRow(engine="lc-react", status="error", error="the worker died"),
]


def test_the_profile_table_has_one_row_per_engine_in_registry_order() -> None:
    table = probe.profile_table(ROWS)
    assert table.columns[:3] == ("engine", "calls per LLM step", "calls per extra tool call")
    assert table.rows == (
        (
            "raw",
            "350",
            "+90",
            "+310",
            "27",
            "14 / 11",
            "14",
            "8 / 7",
            "0.00 %",
            "httpx 50 %, harness 50 %",
        ),
        (
            "lc-create-agent",
            "10,000",
            "–",
            "–",
            "27",
            "14 / 11",
            "14",
            "8 / 7",
            "20 %",
            "openai 80 %, langchain_core.callbacks 10 %, langchain_core.runnables 10 %",
        ),
        ("lc-react", "error", *["–"] * 8),
    )


def test_the_distortion_table_sets_the_profilers_against_the_plain_runs() -> None:
    table = probe.distortion_table(ROWS)
    assert [r[:4] for r in table.rows] == [
        ("raw", "2.00 ms", "2.5×", "1.1×"),
        ("lc-create-agent", "2.00 ms", "2.5×", "1.1×"),
    ]
    assert table.rows[0][4] == "httpx 50 % vs 50 %, harness 50 % vs 50 %"
    assert table.rows[0][5] == "1.00 % vs 10 %"  # 1 of 100 samples; 0.4 of 4 ms


def test_the_breakdown_frame_and_chart() -> None:
    frame = probe.breakdown_frame(ROWS)
    assert frame.to_dict("records") == [
        {"engine": "raw", "group": "httpx", "share": 0.5},
        {"engine": "raw", "group": "harness", "share": 0.5},
        {"engine": "lc-create-agent", "group": "langchain_core.callbacks", "share": 0.1},
        {"engine": "lc-create-agent", "group": "langchain_core.runnables", "share": 0.1},
        {"engine": "lc-create-agent", "group": "openai", "share": 0.8},
    ]
    with mpl.rc_context(charts.RC):
        fig = charts.package_breakdown(frame)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["raw", "lc-create-agent"]
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == [
        "langchain_core.callbacks",
        "langchain_core.runnables",
        "openai",
        "httpx",
        "harness",
    ]
    with pytest.raises(NoData):
        charts.package_breakdown(pd.DataFrame(columns=["engine", "group", "share"]))
