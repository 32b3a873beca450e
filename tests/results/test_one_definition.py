"""One definition, two readers: the report (``bench.report.from_folder`` → ``RunData``) and
``bench.results.per_engine`` derive a missing overhead by the same formula
(``bench.results.rows.run_overhead_ms``) and count the same scenarios as happy paths
(``bench.model.scenarios.happy_paths``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.model.scenarios import happy_paths, performance_scenarios
from bench.report.from_folder import load_run_dir
from bench.results import per_engine
from bench.results.folder import load_run_folder
from bench.results.rows import RunRow, run_overhead_ms
from bench.results.store import RunStore
from scenarios import load_scenarios
from scenarios.loader import scenario_files
from tests.results.folders import config, meta, run_row

# a row without overhead_ms (a run recorded before the field), with parts present or missing
LEGACY = [
    {"wall_ms": 10.3, "mock_latency_ms": 1.1, "tool_ms": 0.7, "waited_ms": 2.9},
    {"wall_ms": 10.3, "mock_latency_ms": 1.1, "tool_ms": 0.7, "waited_ms": None},
    {"wall_ms": 7.77, "mock_latency_ms": None, "tool_ms": None, "waited_ms": None},
    {"wall_ms": None, "mock_latency_ms": 1.0, "tool_ms": 0.5, "waited_ms": 0.0},
    {"wall_ms": 0.3, "mock_latency_ms": 0.1, "tool_ms": 0.2, "waited_ms": 0.0},
]


def _write(directory: Path, rows: list[dict], scenario_dir: Path | None) -> Path:
    with RunStore(directory) as store:
        store.create()
        store.write_meta(
            meta(config={**config(), "scenario_dir": scenario_dir and str(scenario_dir)})
        )
        for row in rows:
            store.append("runs.jsonl", row)
    return directory


def test_the_report_and_per_engine_derive_the_same_missing_overhead(tmp_path: Path) -> None:
    rows = [
        {**run_row("raw", "customer_returns", repeat, 1.0, overhead_ms=None), **parts}
        for repeat, parts in enumerate(LEGACY)
    ]
    rows.append(run_row("raw", "customer_returns", len(LEGACY), 5.0))  # overhead_ms kept
    folder = load_run_folder(_write(tmp_path / "run", rows, None))
    timed = list(folder.timed_runs)
    steps = per_engine.step_runs(timed)
    assert len(steps) == len(rows)
    frame = load_run_dir(tmp_path / "run").runs.set_index("repeat")["overhead_ms"]
    for row, step in zip(timed, steps, strict=True):
        mine = run_overhead_ms(row)
        reported = frame[row.repeat]
        if mine is None:  # no wall time: unknown to both
            assert step.overhead_ms is None and reported != reported
        else:
            assert step.overhead_ms == mine == reported  # bit for bit, not approximately
    # the formula: wall - mock - tool - waits, a missing part counted 0
    assert frame[0] == 10.3 - 1.1 - 0.7 - 2.9
    assert frame[1] == 10.3 - 1.1 - 0.7
    assert frame[2] == 7.77
    assert frame[len(LEGACY)] == 5.0 - 0.01  # a stored overhead is never re-derived


def test_run_overhead_ms_reads_nan_as_missing() -> None:
    class Frame:  # a report frame's row: missing numbers are NaN
        overhead_ms = float("nan")
        wall_ms = 4.0
        mock_latency_ms = float("nan")
        tool_ms = 1.5
        waited_ms = float("nan")

    assert run_overhead_ms(Frame()) == 2.5
    row = RunRow.model_validate_json(
        json.dumps(run_row("raw", "single_tool", 0, 3.0, overhead_ms=None))
    )
    assert run_overhead_ms(row) == 3.0 - 0.01


@pytest.mark.parametrize("readable", [True, False])
def test_the_report_and_per_engine_count_the_same_happy_paths(
    tmp_path: Path, readable: bool
) -> None:
    library = load_scenarios()
    happy = next(n for n, s in library.items() if s.is_performance and not s.is_fault)
    fault = next(n for n, s in library.items() if s.is_fault and not s.is_performance)
    scenario_dir = tmp_path / "scenarios"
    scenario_dir.mkdir()
    for path in scenario_files(None):
        if path.stem in (happy, fault):
            shutil.copy(path, scenario_dir / path.name)
    if not readable:
        (scenario_dir / "broken.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    ran = (happy, fault, "gone_from_the_folder")  # the last one's file is gone
    rows = [run_row("raw", name, 0, 1.0) for name in ran]
    data = load_run_dir(_write(tmp_path / "run", rows, scenario_dir))
    reported = set(data.scenarios.loc[data.scenarios["performance"], "scenario"])
    expected = performance_scenarios(scenario_dir, ran)
    assert reported == expected
    if readable:
        assert expected == {happy, "gone_from_the_folder"}
        assert any("treated as happy-path" in note for note in data.notes)
        assert expected == happy_paths(load_scenarios(scenario_dir), ran)
    else:
        assert expected == set(ran) == happy_paths(None, ran)
