"""``schedbench debug-score``: writes debuggability.csv and prints the table."""

from __future__ import annotations

from bench.cli import main
from bench.debuggability.csvrows import read_rows
from bench.engines import ENGINE_NAMES


def test_debug_score_writes_the_csv_and_prints_the_table(tmp_path, capsys) -> None:
    argv = ["debug-score", "--out", str(tmp_path), "--engines", "raw", "--scenarios"]
    argv += ["single_tool", "--cost-runs", "1", "--table", "single_tool"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"wrote {tmp_path / 'debuggability.csv'}"
    assert lines[1:3] == [
        "| engine | mode | single_tool recall | bytes | B/fact | mode cost / run |",
        "|---|---|---|---|---|---|",
    ]
    assert lines[3].startswith("| raw | none | 0.00 | 0 | – | ")
    rows = read_rows(tmp_path / "debuggability.csv")
    assert [(r["engine"], r["mode"], r["scenario"]) for r in rows] == [
        ("raw", "none", "single_tool")
    ]


def test_debug_score_rejects_unknown_names(tmp_path, capsys) -> None:
    assert main(["debug-score", "--out", str(tmp_path), "--engines", "raw,nope"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "schedbench debug-score: error: unknown engine 'nope'; valid engines: "
        + ", ".join(ENGINE_NAMES)
    ]
    assert not (tmp_path / "debuggability.csv").exists()
