"""debuggability.csv: columns, the zero line, the scheduler's full recall, exhibits."""

from __future__ import annotations

from bench.debuggability.csvrows import read_rows
from bench.debuggability.results import COLUMNS, markdown_table, write_debuggability


def test_write_debuggability(tmp_path) -> None:
    path = write_debuggability(
        tmp_path, ["raw", "scheduler"], ["customer_returns", "tool_flaky"], cost_runs=2
    )
    assert path == tmp_path / "debuggability.csv"
    assert path.read_text().splitlines()[0] == ",".join(COLUMNS)
    rows = read_rows(path)
    assert [(r["engine"], r["mode"], r["scenario"]) for r in rows] == [
        ("raw", "none", "customer_returns"),
        ("raw", "none", "tool_flaky"),
        ("scheduler", "tree", "customer_returns"),
        ("scheduler", "tree", "tool_flaky"),
        ("scheduler", "json", "customer_returns"),
        ("scheduler", "json", "tool_flaky"),
    ]
    by = {(r["engine"], r["mode"], r["scenario"]): r for r in rows}
    raw = by["raw", "none", "customer_returns"]
    assert (raw["recall"], raw["bytes"], raw["bytes_per_fact"], raw["localised"]) == (
        "0.0",
        "0",
        "",
        "",
    )
    # "none" is the mode off: no cost, and the off runs measured all the same
    assert raw["mode_cost_ms"] == "0.0" and raw["mode_off_ms"] == raw["mode_on_ms"]
    assert float(raw["mode_off_ms"]) > 0
    full = by["scheduler", "json", "customer_returns"]
    assert (full["recall"], full["missed"], full["structured"]) == ("1.0", "", "1")
    assert full["facts_found"] == full["facts_total"]
    assert float(full["bytes_per_fact"]) == round(int(full["bytes"]) / int(full["facts_found"]), 1)
    assert full["cost_scenario"] == "customer_returns" and full["cost_runs"] == "2"
    # the first of three identical track_parcel calls failed: the JSON tells it by its step
    # label, its call id and its place in the steps' order; the tree by step and order
    flaky = by["scheduler", "json", "tool_flaky"]
    failure = ("failure_step", "failure_call", "failure_index", "failure_peers")
    assert [flaky[c] for c in failure] == ["1", "track_parcel", "1", "3"]
    assert (flaky["loc_position"], flaky["loc_how"], flaky["localised"]) == (
        "1",
        "step+id+order",
        "1",
    )
    tree = by["scheduler", "tree", "tool_flaky"]
    loc = ("loc_tool", "loc_error", "loc_position", "loc_how", "localised")
    assert [tree[c] for c in loc] == ["1", "1", "1", "step+order", "1"]
    # every output is written, and the row links it and quotes the lines around the failure
    for row in rows:
        written = tmp_path / row["output_path"]
        ext = "json" if row["mode"] == "json" else "txt"
        assert row["output_path"] == f"debug/{row['scenario']}/{row['engine']}.{row['mode']}.{ext}"
        assert written.is_file() and written.stat().st_size == int(row["bytes"])
    assert (raw["excerpt_line"], raw["excerpt"]) == ("0", "")
    lines = (tmp_path / tree["output_path"]).read_text().splitlines()
    start = int(tree["excerpt_line"])
    shown = tree["excerpt"].splitlines()
    assert shown == [line.rstrip() for line in lines[start - 1 : start - 1 + len(shown)]]
    assert "[Tool: track_parcel]" in tree["excerpt"] and "ConnectionResetError" in tree["excerpt"]
    done = by["scheduler", "tree", "customer_returns"]
    assert "Order A123 (trail shoes" in done["excerpt"]  # no failure: the final answer


def test_markdown_table() -> None:
    rows = [
        {
            "engine": "raw",
            "mode": "none",
            "scenario": "a",
            "recall": "0.0",
            "bytes": "0",
            "bytes_per_fact": "",
            "mode_cost_ms": "0.0",
        },
        {
            "engine": "scheduler",
            "mode": "json",
            "scenario": "a",
            "recall": "1.0",
            "bytes": "10245",
            "bytes_per_fact": "445.4",
            "mode_cost_ms": "0.123",
        },
    ]
    assert markdown_table(rows, ["a"]).splitlines() == [
        "| engine | mode | a recall | bytes | B/fact | mode cost / run |",
        "|---|---|---|---|---|---|",
        "| raw | none | 0.00 | 0 | – | +0 µs |",
        "| scheduler | json | 1.00 | 10,245 | 445 | +123 µs |",
    ]
