"""The schedule (budgeted repeats, interleaving, resume) and the append-only store."""

from __future__ import annotations

import json

import pytest

from bench.errors import RowRejected
from bench.results.folder import finished_repeats, read_rows
from bench.results.rows import RunRow, latest
from bench.results.store import RunStore
from bench.runner.plan import RunConfig, build_plan, estimate_run_s, repeats_for, warmup_for
from scenarios import load_scenarios, parse_scenario
from tests.runner.conftest import SCENARIO_DIR

SLOW = """
name: slow_tool
description: a tool that hangs until the run deadline cuts it
user: go
tools:
  - name: wait
    description: waits
    behavior: {hangs: true}
script:
  - tool_calls: [{name: wait}]
  - content: done
limits: {tool_timeout_s: 0.2, run_timeout_s: 1.5}
"""


@pytest.fixture(scope="module")
def scenarios():
    return load_scenarios(SCENARIO_DIR)


def config(**values) -> RunConfig:
    values.setdefault("engines", ("raw", "a", "b"))
    values.setdefault("scenarios", ("customer_returns", "single_tool"))
    return RunConfig(**values)


def test_expected_run_time_counts_steps_and_scripted_waits(scenarios):
    assert estimate_run_s(scenarios["customer_returns"]) == pytest.approx(0.017)
    assert estimate_run_s(scenarios["single_tool"], "realistic") == pytest.approx(1.812)
    slow = parse_scenario(SLOW)
    # a hung tool costs up to the run deadline (engines without a tool timeout wait for it)
    assert estimate_run_s(slow) == pytest.approx(0.002 + 2 * 0.005 + 1.5)


def test_repeats_are_budgeted_by_expected_time():
    c = config(cell_budget_s=2.0, min_repeats=5, max_repeats=60)
    assert repeats_for(0.010, c) == 60  # capped
    assert repeats_for(0.100, c) == 20
    assert repeats_for(2.000, c) == 5  # floor
    assert repeats_for(2.000, config(repeat=7)) == 7  # --repeat wins
    assert [warmup_for(s, config(warmup=2)) for s in (0.01, 0.1, 0.5)] == [2, 1, 0]


def test_batches_interleave_engines_and_rotate_their_order(scenarios):
    plan = build_plan(config(repeat=4, rounds=2, warmup=1), scenarios)
    order = [(b.round, b.scenario, b.engine, b.repeats) for b in plan.batches]
    assert order == [
        (0, "customer_returns", "raw", (0, 1)),
        (0, "customer_returns", "a", (0, 1)),
        (0, "customer_returns", "b", (0, 1)),
        (0, "single_tool", "a", (0, 1)),
        (0, "single_tool", "b", (0, 1)),
        (0, "single_tool", "raw", (0, 1)),
        (1, "customer_returns", "a", (2, 3)),
        (1, "customer_returns", "b", (2, 3)),
        (1, "customer_returns", "raw", (2, 3)),
        (1, "single_tool", "b", (2, 3)),
        (1, "single_tool", "raw", (2, 3)),
        (1, "single_tool", "a", (2, 3)),
    ]
    assert plan.timed_runs == 24
    assert {b.warmup for b in plan.batches} == {1}


def test_fewer_repeats_than_rounds_leave_rounds_empty(scenarios):
    plan = build_plan(config(repeat=1, rounds=3, engines=("raw",)), scenarios)
    assert [(b.round, b.repeats) for b in plan.batches] == [(0, (0,)), (0, (0,))]


def test_resume_plans_only_what_is_missing(scenarios):
    done = {("a", "customer_returns", "zero", 0): {0, 1}, ("b", "single_tool", "zero", 1): {3}}
    plan = build_plan(config(repeat=4, rounds=2), scenarios, done)
    keys = {(b.engine, b.scenario, b.round): b.repeats for b in plan.batches}
    assert ("a", "customer_returns", 0) not in keys
    assert keys[("b", "single_tool", 1)] == (2,)
    assert plan.timed_runs == 24 - 3


IDS = {"engine": "a", "scenario": "s", "latency": "zero", "transport": "inprocess", "round": 0}


def test_store_appends_sorted_lines_and_survives_a_torn_line(tmp_path):
    store = RunStore(tmp_path)
    store.create()
    store.append("runs.jsonl", {**IDS, "repeat": 0, "phase": "timed", "wall_ms": float("nan")})
    store.close()
    path = tmp_path / "runs.jsonl"
    first = (
        '{"engine": "a", "latency": "zero", "phase": "timed", "repeat": 0, "round": 0, '
        '"scenario": "s", "transport": "inprocess", "wall_ms": null}'
    )
    assert path.read_text() == first + "\n"
    with path.open("a") as f:
        f.write('{"engine": "a", "b"')  # a crash mid-write
    with RunStore(tmp_path) as store:
        store.append("runs.jsonl", {**IDS, "repeat": 1, "phase": "timed", "wall_ms": 3.0})
    lines = path.read_text().splitlines()
    assert lines[:2] == [first, '{"engine": "a", "b"']
    read = read_rows(path)
    assert [(r.repeat, r.wall_ms) for r in read.rows] == [(0, None), (1, 3.0)]
    assert [(s.file, s.line) for s in read.skipped] == [("runs.jsonl", 2)]


def test_the_store_refuses_a_row_its_model_would_not_read_as_written(tmp_path):
    """Strict on write: a typo is not kept as an extra field beside a missing one."""
    with RunStore(tmp_path) as store:
        store.create()
        typo = {**IDS, "repeat": 0, "phase": "timed", "wal_ms": 12.5}
        with pytest.raises(RowRejected, match="wal_ms unknown to RunRow"):
            store.append("runs.jsonl", typo)
        with pytest.raises(RowRejected, match="wall_ms"):
            store.append("runs.jsonl", {**IDS, "repeat": 0, "phase": "timed", "wall_ms": "12"})
        store.append("runs.jsonl", {**IDS, "repeat": 0, "phase": "timed", "wall_ms": 12.5})
        store.append("notes.jsonl", {"anything": 1})  # a file without a model is not checked
    assert [r.wall_ms for r in read_rows(tmp_path / "runs.jsonl").rows] == [12.5]
    # reading stays open: a newer writer's field is kept, not refused
    with (tmp_path / "runs.jsonl").open("a") as f:
        f.write(json.dumps({**IDS, "repeat": 1, "phase": "timed", "new_metric": 1}) + "\n")
    assert read_rows(tmp_path / "runs.jsonl").rows[1].model_extra == {"new_metric": 1}


def test_meta_is_written_with_sorted_keys(tmp_path):
    store = RunStore(tmp_path)
    store.create()
    store.write_meta({"z": 1, "a": {"y": 2, "b": 3}})
    text = (tmp_path / "meta.json").read_text()
    assert list(json.loads(text)) == ["a", "z"]
    assert text.index('"b"') < text.index('"y"')


def test_the_later_row_wins_and_crashed_runs_are_not_finished():
    rows = [
        RunRow.model_validate_json(json.dumps(row))
        for row in (
            {**IDS, "repeat": 0, "phase": "timed", "wall_ms": 1.0},
            {**IDS, "repeat": 1, "phase": "timed", "crashed": True},
            {**IDS, "repeat": 2, "phase": "timed", "crashed": True},
            {**IDS, "repeat": 1, "phase": "timed", "wall_ms": 2.0},
            {**IDS, "repeat": 0, "phase": "warmup", "wall_ms": 9.0},
        )
    ]
    assert [r.wall_ms for r in latest(rows)] == [1.0, 2.0, None, 9.0]
    assert finished_repeats(rows) == {("a", "s", "zero", 0): {0, 1}}


def test_progress_lines_say_what_runs_and_what_is_left():
    import io

    from bench.runner.progress import LineProgress, format_duration

    assert [format_duration(s) for s in (None, 5.4, 75, 3725)] == [
        "--:--",
        "0:05",
        "1:15",
        "1:02:05",
    ]
    stream = io.StringIO()
    progress = LineProgress(stream, every_s=0)
    progress.phase("suite", total_units=10.0, total_runs=4)
    progress.describe("round 1/2 · raw · single_tool")
    progress.advance(2.5)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[suite] 4 runs planned, ~0:10 estimated"
    assert lines[1].startswith("[suite]  25% round 1/2 · raw · single_tool: 3 runs left, ETA ")


def test_fault_scenarios_leave_the_suite_for_the_outcome_phase(monkeypatch):
    from dataclasses import replace

    from bench.engines import registry
    from bench.runner.phases.outcomes import confirm_runs, first_runs, outcome_cells
    from bench.runner.plan import measured

    variant = replace(registry.REGISTRY["raw"], name="raw-reduced", outcome_only=True)
    monkeypatch.setitem(registry.REGISTRY, "raw-reduced", variant)
    builtin = load_scenarios()
    names = ("customer_returns", "tool_timeout", "tool_flaky")  # a happy path, two faults
    config = RunConfig(engines=("raw", "raw-reduced"), scenarios=names, rounds=3)
    plan = build_plan(config, builtin)
    # the suite times every happy path on the timed engines only, over every round
    assert {(b.engine, b.scenario) for b in plan.batches} == {("raw", "customer_returns")}
    assert {b.round for b in plan.batches} == {0, 1, 2}
    # the outcome phase: every engine's fault scenarios, once each
    cells = {(c.engine, c.scenario) for c in outcome_cells(config, builtin)}
    assert cells == {(e, s) for e in config.engines for s in ("tool_timeout", "tool_flaky")}
    assert (first_runs(config), confirm_runs(config)) == (1, 2)
    repeated = replace(config, repeat=4)
    assert (first_runs(repeated), confirm_runs(repeated)) == (4, 0)
    assert measured(config.engines) == ("raw",)  # no throughput / TTFT / footprint phases


def test_quick_keeps_every_phase_but_trims_their_fixed_costs():
    """--quick (≤ 1 min for a few engines on one realistic-latency scenario): every phase
    stays on; TTFT, the load window and the mock-ceiling probe are short."""
    names = {"engines": ("raw",), "scenarios": ("customer_returns",)}
    default, quick = RunConfig(**names), RunConfig(**names, **RunConfig.quick_defaults())
    phases = ("footprint", "ttft", "throughput", "load")
    assert [getattr(quick, p) for p in phases] == [getattr(default, p) for p in phases]
    assert (default.load_window_s, default.load_probe_s) == (5.0, 1.0)
    assert (quick.ttft_repeat, quick.ttft_warmup, quick.load_window_s, quick.load_probe_s) == (
        2,
        1,
        0.25,
        0.25,
    )
