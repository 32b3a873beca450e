"""The result files' fields are described once, in their row models and metric lists, and
docs/measurement.md's tables of them are rendered from there: the committed docs must be what
the code renders, and a field or metric added to the code reaches the docs, the report's run
frame and its per-scenario cells without being written again."""

from __future__ import annotations

import pytest

from bench.report import analysis
from bench.report.frames import NUMERIC_RUN_COLUMNS, RUN_COLUMNS
from bench.results import schema_docs
from bench.results.metrics import MEDIAN_METRICS
from bench.results.rows import RunMeasurement, RunRow
from tests.report.synth import make


def test_the_committed_docs_are_the_rendered_tables():
    text = schema_docs.DOC.read_text(encoding="utf-8")
    assert schema_docs.render(text) == text, "run: python -m bench.results.schema_docs"
    assert schema_docs.main(["--check"]) == 0


def test_every_run_field_is_described_and_documented():
    text = schema_docs.DOC.read_text(encoding="utf-8")
    for name, info in RunRow.model_fields.items():
        assert info.description, f"RunRow.{name} has no description"
        assert f"| `{name}` |" in text
    for name in MEDIAN_METRICS:
        assert f"`{name}_median`" in text


def test_a_stale_table_is_rewritten_and_a_missing_block_is_an_error():
    text = schema_docs.DOC.read_text(encoding="utf-8")
    stale = text.replace("| `debug_output_chars` |", "| `debug_chars` |", 1)
    assert stale != text
    assert schema_docs.render(stale) == text
    without = text.replace("<!-- generated: runs.jsonl fields", "<!-- gone", 1)
    with pytest.raises(ValueError, match=r"runs\.jsonl fields"):
        schema_docs.render(without)


@pytest.mark.parametrize(
    ("field", "label"),
    [
        ("engine", "str"),
        ("round", "int"),
        ("phase", "str"),
        ("wall_ms", "float|null"),
        ("tools", "[str]"),
        ("request_prompt_tokens", "[int|null]"),
        ("extra", "object"),
        ("crashed", "bool"),
    ],
)
def test_types_read_as_json(field, label):
    assert schema_docs.type_label(RunRow.model_fields[field].annotation) == label


def test_the_report_frame_has_a_column_per_run_field_with_its_description():
    for name, info in RunRow.model_fields.items():
        if name in ("latency", "phase", "shard", "host"):
            continue
        assert RUN_COLUMNS[name] == info.description
    assert RUN_COLUMNS["latency_profile"] == RunRow.model_fields["latency"].description
    # the measured numbers are numeric columns; labels and text are not
    assert {"wall_ms", "tool_errors", "max_tool_ms", "wait_count"} <= set(NUMERIC_RUN_COLUMNS)
    assert not {"round", "repeat", "status", "tools"} & set(NUMERIC_RUN_COLUMNS)
    assert set(NUMERIC_RUN_COLUMNS) <= set(RunMeasurement.model_fields)


def test_every_median_metric_is_a_per_scenario_cell_column():
    cells = analysis.scenario_stats(make())
    assert set(MEDIAN_METRICS) <= set(cells.columns)
    assert cells["completion_tokens"].notna().any()
