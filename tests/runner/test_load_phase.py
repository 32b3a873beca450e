"""The load phase end to end on fake engines: load.jsonl, load.csv, verdicts, and bad input."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys

import pytest

from bench.cli import main
from bench.results import metrics
from bench.results.folder import load_run_folder
from bench.runner.phases.load import plan as loadplan
from tests.once import once
from tests.runner.conftest import ROOT, SCENARIO_DIR, schedbench_env

LOAD_ENGINES = ("raw", "fake-hog", "fake-wrong", "fake-failing")


@pytest.fixture(scope="module")
def load_run(tmp_path_factory):
    def build(folder):
        out = folder / "run"
        done = subprocess.run(
            [sys.executable, "-m", "bench.cli", "run", "--quick", "--out", str(out),
             "--engines", "raw", "--scenarios", "customer_returns",
             "--scenario-dir", str(SCENARIO_DIR), "--no-throughput", "--no-footprint",
             "--no-ttft", "--load-engines", ",".join(LOAD_ENGINES), "--load-processes", "1,2"],
            cwd=ROOT, env=schedbench_env(), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:]
        return out, done

    return tuple(once(tmp_path_factory, "load-run", build))


def levels_of(out):
    return {(v.engine, v.processes): v for v in metrics.load_levels(load_run_folder(out).load)}


def rows_of(out):
    return [json.loads(line) for line in (out / "load.jsonl").read_text().splitlines()]


def test_every_engine_and_process_count_has_its_level(load_run):
    out, done = load_run
    rows = rows_of(out)
    levels = [r for r in rows if r["kind"] == "level"]
    assert sorted((r["engine"], r["processes"], r["rate"]) for r in levels) == sorted(
        (e, p, 20.0) for e in LOAD_ENGINES for p in (1, 2)
    )
    for row in levels:
        assert (row["scenario"], row["latency"], row["transport"]) == (
            "customer_returns", "realistic", "loopback"
        )  # fmt: skip
        assert len(row["pids"]) == row["processes"] == len(set(row["pids"]))
        assert row["mock_processes"] == 2 and not row.get("crashed", False)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["outcome"]["load_levels"] == 8 and meta["outcome"]["crashed_load_levels"] == 0
    assert meta["complete"] is True
    assert "Load: the offered rate sustained with p95" in done.stdout


def test_the_schedule_sets_the_rate_not_the_engine(load_run):
    out, _ = load_run
    config = json.loads((out / "meta.json").read_text())["config"]
    for row in (r for r in rows_of(out) if r["kind"] == "level"):
        plan = loadplan.level_plan(
            row["rate"], row["processes"], seed=config["seed"],
            scripted_ms=row["scripted_ms"], target_factor=config["load_target_factor"],
            window_s=config["load_window_s"], min_runs=config["load_min_runs"],
            ramp=config["load_ramp"], timeout_factor=config["load_timeout_factor"],
            error_budget=metrics.LOAD_ERROR_BUDGET, max_arrivals=config["load_max_arrivals"],
        )  # fmt: skip
        # the same measured arrivals for every engine, slow or fast
        assert row["scheduled"] == plan.measured


def test_a_slow_engine_accumulates_latency_from_the_scheduled_start(load_run):
    out, _ = load_run
    levels = levels_of(out)
    for processes in (1, 2):
        raw, hog = levels[("raw", processes)], levels[("fake-hog", processes)]
        # raw keeps up: every run ok, each at least the mock's scripted latency
        assert raw.ok == raw.scheduled > 0
        assert min(raw.percentiles[50.0].resamples) >= raw.scripted_ms - 5
        # the hog holds its loop 240 ms a run at 20 runs/s: its queue shows in its latency
        assert not hog.sustained
        assert hog.p95.point > hog.target_ms > raw.p95.point


def test_failing_and_wrong_engines_are_errors_not_fast_successes(load_run):
    out, _ = load_run
    levels = levels_of(out)
    for processes in (1, 2):
        failing, wrong = levels[("fake-failing", processes)], levels[("fake-wrong", processes)]
        assert failing.ok == 0 and failing.errors >= 1 and not failing.sustained
        assert failing.stopped == "errors"
        assert failing.p95.point != failing.p95.point  # NaN: no latency counts as fast
        assert (wrong.ok, wrong.errors) == (0, wrong.scheduled) and not wrong.sustained
        assert wrong.achieved_rate == 0.0
    caps = metrics.capacities(metrics.load_levels(load_run_folder(out).load))
    assert caps[("fake-failing", 1)].rate is None and caps[("fake-wrong", 2)].rate is None


def test_the_mock_ceiling_is_measured(load_run):
    out, _ = load_run
    probes = [r for r in rows_of(out) if r["kind"] == "mock"]
    assert [p["stream"] for p in probes] == [False, True]
    for probe in probes:
        assert probe["processes"] == 2 and probe["requests"] > 0 and probe["failed"] == 0
        assert 0 < probe["mock_cpu_ms_per_request"] < 50
    assert len(metrics.mock_ceilings(load_run_folder(out).load)) == 2


def test_load_csv_has_a_row_per_level(load_run):
    out, _ = load_run
    with (out / "load.csv").open(newline="") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == metrics.LOAD_COLUMNS
    assert sorted((r["engine"], r["processes"]) for r in table) == sorted(
        (e, str(p)) for e in LOAD_ENGINES for p in (1, 2)
    )
    assert {r["sustained"] for r in table if r["engine"] == "fake-failing"} == {"False"}


def test_resume_measures_no_level_twice(load_run, tmp_path):
    out = shutil.copytree(load_run[0], tmp_path / "run")  # the other tests read the run
    before = (out / "load.jsonl").read_text()
    assert main(["run", "--out", str(out), "--resume", "--scenario-dir", str(SCENARIO_DIR)]) == 0
    assert (out / "load.jsonl").read_text() == before


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--load-rates", "0", "--load-rates: 0 out of range (each must be above 0 and at most 5000)"),
        ("--load-rates", "10,-5", "--load-rates: -5 out of range (each must be above 0 and at most 5000)"),
        ("--load-rates", "6000", "--load-rates: 6000 out of range (each must be above 0 and at most 5000)"),
        ("--load-rates", "ten", "--load-rates: expected floats like 10,50, not 'ten'"),
        ("--load-rates", ",", "--load-rates: no values given"),
        ("--load-processes", "0", "--load-processes: 0 out of range (each must be 1..64)"),
        ("--load-processes", "1,65", "--load-processes: 65 out of range (each must be 1..64)"),
        ("--load-processes", "1.5", "--load-processes: expected ints like 10,50, not '1.5'"),
        ("--load-window", "0.01", "--load-window must be between 0.1 and 60, not 0.01"),
        ("--load-window", "61", "--load-window must be between 0.1 and 60, not 61"),
        ("--load-budget", "0", "--load-budget must be between 1 and 3600, not 0"),
        ("--load-budget", "1e9", "--load-budget must be between 1 and 3600, not 1e+09"),
        ("--load-engines", "nope", "unknown load-engine 'nope'; valid load-engines:"),
    ],
)  # fmt: skip
def test_bad_load_numbers_are_one_line_and_exit_2(option, value, message, tmp_path, capsys):
    out = tmp_path / "never"
    code = main(["run", "--scenario-dir", str(SCENARIO_DIR), "--out", str(out), option, value])
    assert code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"schedbench run: error: {message}")
    assert not out.exists()


def test_a_spent_time_budget_leaves_engines_out_exits_0_and_resume_measures_them(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--quick", "--out", str(out), "--engines", "raw",
            "--scenarios", "customer_returns", "--scenario-dir", str(SCENARIO_DIR),
            "--no-throughput", "--no-footprint", "--no-ttft",
            "--load-engines", "raw,fake-hog", "--load-budget", "1"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "bench.cli", *args],
        cwd=ROOT, env=schedbench_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert "time budget (1 s) ran out before" in done.stderr
    assert "--resume --load-budget N" in done.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert "fake-hog" in meta["outcome"]["load_engines_skipped"]  # the mock probe alone takes 1 s
    assert meta["complete"] is False
    resume = ["run", "--out", str(out), "--resume", "--load-budget", "600"]
    assert main([*resume, "--scenario-dir", str(SCENARIO_DIR)]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is True and meta["outcome"]["load_engines_skipped"] == []
    assert {e for e, _ in levels_of(out)} == {"raw", "fake-hog"}
