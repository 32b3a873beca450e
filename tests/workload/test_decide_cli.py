"""``schedbench decide --quick`` end to end on a tiny workload: the run it asks for, the
latency the mocks played, and every number of decision.md recomputed from the run's files."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench.runner.phases.load.plan import scripted_latency_ms
from scenarios import load_scenarios
from tests.once import Completed, once
from tests.runner.conftest import ROOT

pytestmark = pytest.mark.timeout(900)

ENGINES = ("raw", "scheduler-plain", "lc-create-agent")
SPEC = "custom:ttft:20,tps:2000"
WORKLOAD = """\
name: tiny
llm: {first_token_ms: 20, tokens_per_s: 2000}
rate: 8
hosts: 2
objective: {p95_ms: 1500, p99_ms: 3000}
scenarios: [single_tool]
engines: [raw, scheduler-plain, lc-create-agent]
prices: {prompt_per_1m: 0.15, completion_per_1m: 0.6, core_hour: 0.05}
tools: {failure_rate: 0.3}
"""
HOST_RATE = 4.0


@pytest.fixture(scope="module")
def decided(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Completed]:
    def build(base: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
        workload = base / "tiny.yaml"
        workload.write_text(WORKLOAD)
        out = base / "run"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.cli",
                "decide",
                str(workload),
                "--quick",
                "--out",
                str(out),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=850,
        )
        assert done.returncode == 0, done.stderr[-4000:]
        return out, done

    return tuple(once(tmp_path_factory, "decide-cli", build))


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def table(page: str) -> dict[str, list[str]]:
    """The per-engine table of decision.md: engine → its cells."""
    lines = page.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| engine |"))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].removesuffix(" (floor)")] = cells
    return rows


def number(cell: str) -> tuple[float, float]:
    """The first number of a cell in ms (µs and s converted) or plain, and half its last
    shown digit (the rounding the page allows)."""
    match = re.search(r"(−?)[$]?([\d,]+(?:\.(\d+))?)\s*(µs|ms|s)?", cell)
    assert match, cell
    sign, digits, decimals, unit = match.groups()
    value = float(digits.replace(",", "")) * (-1 if sign else 1)
    half = 0.5 * 10 ** -(len(decimals) if decimals else 0)
    scale = {"µs": 1e-3, "s": 1e3}.get(unit or "", 1.0)
    return value * scale, half * scale


def close(cell: str, expected: float) -> None:
    shown, half = number(cell)
    assert abs(shown - expected) <= half * 1.0001, (cell, expected)


def test_decide_runs_what_the_workload_needs(decided) -> None:
    out, _ = decided
    config = json.loads((out / "meta.json").read_text())["config"]
    assert config["engines"] == list(ENGINES)
    assert config["scenarios"] == ["single_tool"]
    assert config["latencies"] == [SPEC]
    assert config["load_latency"] == SPEC and config["load_scenario"] == "single_tool"
    assert config["load_rates"] == [2.0, 4.0, 6.0] and config["load_start_rate"] == HOST_RATE
    assert config["throughput"] is False and config["ttft"] is False
    assert config["footprint"] is False
    levels = [r for r in jsonl(out / "load.jsonl") if r["kind"] == "level"]
    assert {r["engine"] for r in levels} == set(ENGINES)
    assert {r["latency"] for r in levels} == {SPEC}
    # the load target is the objective itself: scripted latency × the derived factor
    assert all(r["target_ms"] == pytest.approx(1500.0) for r in levels)
    # the load phase's mocks played the spec: every ok run took at least its scripted wait
    # (a level stopped early also lists the runs it cut, at whatever point they were)
    scripted = scripted_latency_ms(load_scenarios()["single_tool"], SPEC)
    assert scripted > 40.0  # two calls of 20 ms to the first token, and their tokens
    assert all(level["scripted_ms"] == pytest.approx(scripted) for level in levels)
    uncut = [level for level in levels if not level["cut"]]
    assert uncut
    for level in uncut:
        assert min(level["latencies_ms"]) >= 0.95 * scripted, level["engine"]
    assert any(r["rate"] == HOST_RATE for r in levels)


def test_the_suite_played_the_workloads_latency(decided) -> None:
    """Each run's scripted LLM wait (the mock's own account) is 20 ms per call plus its
    completion tokens at 2,000 tokens/s: the spec, played."""
    out, _ = decided
    timed = [r for r in jsonl(out / "runs.jsonl") if r["phase"] == "timed"]
    assert timed and {r["latency"] for r in timed} == {SPEC}
    for row in timed:
        expected = row["llm_calls"] * 20.0 + row["completion_tokens"] / 2000 * 1000
        assert row["mock_latency_ms"] == pytest.approx(expected, rel=1e-6), row


def test_every_number_of_the_page_recomputes_from_the_files(decided) -> None:
    out, done = decided
    page = (out / "decision.md").read_text()
    assert page in done.stdout  # printed as written
    rows = table(page)
    assert set(rows) == set(ENGINES)
    runs = [
        r
        for r in jsonl(out / "runs.jsonl")
        if r["phase"] == "timed" and r["latency"] == SPEC and not r.get("crashed")
    ]
    levels = [r for r in jsonl(out / "load.jsonl") if r["kind"] == "level"]
    for engine in ENGINES:
        cells = rows[engine]
        spent = [r for r in runs if r["engine"] == engine]  # calls and tokens: every run
        mine = [r for r in spent if r["status"] == "completed"]
        walls = [r["wall_ms"] for r in mine]
        assert cells[1] == f"{len(walls)}/{len([r for r in runs if r['engine'] == engine])}"
        close(cells[2], float(np.percentile(walls, 50)))
        close(cells[3], float(np.percentile(walls, 95)))
        calls = float(np.mean([r["llm_calls"] for r in spent]))
        prompt = float(np.mean([r["prompt_tokens"] for r in spent]))
        completion = float(np.mean([r["completion_tokens"] for r in spent]))
        close(cells[4], calls)
        close(cells[5], prompt)
        close(cells[6], completion)
        (level,) = [r for r in levels if r["engine"] == engine and r["rate"] == HOST_RATE]
        lat = level["latencies_ms"]
        # the CPU per run is the target level's, or (not met there) a sustained level's
        at = re.search(r"\(at ([\d.]+)/s\)", cells[8])
        cpu_rate = float(at.group(1)) if at else HOST_RATE
        bad = level["wrong"] + level["failed"] + level["timeouts"] + level["cut"]
        achieved = level["completions"] / level["interval_s"]
        met = (
            not level["stopped"]
            and float(np.percentile(lat, 95)) <= 1500
            and float(np.percentile(lat, 99)) <= 3000
            and bad <= 0.01 * level["scheduled"]
            and achieved >= 0.5 * HOST_RATE
        )
        assert cells[7].startswith("yes, 1 process" if met else "no ("), cells[7]
        (cpu_level,) = [r for r in levels if r["engine"] == engine and r["rate"] == cpu_rate]
        slices = cpu_level["cpu_slices"]
        if not sum(n for _, n in slices):
            # stopped before any run of the level completed (a busy host can get there): no
            # CPU per run to state, nor the cores and the cost that follow from it
            assert (cells[8], cells[9]) == ("–", "–") and cells[10].startswith("–"), cells
            continue
        cpu_ms = sum(c for c, _ in slices) * 1000 / sum(n for _, n in slices)
        close(cells[8], cpu_ms)
        close(cells[9], cpu_ms * 8 / 1000)  # cores at the whole rate, both hosts
        cost = (prompt * 0.15 + completion * 0.6) / 1e6 * 1000 + cpu_ms / 1000 * 0.05 / 3600 * 1000
        close(cells[10], cost)
    # the failure rate as the runs met it: every engine's failed and all tool executions
    line = next(x for x in page.splitlines() if x.startswith("Tool calls that failed"))
    assert "the workload's rate: 30.0%" in line
    for engine in ENGINES:
        spent = [r for r in runs if r["engine"] == engine]
        failed = sum(r["tool_errors"] for r in spent)
        calls = sum(r["tool_calls"] for r in spent)
        assert f"{engine} {failed} of {calls}" in line, line
    # the same draws for every engine: the run that failed its call failed it everywhere
    raw_failed = [r["repeat"] for r in runs if r["engine"] == "raw" and r["tool_errors"]]
    assert raw_failed, "the 30 % rate failed none of raw's calls"
    for engine in ENGINES:
        failed = [r["repeat"] for r in runs if r["engine"] == engine and r["tool_errors"]]
        assert failed == raw_failed, engine
    # the decision names a candidate (never the floor) and what would turn it
    decision = page.split("## Decision", 1)[1].split("##", 1)[0]
    winner = re.search(r"\*\*([\w@.-]+)\*\* wins on (the objective|expectations)", decision)
    # create_agent as its docs write it re-raises the tool's failure: that run fails
    assert winner and winner.group(1) == "scheduler-plain", decision
    assert (
        "- lc-create-agent on single_tool: status failed, expected completed (1 of 3 runs)" in page
    )
    assert "What would turn it:" in decision
    assert "machine" in page and "custom:ttft:20,tps:2000" in page


def test_the_answer_is_written_again_from_the_folder(decided, tmp_path: Path) -> None:
    run, _ = decided
    first = (run / "decision.md").read_text()
    out = shutil.copytree(run, tmp_path / "run")  # the other tests read the run meanwhile
    workload = tmp_path / "tiny.yaml"
    workload.write_text(WORKLOAD)
    done = subprocess.run(
        [sys.executable, "-m", "bench.cli", "decide", str(workload), "--from-run", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    again = (out / "decision.md").read_text()
    # the same numbers (only the workload's and the run's paths differ)
    assert again.replace(str(workload), "W").replace(str(out), "R") == first.replace(
        str(run.parent / "tiny.yaml"), "W"
    ).replace(str(run), "R")
    assert not math.isnan(json.loads((out / "decision.json").read_text())["host_rate"])
