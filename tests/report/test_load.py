"""The adapter reads a run directory in the runner's formats; the CLI writes the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.cli import main
from bench.report.from_folder import load_run_dir
from bench.results.files import SCHEMA_VERSION
from bench.results.folder import NotARunFolder
from bench.results.store import RunStore

ENGINES = {"raw": 0.2, "scheduler": 0.4, "lc-agentexecutor": 4.0}  # overhead per step, ms


def run_row(engine: str, scenario: str, repeat: int, **changes: object) -> dict:
    step = ENGINES[engine]
    calls = 3 if scenario == "customer_returns" else 4
    row = {
        "engine": engine,
        "scenario": scenario,
        "latency": "zero",
        "transport": "inprocess",
        "round": 0,
        "repeat": repeat,
        "phase": "timed",
        "status": "completed",
        "termination": "stop",
        "wall_ms": step * calls + 0.1 + repeat * 0.01,
        "cpu_ms": step * calls,
        "overhead_ms": step * calls + repeat * 0.01,
        "tool_ms": 0.1,
        "mock_latency_ms": 0.0,
        "llm_calls": calls,
        "tool_calls": calls - 1,
        "prompt_tokens": 100 * calls + (30 * calls if engine == "lc-agentexecutor" else 0),
        "completion_tokens": 20,
        "request_prompt_tokens": [100 + (30 if engine == "lc-agentexecutor" else 0)] * calls,
        "ttft_ms": None,
        "final_answer": "Returns are accepted within 30 days. Your parcel is out for delivery.",
        "error": None,
        "tools": ["track_parcel"] * 3 if scenario == "tool_flaky" else ["a", "b"],
        "expect_ok": True,
    }
    row.update(changes)
    return row


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "run-1"
    with RunStore(directory) as store:
        store.create()
        store.write_meta(
            {
                "schema_version": SCHEMA_VERSION,
                "run_id": "run-1",
                "complete": True,
                "config": {"engines": list(ENGINES), "quick": False},
                "machine": {"cpu_model": "Test CPU", "cpu_logical": 2},
                "git": {"sha": "abc123"},
                "packages": {"langchain": "1.5.2"},
            }
        )
        for engine in ENGINES:
            store.append("runs.jsonl", run_row(engine, "customer_returns", 0, phase="warmup"))
            for repeat in range(5):
                store.append("runs.jsonl", run_row(engine, "customer_returns", repeat))
                flaky = {}
                if engine == "lc-agentexecutor":
                    flaky = {
                        "status": "failed",
                        "termination": "tool_error",
                        "tools": ["track_parcel"],
                    }
                store.append("runs.jsonl", run_row(engine, "tool_flaky", repeat, **flaky))
        # a crash, then the retry of --resume: the later row wins
        store.append(
            "runs.jsonl",
            run_row(
                "raw", "tool_flaky", 0, crashed=True, status="error", termination="worker_crash"
            ),
        )
        store.append("runs.jsonl", run_row("raw", "tool_flaky", 0))
        store.append(
            "runs.jsonl",
            run_row("scheduler", "tool_flaky", 4, crashed=True, status=None, termination=None),
        )
        for engine, extra in (("raw", 0.2), ("scheduler", 0.3), ("lc-agentexecutor", 6.0)):
            for repeat in range(3):
                row = run_row(engine, "streaming_long_answer", repeat, latency="ttft")
                row.update(ttft_ms=300.0 + extra + repeat, floor_ttft_ms=300.0)
                store.append("ttft.jsonl", row)
            store.append("ttft.jsonl", {**row, "phase": "warmup", "ttft_ms": 9999.0})
        for i, engine in enumerate(ENGINES):
            store.append(
                "footprint.jsonl",
                {
                    "kind": "stack",
                    "engine": engine,
                    "probe": 0,
                    "status": "ok",
                    "stack": ["httpx"],
                    "import_ms": 100.0 * (i + 1),
                    "modules": 200 * (i + 1),
                    "rss_before_mb": 5.0,
                    "rss_after_mb": 5.0 + 10.0 * (i + 1),
                },
            )
            store.append(
                "footprint.jsonl", {"kind": "worker", "engine": engine, "peak_rss_mb": 80.0}
            )
        for engine, step in ENGINES.items():
            for level in (1, 10):
                store.append(
                    "throughput.jsonl",
                    {
                        "engine": engine,
                        "scenario": "customer_returns",
                        "latency": "zero",
                        "transport": "inprocess",
                        "concurrency": level,
                        "runs": 3,
                        "errors": 0,
                        "runs_per_s": 1000 / (step * 3) * min(level, 2),
                        # the percentiles are taken over the latencies, not these fields
                        "latencies_ms": [step * 2, step * 3, step * 4],
                        "latency_p95_ms": 99.0,
                        "cpu_ms_per_run": step * 3,
                    },
                )
    return directory


def test_reads_the_runners_files(run_dir: Path) -> None:
    data = load_run_dir(run_dir)
    assert data.engines == list(ENGINES)
    runs = data.runs
    assert len(runs) == 3 * 10  # warm-ups left out, the resumed row replaced the crashed one
    crashed = runs[
        (runs["engine"] == "scheduler") & (runs["scenario"] == "tool_flaky") & (runs["repeat"] == 4)
    ]
    assert crashed[["status", "termination"]].values.tolist() == [["error", "worker_crash"]]
    assert data.fault_scenarios == ["tool_flaky"]  # from the scenario file's tags
    assert data.happy_scenarios == ["customer_returns"]
    flaky = data.scenarios.set_index("scenario").loc["tool_flaky"]
    assert (flaky["expect_status"], flaky["expect_final_contains"]) == (
        "completed",
        "out for delivery",
    )
    assert data.footprint[["engine", "import_ms", "modules", "rss_mb"]].values.tolist() == [
        ["raw", 100.0, 200.0, 10.0],
        ["scheduler", 200.0, 400.0, 20.0],
        ["lc-agentexecutor", 300.0, 600.0, 30.0],
    ]
    assert set(data.throughput["latency_profile"]) == {"zero"}
    assert data.throughput["p50_ms"].tolist()[:2] == pytest.approx([0.6, 0.6])
    assert data.throughput["p95_ms"].tolist()[:2] == pytest.approx([0.78, 0.78])
    assert data.debuggability is None
    ttft = data.ttft.groupby("engine")["ttft_ms"].median().to_dict()
    assert ttft == {"raw": 301.2, "scheduler": 301.3, "lc-agentexecutor": 307.0}  # no warm-up
    assert set(data.ttft["latency_profile"]) == {"ttft"}
    assert data.notes == (
        "debuggability.csv not found: debuggability not measured in this run.",
        "catalogue.json not found: customisation and false simplicity not measured.",
        "meta.json has no code sizes (a run made before they were recorded).",
    )


def test_not_a_run_dir(tmp_path: Path) -> None:
    with pytest.raises(NotARunFolder, match=r"no runs\.jsonl"):
        load_run_dir(tmp_path)


def test_cli_writes_the_report_and_compares_with_a_baseline(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "run-0"
    shutil.copytree(run_dir, baseline)
    meta = json.loads((baseline / "meta.json").read_text())
    meta["git"]["sha"] = "def456"
    (baseline / "meta.json").write_text(json.dumps(meta))
    out = tmp_path / "out"
    assert main(["report", str(run_dir), "--baseline", str(baseline), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:3] == [
        str(out / "report.md"),
        str(out / "report.html"),
        f"{out / 'charts'}/ (8 charts)",
    ]
    assert printed[3:6] == [
        "  skipped chart load_latency: no load levels in this run",
        "  skipped chart capacity: no capacity measurements in this run",
        "  skipped chart debuggability: no debuggability scores in this run",
    ]
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| tool_flaky | ✓ recovered (stop) | ✓ recovered (stop) | ✗ failed (tool_error) |" in md
    assert "lc-agentexecutor +30" in md  # token overhead per request, turn by turn
    # what each engine adds to the TTFT over the scripted 300 ms (medians 301.3, 307 ms), less
    # the bare loop's own 1.2 ms (the harness's share): no plain scheduler in this run, so
    # LangChain's default meets our production engine
    (streaming,) = [line for line in md.splitlines() if line.startswith("| 4 | Poor streaming")]
    assert "[supported] default vs our production: added to TTFT: lc-agentexecutor 5.80 ms" in (
        streaming
    )
    assert "scheduler 100 µs" in streaming and "(+5.70 ms next to a 300 ms TTFT" in streaming
    assert streaming.split(" | ")[3] == "supported"
    assert "## Comparison with baseline run-0" in md
    assert "> **Note:** The environments differ: git: def456 -> abc123" in md
    assert "| customer_returns | lc-agentexecutor | zero, inprocess |" in md
    assert "no change (not significant)" in md


def test_cli_usage_errors(
    tmp_path: Path, run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert (
        capsys.readouterr().err
        == f"schedbench report: error: {tmp_path / 'nope'}: not a directory\n"
    )
    assert main(["report", str(run_dir), "--baseline", str(tmp_path / "nope")]) == 2
    assert "--baseline" in capsys.readouterr().err
