"""Nothing measured is ever lost: crashed workers, a killed parent, and ``--resume``."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import signal
import time
from pathlib import Path

from tests.runner.conftest import SCENARIO_DIR, start_schedbench

SCENARIOS = ("customer_returns", "single_tool")
BASE = ["run", "--scenario-dir", str(SCENARIO_DIR), "--rounds", "1", "--warmup", "0"]
BASE += ["--no-throughput", "--no-footprint", "--no-load"]


def rows(out: Path) -> list[dict]:
    path = out / "runs.jsonl"
    if not path.exists():
        return []
    parsed = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):  # the line a kill tore
            parsed.append(json.loads(line))
    return parsed


def summary(out: Path) -> dict[tuple[str, str], dict[str, str]]:
    with (out / "summary.csv").open(newline="") as f:
        return {(r["engine"], r["scenario"]): r for r in csv.DictReader(f)}


def wait_for(predicate, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


def test_a_killed_worker_becomes_error_rows_and_resume_completes(tmp_path):
    out = tmp_path / "run"
    args = [*BASE, "--engines", "raw,fake-slow", "--repeat", "40", "--out", str(out)]
    process = start_schedbench(*args)

    def slow_row() -> dict | None:
        return next((r for r in rows(out) if r["engine"] == "fake-slow"), None)

    wait_for(lambda: slow_row() is not None)
    os.kill(slow_row()["pid"], signal.SIGKILL)  # fake-slow still owes runs: it is mid-batch
    before = (out / "runs.jsonl").read_text()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "--resume" in stderr and "lost during" in stderr

    after = (out / "runs.jsonl").read_text()
    assert after.startswith(before)  # every row written before the kill is intact
    crashed = [r for r in rows(out) if r.get("crashed")]
    assert crashed and {r["engine"] for r in crashed} == {"fake-slow"}
    assert all(r["status"] == "error" and r["termination"] == "worker_crash" for r in crashed)
    assert all("died (exit code -9)" in r["error"] for r in crashed)
    raw_rows = [r for r in rows(out) if r["engine"] == "raw"]
    assert len(raw_rows) == 2 * 40 and not any(r.get("crashed") for r in raw_rows)
    table = summary(out)
    assert sum(int(table[("fake-slow", s)]["crashed"]) for s in SCENARIOS) == len(crashed)
    assert json.loads((out / "meta.json").read_text())["complete"] is False

    resumed = start_schedbench(*args, "--resume")
    _, stderr = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, stderr
    assert (out / "runs.jsonl").read_text().startswith(after)  # appended, never rewritten
    table = summary(out)
    for engine in ("raw", "fake-slow"):
        for scenario in SCENARIOS:
            cell = table[(engine, scenario)]
            assert (cell["n"], cell["crashed"], cell["status_error"]) == ("40", "0", "0")
    # raw was finished: the resume measured only what the crash lost
    assert len([r for r in rows(out) if r["engine"] == "raw"]) == 2 * 40
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is True and len(meta["resumed_at"]) == 1


def test_a_crash_keeps_the_workers_stderr_and_the_run_goes_on(tmp_path):
    marker = tmp_path / "crash-once"
    marker.write_text("")
    out = tmp_path / "run"
    process = start_schedbench(
        *BASE, "--engines", "raw,fake-crash", "--repeat", "5", "--out", str(out),
        env={"SCHEDBENCH_FAKE_CRASH_FILE": str(marker)},
    )  # fmt: skip
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "worker for fake-crash lost during customer_returns (round 1)" in stderr
    crashed = [r for r in rows(out) if r.get("crashed")]
    # the third run of the first batch killed the worker: runs 3-5 of that batch are lost
    assert [(r["scenario"], r["repeat"]) for r in crashed] == [
        ("customer_returns", i) for i in (2, 3, 4)
    ]
    assert all("fake-crash: dying on purpose" in r["error"] for r in crashed)
    # a fresh worker measured the next scenario in full
    later = [r for r in rows(out) if r["engine"] == "fake-crash" and r["scenario"] == "single_tool"]
    assert sorted(r["repeat"] for r in later) == [0, 1, 2, 3, 4]
    assert any(p.name.startswith("fake-crash.round0") for p in (out / "logs").iterdir())


def test_an_engine_that_cannot_start_costs_only_its_own_runs(tmp_path):
    out = tmp_path / "run"
    process = start_schedbench(
        *BASE, "--engines", "raw,fake-broken", "--repeat", "3", "--out", str(out)
    )
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 1
    assert "worker for fake-broken could not start" in stderr
    table = summary(out)
    for scenario in SCENARIOS:
        assert table[("raw", scenario)]["n"] == "3"
        assert table[("fake-broken", scenario)]["crashed"] == "3"
    errors = {r["error"].splitlines()[0] for r in rows(out) if r["engine"] == "fake-broken"}
    assert len(errors) == 1 and "worker could not start" in errors.pop()


def test_a_killed_parent_loses_nothing_and_resume_completes(tmp_path):
    out = tmp_path / "run"
    args = [*BASE, "--engines", "raw,fake-slow", "--repeat", "30", "--out", str(out)]
    process = start_schedbench(*args)
    wait_for(lambda: len(rows(out)) >= 40)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=30)
    kept = rows(out)
    assert len(kept) >= 40

    resumed = start_schedbench(*args, "--resume")
    _, stderr = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, stderr
    everything = rows(out)
    assert everything[: len(kept)] == kept
    table = summary(out)
    assert {(k, v["n"]) for k, v in table.items()} == {
        ((e, s), "30") for e in ("raw", "fake-slow") for s in SCENARIOS
    }
    timed = [(r["engine"], r["scenario"], r["repeat"]) for r in everything if r["phase"] == "timed"]
    assert len(timed) == len(set(timed)) == 4 * 30  # nothing measured twice
