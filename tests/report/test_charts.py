"""Charts: PNG + SVG files for every chart; missing data skips a chart with a note."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from bench.report import charts
from bench.report.build import Report, build_report
from bench.report.palette import STYLES, style
from tests.report.synth import ENGINES, Params, make

KEYS = [spec.key for spec in charts.CHARTS]


def test_every_chart_is_written_as_png_and_svg(hostile_report: Report) -> None:
    assert hostile_report.skipped == ()
    names = sorted(p.name for p in hostile_report.charts)
    assert names == sorted([f"{k}.png" for k in KEYS] + [f"{k}.svg" for k in KEYS])
    for path in hostile_report.charts:
        data = path.read_bytes()
        if path.suffix == ".png":
            assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
        else:
            assert ET.fromstring(data).tag == "{http://www.w3.org/2000/svg}svg"


def test_missing_inputs_skip_charts_with_a_note(tmp_path: Path) -> None:
    report = build_report(make(Params(repeats=3, with_optional=False, ttft_added_ms={})), tmp_path)
    skipped = dict(report.skipped)
    assert set(skipped) == {
        "throughput", "footprint", "ttft", "debuggability", "load_latency", "capacity",
        "package_breakdown",
    }  # fmt: skip
    assert skipped["throughput"] == "no throughput sweep in this run"
    assert not (tmp_path / "charts" / "throughput.png").exists()
    assert (tmp_path / "charts" / "latency.png").exists()
    md = report.markdown.read_text(encoding="utf-8")
    assert (
        "> **Note:** Chart 'Throughput and p95 latency against concurrency' skipped: no throughput sweep in this run."
        in md
    )
    assert "Chart 'footprint' skipped: no footprint measurements in this run." in md  # caveats


def test_a_chart_that_breaks_does_not_break_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_data: object) -> Figure:
        raise ZeroDivisionError("boom")

    spec = charts.ChartSpec("tokens", "Tokens", "caption", broken)
    monkeypatch.setattr(charts, "CHARTS", (spec,))
    report = build_report(make(Params(repeats=3, with_optional=False)), tmp_path)
    assert dict(report.skipped)["tokens"] == "failed to draw (ZeroDivisionError: boom)"


@pytest.mark.parametrize(
    ("draw", "frame"),
    [
        (charts.overhead_per_step, pd.DataFrame()),
        (charts.throughput, None),
        (charts.tokens, pd.DataFrame(columns=["engine", "tokens_per_request"])),
        (charts.footprint, None),
        (charts.ttft, pd.DataFrame()),
        (charts.debuggability, None),
        (charts.fault_matrix, pd.DataFrame(columns=["engine", "scenario", "outcome"])),
        (charts.latency_by_scenario, pd.DataFrame()),
        (charts.overhead_share, pd.DataFrame()),
    ],
)
def test_empty_input_raises_no_data(draw, frame) -> None:
    with pytest.raises(charts.NoData):
        draw(frame)


def test_engines_keep_one_distinct_style() -> None:
    from bench.engines.registry import REGISTRY

    # outcome-only variants are only drawn in the fault matrix, coloured by outcome
    drawn = [s for e, s in STYLES.items() if not REGISTRY[e].outcome_only]
    assert len({s.color for s in drawn}) == len(drawn)
    assert len({s.marker for s in drawn}) == len(drawn)
    assert len({s.hatch for s in drawn}) == len(drawn)  # greyscale: hatch differs
    assert style("someone-new") == style("someone-new")


def test_overhead_chart_labels_and_log_axis() -> None:
    from bench.report import analysis

    with __import__("matplotlib").rc_context(charts.RC):
        fig = charts.overhead_per_step(analysis.step_overhead(make(Params(repeats=3))))
    (ax,) = fig.axes
    assert ax.get_xscale() == "log"
    assert "ms" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == [e for e in STYLES if e in ENGINES]


def test_charts_drawn_in_processes_are_the_charts_drawn_in_turn(tmp_path: Path) -> None:
    """``render_charts`` forks a process per core; every file is byte for byte what one
    process draws (the SVG ids are salted: ``svg.hashsalt``), and a skipped chart says so
    either way."""
    from bench.report.build import render_charts

    data = make(Params(repeats=3, with_optional=False, ttft_added_ms={}))
    one = render_charts(data, tmp_path / "one", jobs=1)
    two = render_charts(data, tmp_path / "two", jobs=2)
    assert one[2] == two[2] and one[2]  # the same charts skipped, with the same reasons
    assert [p.name for p in one[1]] == [p.name for p in two[1]] and one[1]
    for a, b in zip(one[1], two[1], strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
