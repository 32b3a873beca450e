"""End to end: the scenario written in docs/scenarios.md, kept in its own directory.

The YAML is read from the guide itself (the block after ``<!-- worked-example: ... -->``),
so the guide and this test cannot drift apart: it must validate, run on every engine with
the in-process transport and meet its expectations, and go through ``schedbench run
--scenario-dir`` into the results (and the report, once ``schedbench report`` exists).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import main
from bench.engines import MAIN_ENGINES, RunContext, create_engine
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from scenarios import load_scenario

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "scenarios.md"
_EXAMPLE = re.compile(
    r"<!-- worked-example: (?P<file>[a-z0-9_]+\.yaml) -->\n```yaml\n(?P<text>.*?)```", re.S
)


def worked_example() -> tuple[str, str]:
    """(file name, YAML text) of the guide's worked example."""
    found = _EXAMPLE.search(GUIDE.read_text(encoding="utf-8"))
    assert found is not None, "docs/scenarios.md lost its worked-example block"
    return found["file"], found["text"]


@pytest.fixture
def private_dir(tmp_path: Path, capsys) -> Path:
    """The user's own scenario directory: `new`, then the edit the guide shows."""
    directory = tmp_path / "my-scenarios"
    file_name, text = worked_example()
    name = file_name.removesuffix(".yaml")
    assert main(["scenarios", "new", name, "--scenario-dir", str(directory)]) == 0
    (directory / file_name).write_text(text, encoding="utf-8")
    capsys.readouterr()
    return directory


def test_the_guide_example_validates_in_its_own_directory(private_dir, capsys):
    assert main(["scenarios", "validate", "--scenario-dir", str(private_dir)]) == 0
    assert capsys.readouterr().out == "1 valid, 0 invalid (1 files)\n"
    scenario = load_scenario(private_dir / "stock_check.yaml")
    assert scenario.expect.engines["raw"].final_contains is None
    assert "stock_check" not in {p.stem for p in (REPO / "scenarios").glob("*.yaml")}


def _expectation_problems(record, expect: dict) -> dict:
    actual = {
        "status": record.status,
        "llm_calls": record.llm_calls,
        "tool_calls": record.tool_calls,
        "tools": [t.name for t in record.tools],
        "termination": record.termination,
    }
    wrong = {
        k: (expect[k], v) for k, v in actual.items() if expect.get(k) is not None and expect[k] != v
    }
    want = expect.get("final_contains")
    if want is not None and want not in (record.final_answer or ""):
        wrong["final_contains"] = (want, record.final_answer)
    return wrong


@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_the_guide_example_runs_on_every_engine(private_dir, engine_name):
    scenario = load_scenario(private_dir / "stock_check.yaml")
    mock = MockLLM(scenario_dir=private_dir)
    engine = create_engine(engine_name)
    try:
        ctx = RunContext(scenario, mock, BASE_URL, "inprocess", run_timeout_s=5)
        record = await engine.run(await engine.prepare(ctx))
    finally:
        await engine.aclose()
    expect = scenario.expect.for_engine(engine_name)
    assert _expectation_problems(record, expect) == {}, record.error
    assert [r.scenario for r in mock.requests] == ["stock_check"] * record.llm_calls
    assert record.status == ("failed" if engine_name == "raw" else "completed")


# the command line on one engine of each kind (every engine meets the example in-process,
# above): each engine is a worker process importing its stack
CLI_ENGINES = ("raw", "scheduler", "lc-create-agent", "lc-agentexecutor")


def _schedbench() -> str:
    script = Path(sys.executable).parent / "schedbench"
    return str(script) if script.exists() else "schedbench"


@pytest.fixture(scope="module")
def guide_run(tmp_path_factory) -> Path:
    """`schedbench run --scenario-dir D --scenarios stock_check --quick` into a fresh directory."""
    base = tmp_path_factory.mktemp("guide")
    directory = base / "my-scenarios"
    directory.mkdir()
    file_name, text = worked_example()
    (directory / file_name).write_text(text, encoding="utf-8")
    out = base / "run"
    done = subprocess.run(
        [
            _schedbench(),
            "run",
            "--scenario-dir",
            str(directory),
            "--scenarios",
            "stock_check",
            "--quick",
            "--no-throughput",
            "--no-footprint",
            "--no-ttft",
            "--no-load",
            "--engines",
            ",".join(CLI_ENGINES),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed bound (the machine may be busy)
        cwd=base,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return out


@pytest.mark.timeout(600)
def test_the_guide_example_goes_through_schedbench_run(guide_run):
    rows = [json.loads(line) for line in (guide_run / "runs.jsonl").read_text().splitlines()]
    timed = [r for r in rows if r["phase"] == "timed"]
    assert {r["scenario"] for r in rows} == {"stock_check"}
    assert sorted({r["engine"] for r in timed}) == sorted(CLI_ENGINES)
    assert all(r["expect_ok"] for r in rows), [r for r in rows if not r["expect_ok"]]
    outcomes = {(r["engine"], r["status"], r["termination"], r["llm_calls"]) for r in timed}
    assert outcomes == {
        ("raw", "failed", "llm_error", 3),
        *((engine, "completed", "stop", 4) for engine in CLI_ENGINES if engine != "raw"),
    }
    meta = json.loads((guide_run / "meta.json").read_text())
    assert meta["config"]["scenario_dir"].endswith("my-scenarios")


@pytest.mark.skipif(
    importlib.util.find_spec("bench.commands.report") is None,
    reason="`schedbench report` is not built yet",
)
@pytest.mark.timeout(600)
def test_the_guide_example_shows_up_in_the_report(guide_run):
    done = subprocess.run(
        [_schedbench(), "report", str(guide_run)],
        capture_output=True,
        text=True,
        timeout=110,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = (guide_run / "report.md").read_text(encoding="utf-8")
    assert "stock_check" in report
