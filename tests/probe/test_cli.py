"""``schedbench probe``: fresh workers per engine, profile.jsonl, the console table."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli import main
from bench.results.folder import read_rows
from tests.probe.deep_engines import EXTRA

DEEP = "deep-raw=tests.probe.deep_engines:DeepRawEngine"


def test_probe_writes_a_row_per_engine_and_scenario(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SCHEDBENCH_EXTRA_ENGINES", DEEP)
    assert main(["probe", "--out", str(tmp_path), "--engines", "raw,deep-raw", "--quick"]) == 0
    rows = read_rows(tmp_path / "profile.jsonl").rows
    # engines are probed one per core, so their rows interleave; each engine's keep their order
    order = {"raw": 0, "deep-raw": 1}
    rows = sorted(rows, key=lambda r: order[r.engine])
    assert [(r.engine, r.scenario, r.kind, r.status) for r in rows] == [
        (engine, scenario, kind, "ok")
        for engine in ("raw", "deep-raw")
        for scenario, kind in (
            ("customer_returns", "scenario"),
            ("single_tool", "scenario"),
            ("single_tool+tool", "variant"),
            ("single_tool+step", "variant"),
        )
    ]
    by = {(r.engine, r.scenario): r for r in rows}
    for scenario in ("customer_returns", "single_tool"):
        raw, deep = by[("raw", scenario)], by[("deep-raw", scenario)]
        assert deep.send_depths == tuple(d + EXTRA for d in raw.send_depths)
        assert deep.tool_depths == tuple(d + EXTRA for d in raw.tool_depths)
        assert len(set(raw.calls_per_run)) == 1  # the raw loop: the same count every run
        assert deep.calls_per_run[0] > raw.calls_per_run[0]
        assert raw.samples and raw.cprofile_ms_by_group and raw.wall_ms
    plus = by[("raw", "single_tool+tool")], by[("raw", "single_tool+step")]
    assert [(r.llm_calls, r.tool_calls) for r in plus] == [(2, 2), (3, 2)]
    assert plus[0].samples is None  # the variants are counted only
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"wrote {tmp_path / 'profile.jsonl'} in ")
    assert out.splitlines()[1].split()[:3] == ["engine", "calls/step", "calls/tool"]
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["raw", "deep-raw"]


def test_unknown_engine_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", "--out", str(tmp_path), "--engines", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedbench probe: error: unknown engine 'nope'; valid engines: raw,")
    assert not (tmp_path / "profile.jsonl").exists()
