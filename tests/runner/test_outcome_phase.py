"""The outcome phase (bench.runner.phases.outcomes): fault cells once, in concurrent lanes.

Run through the command, on the real scheduler and a fake that always fails at once, over
built-in fault scenarios whose outcomes hang on deadlines and retries.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.runner.conftest import start_schedbench

FAULTS = ("tool_flaky", "llm_rate_limit", "max_steps", "tool_timeout")
ONLY_OUTCOMES = ("--no-ttft", "--no-throughput", "--no-footprint", "--no-load", "--rounds", "1")


def _run(out: Path, engines: str, lanes: int) -> list[dict]:
    process = start_schedbench(
        "run",
        "--engines",
        engines,
        "--scenarios",
        ",".join(("single_tool", *FAULTS)),
        "--outcome-lanes",
        str(lanes),
        *ONLY_OUTCOMES,
        "--out",
        str(out),
    )
    _, stderr = process.communicate(timeout=300)
    assert (out / "meta.json").exists(), stderr
    meta = json.loads((out / "meta.json").read_text())
    assert "outcomes" in meta["outcome"]["phase_s"]
    lines = (out / "runs.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _outcomes(rows: list[dict]) -> set[tuple]:
    return {
        (
            r["engine"],
            r["scenario"],
            r["repeat"],
            r["status"],
            r["termination"],
            r["expect_ok"],
            r["llm_calls"],
            r["tool_calls"],
        )
        for r in rows
        if r["scenario"] in FAULTS
    }


def test_one_lane_and_several_judge_every_fault_cell_alike(tmp_path):
    engines = "scheduler,fake-failing"
    one = _run(tmp_path / "one", engines, lanes=1)
    three = _run(tmp_path / "three", engines, lanes=3)
    assert _outcomes(one) == _outcomes(three)
    faults = [r for r in three if r["scenario"] in FAULTS]
    assert {(r["engine"], r["scenario"]) for r in faults} == {
        (e, s) for e in engines.split(",") for s in FAULTS
    }
    assert {r["round"] for r in faults} == {0} and {r["phase"] for r in faults} == {"timed"}
    # the scheduler meets every expectation: one run per cell
    ours = [r for r in faults if r["engine"] == "scheduler"]
    assert all(r["expect_ok"] for r in ours) and {r["repeat"] for r in ours} == {0}
    # the happy path stays in the suite, timed over its budgeted repeats
    assert sum(r["scenario"] == "single_tool" and r["phase"] == "timed" for r in three) > 2


def test_a_cell_that_misses_its_expectation_is_run_again_to_tell_a_flake(tmp_path):
    rows = _run(tmp_path / "run", "fake-failing", lanes=2)
    for scenario in FAULTS:
        failing = [r for r in rows if r["scenario"] == scenario]
        assert sorted(r["repeat"] for r in failing) == [0, 1, 2]  # one run + two confirmations
        assert not any(r["expect_ok"] for r in failing)
