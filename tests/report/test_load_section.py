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
        assert row[3] == load_section.capacity_text(cap)
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
