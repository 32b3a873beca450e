"""The worker's side of waits by choice: installed before any framework import, written to
runs.jsonl as ``waited_ms`` and left out of ``overhead_ms``; old rows without it still load."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from bench.engines.base import RunRecord
from bench.results.rows import RunRow
from scenarios import load_scenarios
from tests.runner.conftest import ROOT

IDENTITY = {
    "engine": "lc-create-agent-prod",
    "scenario": "tool_flaky",
    "latency": "zero",
    "transport": "inprocess",
    "round": 0,
    "repeat": 0,
    "phase": "timed",
}


def test_record_row_writes_the_waits_and_leaves_them_out_of_the_overhead():
    from bench.runner.measured import record_row

    record = RunRecord(
        engine="lc-create-agent-prod",
        scenario="tool_flaky",
        status="completed",
        final_answer="out for delivery",
        llm_calls=2,
        tool_calls=3,
        tools=[],
        wall_ms=400.0,
        cpu_ms=20.0,
        prompt_tokens=227,
        completion_tokens=40,
        requests=[],
        termination="stop",
        tool_ms=1.0,
        mock_latency_ms=50.0,
        waited_ms=300.0,
        wait_count=2,
    )
    scenario = load_scenarios()["tool_flaky"]
    row = record_row(record, scenario, "lc-create-agent-prod", 401.0, 0, referee=(2.0, 1.0))
    assert (row.waited_ms, row.wait_count) == (300.0, 2)
    assert row.overhead_ms == 400.0 - 50.0 - 1.0 - 300.0 - 2.0
    assert row.overhead_per_step_ms == row.overhead_ms / 2
    written = row.model_dump(mode="json", exclude_unset=True)  # as the worker sends it
    parsed = RunRow.model_validate_json(json.dumps({**IDENTITY, **written}))  # as read back
    assert parsed.waited_ms == 300.0 and parsed.wait_count == 2


def test_the_worker_cannot_build_a_measurement_with_a_field_the_row_does_not_declare():
    from pydantic import ValidationError

    from bench.results.rows import RunMeasurement

    with pytest.raises(ValidationError, match="wal_ms"):
        RunMeasurement.model_validate_json(json.dumps({"status": "completed", "wal_ms": 12.5}))
    with pytest.raises(ValidationError, match="wall_ms"):
        RunMeasurement.model_validate_json(json.dumps({"wall_ms": "12.5"}))  # a string


def test_a_row_written_before_waited_ms_still_loads_as_unknown():
    row = RunRow.model_validate({**IDENTITY, "wall_ms": 400.0, "overhead_ms": 349.0})
    assert row.waited_ms is None and row.wait_count is None


@pytest.mark.subprocess
def test_the_worker_installs_the_accounting_before_any_framework_binds_a_sleep():
    probe = (
        "import asyncio, inspect, time\n"
        "import bench.runner.run_worker\n"
        "from bench.engines.kit import waits\n"
        "import anyio._backends._asyncio as backend\n"
        "import scheduler.llm\n"
        "default = inspect.signature(scheduler.llm.HTTPChatClient).parameters['sleep'].default\n"
        "print(asyncio.sleep is waits.sleep, time.sleep is waits.thread_sleep,\n"
        "      backend.sleep is waits.sleep, default is waits.sleep)\n"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", probe],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True"] * 4


@pytest.mark.subprocess
def test_only_the_worker_entry_installs_the_accounting():
    """The row builders and the rest of the harness import without touching the sleeps (a
    test process that imports them stays as it was)."""
    probe = (
        "import asyncio, time\n"
        "import bench.runner.measured, bench.runner.orchestrator, bench.runner.phases.load.session\n"
        "from bench.engines.kit import waits\n"
        "print(waits.installed(), asyncio.sleep is waits.ORIGINAL_ASYNC_SLEEP,\n"
        "      time.sleep is waits.ORIGINAL_TIME_SLEEP)\n"
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "True"]


@pytest.mark.subprocess
def test_a_worker_run_of_langchain_prod_on_tool_flaky_reports_its_backoff_as_waits():
    worker = subprocess.Popen(
        [sys.executable, "-P", "-m", "bench.runner.run_worker", "--engine", IDENTITY["engine"]],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    command = {"op": "batch", "scenario": "tool_flaky", "latency": "zero", "warmup": 0}
    try:
        out, _ = worker.communicate(
            json.dumps({**command, "repeats": [0]}) + "\n" + json.dumps({"op": "exit"}) + "\n",
            timeout=300,
        )
    finally:
        if worker.poll() is None:
            worker.kill()
    messages = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert messages[0]["type"] == "ready", messages[0]
    (row,) = [m["row"] for m in messages if m["type"] == "run"]
    assert row["status"] == "completed", row.get("error")
    assert (row["llm_calls"], row["tool_calls"], row["wait_count"]) == (2, 3, 2)
    # ToolRetryMiddleware: 0.1 s and 0.2 s, jitter ±25 %
    assert row["waited_ms"] >= (0.1 + 0.2) * 0.75 * 1000 * 0.99
    expected = (
        row["wall_ms"]
        - row["mock_latency_ms"]
        - row["tool_ms"]
        - row["waited_ms"]
        - row["referee_ms"]
    )
    assert math.isclose(row["overhead_ms"], expected, abs_tol=1e-6)
    assert RunRow.model_validate_json(json.dumps({**IDENTITY, **row})).waited_ms == row["waited_ms"]
