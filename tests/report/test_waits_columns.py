"""The report shows waits by choice beside the overhead, and LLM calls and prompt tokens per
run, per engine and scenario; runs recorded before ``waited_ms`` show it as unknown."""

from __future__ import annotations

import math

from bench.report import analysis, sections
from bench.report.document import Section, Table
from bench.report.frames import RUN_COLUMNS
from tests.report.synth import LC_PROD, make


def _table(section: Section, scenario: str) -> Table:
    (sub,) = [s for s in section.subsections if s.title == scenario]
    (table,) = [b for b in sub.blocks if isinstance(b, Table)]
    return table


def _cell(table: Table, engine: str, column: str) -> str:
    (row,) = [r for r in table.rows if r[0] == engine]
    return str(row[table.columns.index(column)])


def test_the_per_scenario_table_shows_waits_calls_and_prompt_tokens_per_run():
    data = make()
    runs = data.runs.copy()
    backoff = (runs["engine"] == LC_PROD) & (runs["scenario"] == "tool_flaky")
    runs["waited_ms"] = 0.0
    runs.loc[backoff, "waited_ms"] = 300.0
    data = data.with_(runs=runs)
    cells = analysis.scenario_stats(data).set_index(["engine", "scenario"])
    assert cells.loc[(LC_PROD, "tool_flaky"), "waited_ms"] == 300.0
    assert cells.loc[("raw", "tool_flaky"), "waited_ms"] == 0.0
    table = _table(sections.per_scenario(data), "tool_flaky")
    assert _cell(table, LC_PROD, "waits / run") == "300 ms"
    assert _cell(table, "raw", "waits / run") == "0 µs"
    flaky = runs[(runs["engine"] == LC_PROD) & (runs["scenario"] == "tool_flaky")]
    assert _cell(table, LC_PROD, "LLM calls") == f"{flaky['llm_calls'].median():g}"
    assert _cell(table, LC_PROD, "prompt tokens / run") == f"{flaky['prompt_tokens'].median():,.0f}"
    assert "not in the overhead" in table.caption


def test_runs_recorded_before_waited_ms_show_waits_as_unknown():
    data = make()  # synthetic rows, like an old run folder: no waited_ms
    assert data.runs["waited_ms"].isna().all()
    cells = analysis.scenario_stats(data)
    assert cells["waited_ms"].map(math.isnan).all()
    table = _table(sections.per_scenario(data), "tool_flaky")
    assert {_cell(table, e, "waits / run") for e in cells["engine"].unique()} == {"–"}
    assert "unknown" in table.caption
    steps = analysis.step_overhead(data)
    assert steps["waited_median_ms"].map(math.isnan).all()
    perf = next(b for b in sections.performance(data, {}).blocks if isinstance(b, Table))
    assert "waits / run" in perf.columns and "waits by choice" in perf.caption


def test_the_column_labels_say_what_overhead_leaves_out():
    assert "waits by choice" in RUN_COLUMNS["overhead_ms"]
    assert "unknown" in RUN_COLUMNS["waited_ms"]
