"""The load phase in the report: its frames, its two charts and its section."""

from __future__ import annotations

import math

import pytest
from matplotlib.figure import Figure

from bench.report import charts, load_section
from bench.report.document import Note, Table
from bench.results import metrics
from tests.report.synth import Params, load_rows, make

CAPACITIES = {"raw": 150.0, "scheduler": 120.0, "lc-create-agent": 30.0}


def levels():
    return metrics.load_levels(load_rows(CAPACITIES))


def test_the_frames_hold_one_row_per_level_and_per_sweep():
    frame = load_section.load_frame(levels())
    assert list(frame.columns) == load_section.LOAD_FRAME_COLUMNS
    assert len(frame) == 3 * 2 * 5
    sustained = frame[(frame["engine"] == "raw") & (frame["processes"] == 1)]["sustained"]
    assert sustained.tolist() == [True, True, True, False, False]
    caps = load_section.capacity_frame(levels()).set_index(["engine", "processes"])
    assert list(caps.columns) == load_section.CAPACITY_FRAME_COLUMNS[2:]
    assert caps.loc[("raw", 1), ["rate", "above"]].tolist() == [100.0, 200.0]
    assert caps.loc[("raw", 2), ["rate", "above"]].tolist() == [200.0, 400.0]
    assert caps.loc[("lc-create-agent", 1), "rate"] == 25.0
    # 0.3 CPU s over 100 completions at 100 runs/s: 3 ms a run, 0.3 cores for 100 runs/s
    assert caps.loc[("raw", 1), "cores_100"] == pytest.approx(0.3)


def test_the_charts_draw_a_panel_per_process_count():
    fig = charts.load_latency(load_section.load_frame(levels()))
    assert isinstance(fig, Figure)
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["1 engine process", "2 engine processes"]
    # per engine: a p50 and a p99 line, each with filled and hollow markers
    assert len(panels[0].get_lines()) == 3 * 2 * 3 + 2  # + the target and the scripted line
    fig = charts.capacity(load_section.capacity_frame(levels()))
    titles = [ax.get_title() for ax in fig.axes]
    assert titles == ["Capacity at the latency target", "Cores needed for 100 runs/s"]


@pytest.mark.parametrize("draw", [charts.load_latency, charts.capacity])
def test_no_load_levels_raise_no_data(draw):
    with pytest.raises(charts.NoData):
        frame = (
            load_section.load_frame if draw is charts.load_latency else load_section.capacity_frame
        )
        draw(frame([]))


def test_the_section_gives_the_capacity_of_every_sweep():
    data = make(Params(repeats=3))
    section = load_section.load_phase(data, {})
    assert section.title == "Load: capacity under a latency target"
    table = next(b for b in section.blocks if isinstance(b, Table))
    rows = {(r[0], r[2]): r for r in table.rows}
    for (engine, processes), cap in metrics.capacities(data.load_levels).items():
        row = rows[(engine, str(processes))]
        assert row[3] == cap.text
        assert row[4] == (f"{cap.above:g}" if cap.above is not None else "–")
    assert section.subsections[0].title == "Every level"
    details = section.subsections[0].blocks[0]
    assert len(details.rows) == len(data.load_levels)


def test_the_section_compares_the_self_built_tail_with_the_floor():
    data = make(Params(repeats=3))
    section = load_section.load_phase(data, {})
    tail = [b for b in section.blocks if isinstance(b, Table) and "ratio (95 % CI)" in b.columns]
    assert len(tail) == 1
    engines = {r[0] for r in tail[0].rows}
    assert engines == {"scheduler", "scheduler-plain"}  # both self-built configurations
    for row in tail[0].rows:
        rate = float(row[2])
        assert rate <= capacity_of(data, "raw", int(row[1]))
        assert rate <= capacity_of(data, row[0], int(row[1]))


def capacity_of(data, engine, processes):
    cap = metrics.capacities(data.load_levels)[(engine, processes)]
    return cap.rate if cap.rate is not None else math.nan


def test_a_run_without_a_load_phase_says_so():
    section = load_section.load_phase(make(Params(repeats=3, with_optional=False)), {})
    assert section.blocks == (Note("No load phase in this run (load.jsonl)."),)


def test_every_capacity_is_printed_as_its_bracket_beside_the_hosts_ceiling():
    caps = metrics.capacities(levels())
    raw = caps[("raw", 1)]
    assert raw.text == "sustains 100, not 200 (±41 %)"
    top = metrics.Capacity("x", 1, 2400.0, 400.0, None, None, None, None, False, False)
    assert top.text == "≥ 400 (the highest tried)"
    none = metrics.Capacity("x", 1, 2400.0, None, 10.0, 10.0, None, None, False, False)
    assert none.text == "< 10 (none sustained)"
    section = load_section.load_phase(make(Params(repeats=3)), {})
    table = next(b for b in section.blocks if isinstance(b, Table))
    column = table.columns.index("host's ceiling (bare loop)")
    hosts = load_section.host_ceilings(metrics.capacities(make(Params(repeats=3)).load_levels))
    for row in table.rows:
        assert row[column] == hosts[int(row[2])]
    assert "CPU per run at the common rate" in table.columns


def test_the_sensitivity_row_rejudges_each_sweep_and_never_invents():
    b = metrics.Bracket(1.5, 74.0, None, 1, 10.0)
    assert load_section.bracket_text(b) == "≥ 74 (higher unknown)"
    assert load_section.bracket_text(metrics.Bracket(1.1, 60.0, 74.0, 0, 10.0)) == "60–74"
    top = metrics.Bracket(1.5, 74.0, None, 0, 10.0)
    assert load_section.bracket_text(top) == "≥ 74 (the highest tried)"
    assert load_section.bracket_text(metrics.Bracket(1.1, None, 10.0, 0, 10.0)) == "< 10"
    assert load_section.bracket_text(metrics.Bracket(1.5, None, None, 3, 10.0)) == "unknown"
    section = load_section.load_phase(make(Params(repeats=3)), {})
    sens = next(
        b for b in section.blocks if isinstance(b, Table) and "p95 ≤ 1.1× scripted" in b.columns
    )
    assert [c for c in sens.columns if c.startswith("p95")] == [
        f"p95 ≤ {f:g}× scripted" for f in metrics.SENSITIVITY_FACTORS
    ]
    assert len(sens.rows) == len(metrics.by_sweep(make(Params(repeats=3)).load_levels))
