"""debuggability.csv: columns, the zero line, the scheduler's full recall, exhibits."""

from __future__ import annotations

from bench.debug.results import COLUMNS, markdown_table, read_rows, write_debuggability


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
    assert raw["mode_cost_ms"] == "0.0" or abs(float(raw["mode_cost_ms"])) < 5
    full = by["scheduler", "json", "customer_returns"]
    assert (full["recall"], full["missed"], full["structured"]) == ("1.0", "", "1")
    assert full["facts_found"] == full["facts_total"]
    assert float(full["bytes_per_fact"]) == round(int(full["bytes"]) / int(full["facts_found"]), 1)
    assert full["cost_scenario"] == "customer_returns" and full["cost_runs"] == "2"
    flaky = by["scheduler", "json", "tool_flaky"]
    assert (flaky["failure_step"], flaky["localised"], flaky["loc_step"]) == ("1", "1", "1")
    tree = by["scheduler", "tree", "tool_flaky"]
    assert (tree["loc_tool"], tree["loc_error"], tree["loc_step"]) == (
        "1",
        "1",
        "1",
    )  # print_tree labels each step
    exhibit = tmp_path / "debug" / "customer_returns" / "scheduler.json.json"
    assert exhibit.read_text().startswith("{")
    assert (tmp_path / "debug" / "tool_flaky" / "scheduler.tree.txt").is_file()


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
