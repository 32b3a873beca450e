"""``schedbench run`` end to end on fake engines, ``schedbench compare``, and bad input."""

from __future__ import annotations

import csv
import json
import statistics
import subprocess
import sys

import pytest

from bench.cli import main
from bench.engines import ENGINE_NAMES
from bench.results.files import SCHEMA_VERSION
from bench.results.summary import SUMMARY_COLUMNS, THROUGHPUT_COLUMNS, TTFT_COLUMNS
from bench.runner.plan import RunConfig, build_plan
from scenarios import load_scenarios
from tests.runner.conftest import ROOT, SCENARIO_DIR, schedbench_env

ENGINES = ("raw", "fake-slow")
SCENARIOS = ("customer_returns", "single_tool")
ROW_FIELDS = {
    "engine", "scenario", "latency", "transport", "round", "repeat", "phase", "status",
    "termination", "error", "final_answer", "llm_calls", "tool_calls", "tools", "wall_ms",
    "cpu_ms", "outer_ms", "tool_ms", "mock_latency_ms", "overhead_ms", "overhead_per_step_ms",
    "ttft_ms", "prompt_tokens", "completion_tokens", "request_count", "request_prompt_tokens",
    "gc_collections", "expect_ok", "expect_failures", "pid", "ended_at",
}  # fmt: skip


def read_csv(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "quick"
    done = subprocess.run(
        [sys.executable, "-m", "bench.cli", "run", "--quick", "--out", str(out),
         "--engines", ",".join(ENGINES), "--scenario-dir", str(SCENARIO_DIR),
         "--concurrency", "1,4", "--throughput-engines", ",".join(ENGINES), "--no-load"],
        cwd=ROOT, env=schedbench_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out, done


def test_quick_run_writes_meta(quick_run):
    out, _ = quick_run
    meta = json.loads((out / "meta.json").read_text())
    assert meta["schema_version"] == SCHEMA_VERSION
    assert meta["complete"] is True
    assert meta["config"]["engines"] == list(ENGINES)
    assert meta["config"]["scenarios"] == list(SCENARIOS)
    assert meta["config"]["quick"] is True
    assert {"langchain", "openai", "httpx", "httpx2", "tiktoken", "numpy", "schedbench"} <= set(
        meta["packages"]
    )
    assert meta["packages"]["numpy"]
    assert meta["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert meta["machine"]["cpu_logical"] >= 1 and meta["machine"]["cpu_model"]
    assert set(meta["git"]) == {"sha", "dirty"}
    assert meta["started_at"] <= meta["ended_at"]
    assert meta["outcome"]["crashed_runs"] == 0 and meta["outcome"]["runs_missing"] == 0


def test_quick_run_records_every_planned_run(quick_run):
    out, _ = quick_run
    config = RunConfig.from_dict(json.loads((out / "meta.json").read_text())["config"])
    plan = build_plan(config, load_scenarios(SCENARIO_DIR))
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    timed = [r for r in rows if r["phase"] == "timed"]
    for engine in ENGINES:
        for scenario in SCENARIOS:
            mine = [r for r in timed if (r["engine"], r["scenario"]) == (engine, scenario)]
            assert sorted(r["repeat"] for r in mine) == list(
                range(plan.repeats[(scenario, "zero")])
            )
            assert {r["status"] for r in mine} == {"completed"}
            assert all(r["expect_ok"] for r in mine)
    assert {r["phase"] for r in rows} == {"warmup", "timed"}
    assert all(set(r) >= ROW_FIELDS for r in rows)
    assert all("requests" not in r for r in rows)  # bodies stay out of the rows
    first = next(r for r in timed if r["scenario"] == "customer_returns" and r["engine"] == "raw")
    assert first["request_prompt_tokens"] == [121, 182, 258]
    assert sum(first["request_prompt_tokens"]) == first["prompt_tokens"]
    assert first["tools"] == ["search_knowledge_base", "query_order"]


def test_quick_run_summary(quick_run):
    out, _ = quick_run
    rows = read_csv(out / "summary.csv")
    assert list(rows[0]) == SUMMARY_COLUMNS
    cells = {(r["engine"], r["scenario"]): r for r in rows}
    assert list(cells) == [(e, s) for s in SCENARIOS for e in ENGINES]
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]

    def wall_median(engine: str, scenario: str) -> float:
        return statistics.median(
            r["wall_ms"]
            for r in runs
            if (r["engine"], r["scenario"], r["phase"]) == (engine, scenario, "timed")
        )

    for scenario in SCENARIOS:
        raw, slow = cells[("raw", scenario)], cells[("fake-slow", scenario)]
        assert float(raw["ratio_to_raw"]) == 1.0
        assert float(raw["token_overhead"]) == 0.0
        # the ratio recomputes from the rows (speed itself is the benchmark's business)
        ratio = wall_median("fake-slow", scenario) / wall_median("raw", scenario)
        assert float(slow["ratio_to_raw"]) == pytest.approx(ratio, rel=1e-4)
        low, high = float(slow["ratio_to_raw_ci_low"]), float(slow["ratio_to_raw_ci_high"])
        assert low <= float(slow["ratio_to_raw"]) <= high
        # the fake sleeps 2 ms per step and adds 14 system-prompt tokens to every request
        assert float(slow["token_overhead_per_request"]) == 14.0
        assert float(slow["overhead_per_step_ms_median"]) >= 2.0
        assert int(slow["status_completed"]) == int(slow["n"]) and slow["crashed"] == "0"


def test_quick_run_footprint_and_throughput(quick_run):
    out, _ = quick_run
    footprint = {r["engine"]: r for r in read_csv(out / "footprint.csv")}
    assert set(footprint) == set(ENGINES)
    assert footprint["raw"]["stack"] == "httpx"  # the stack probe of the raw engine
    assert float(footprint["raw"]["stack_modules"]) > 50
    assert all(float(r["peak_rss_mb"]) > 20 for r in footprint.values())
    assert all(r["first_run_status"] == "completed" for r in footprint.values())
    throughput = read_csv(out / "throughput.csv")
    assert list(throughput[0]) == THROUGHPUT_COLUMNS
    levels = sorted((r["engine"], r["latency"], int(r["concurrency"])) for r in throughput)
    assert levels == sorted((e, "zero", c) for e in ENGINES for c in (1, 4))
    assert all(int(r["runs"]) > 0 and r["errors"] == "0" for r in throughput)


def test_quick_run_without_the_ttft_scenario_skips_the_phase(quick_run):
    out, done = quick_run
    assert "TTFT phase skipped: no scenario 'streaming_long_answer' in " in done.stderr
    assert read_csv(out / "ttft.csv") == []
    assert (out / "ttft.csv").read_text().strip() == ",".join(TTFT_COLUMNS)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["outcome"]["ttft_skipped"].startswith("no scenario 'streaming_long_answer'")
    assert meta["outcome"]["ttft_missing"] == 0 and meta["complete"] is True


def test_quick_run_prints_a_summary_table(quick_run):
    _, done = quick_run
    assert "Per engine" in done.stdout
    assert "customer_returns" in done.stdout and "fake-slow" in done.stdout
    assert "[suite]" in done.stderr  # progress lines when stderr is not a terminal


def test_compare_a_run_with_itself_finds_nothing(quick_run, capsys):
    out, _ = quick_run
    assert main(["compare", str(out), str(out)]) == 0
    text, steps = capsys.readouterr().out.split("\nOverhead per LLM step", 1)
    lines = [line for line in text.splitlines() if "->" in line]
    assert len(lines) == len(ENGINES) * len(SCENARIOS)
    # then each engine's overhead per step (bench.results.per_engine), the same on both sides
    assert [line.split(":")[0].strip() for line in steps.splitlines()[1:]] == list(ENGINES)
    assert all(line.endswith(": no change") for line in steps.splitlines()[1:])
    # --quick: 2 runs of customer_returns per engine, where a Mann-Whitney test can never reach
    # p < 0.05 (and says so); 4 of single_tool, where it can
    verdicts = [line.split(": ", 1)[1].split(" [")[0].split(": ", 1)[1] for line in lines]
    assert (
        verdicts
        == ["no change (too few runs to be significant)"] * 2 + ["no change (not significant)"] * 2
    )
    assert "4 benchmarks: 0 significantly slower, 0 significantly faster, 4 not significant" in text
    assert (
        "Warning: sample too small: with 2 against 2 runs a two-sided Mann-Whitney U test cannot "
        "go below p=0.333, so it can never reach alpha=0.05 (2 benchmarks); at least 4 completed "
        "runs on each side are needed."
    ) in text


def _write_run(path, values: dict[str, list[float]]) -> None:
    path.mkdir()
    with (path / "runs.jsonl").open("w") as f:
        for engine, samples in values.items():
            for i, wall in enumerate(samples):
                row = {"engine": engine, "scenario": "s", "latency": "zero",
                       "transport": "inprocess", "round": 0, "repeat": i, "phase": "timed",
                       "wall_ms": wall, "cpu_ms": wall, "overhead_ms": wall}  # fmt: skip
                f.write(json.dumps(row) + "\n")


def test_compare_says_slower_like_pyperf(tmp_path, capsys):
    ref = [10.0 + 0.1 * i for i in range(20)]
    _write_run(tmp_path / "a", {"raw": ref, "x": ref})
    _write_run(tmp_path / "b", {"raw": [v * 1.5 for v in ref], "x": [v + 0.05 for v in ref]})
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3:] == [
        "",
        "s [zero, inprocess]",
        "  raw: 10.9 ms -> 16.4 ms: 1.50× slower (significant) [p=6.8e-08, n=20/20]",
        "  x:   10.9 ms -> 11.0 ms: no change (not significant) [p=0.797, n=20/20]",
        "",
        "Geometric mean: 1.23× slower",
        "2 benchmarks: 1 significantly slower, 0 significantly faster, 1 not significant",
    ]


def _write_failed_run(path, walls: list[float], status: str) -> None:
    path.mkdir()
    with (path / "runs.jsonl").open("w") as f:
        for i, wall in enumerate(walls):
            row = {"engine": "lc-create-agent", "scenario": "s", "latency": "zero",
                   "transport": "inprocess", "round": 0, "repeat": i, "phase": "timed",
                   "status": status, "wall_ms": wall, "cpu_ms": wall, "overhead_ms": wall}  # fmt: skip
            f.write(json.dumps(row) + "\n")


def test_compare_makes_no_speed_claim_when_every_run_failed(tmp_path, capsys):
    _write_failed_run(tmp_path / "a", [1405.0, 1406.0], "failed")
    _write_failed_run(tmp_path / "b", [1343.0, 1344.0], "error")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[3:] == [
        "",
        "s [zero, inprocess]",
        "  lc-create-agent: no speed claim: completed 0 of 2 runs in the reference, "
        "0 of 2 in the changed run",
        "",
        "1 benchmark without a speed claim: no completed run on one side or both.",
    ]


def test_compare_times_completed_runs_only_and_counts_errors(tmp_path, capsys):
    ref = [10.0 + 0.1 * i for i in range(20)]
    _write_run(tmp_path / "a", {"x": ref})
    # the changed run: 20 completed as slow as before, 5 failed fast (they stopped early)
    _write_run(tmp_path / "b", {"x": ref})
    with (tmp_path / "b" / "runs.jsonl").open("a") as f:
        for i in range(5):
            row = {"engine": "x", "scenario": "s", "latency": "zero", "transport": "inprocess",
                   "round": 0, "repeat": 20 + i, "phase": "timed", "status": "failed",
                   "wall_ms": 1.0, "cpu_ms": 1.0, "overhead_ms": 1.0}  # fmt: skip
            f.write(json.dumps(row) + "\n")
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[5] == (
        "  x: 10.9 ms -> 10.9 ms: no change (not significant) [p=1, n=20/20, errors=0/5]"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engines", "nope"], "unknown engine 'nope'; valid engines: " + ", ".join(ENGINE_NAMES)),
        (["--scenarios", "nope,single_tool"], "unknown scenario 'nope'; valid scenarios: "),
        (["--repeat", "0"], "--repeat must be between 1 and 10,000, not 0"),
        (["--rounds", "0"], "--rounds must be between 1 and 100, not 0"),
        (["--warmup", "-1"], "--warmup must be between 0 and 1,000, not -1"),
        (["--concurrency", "1,0"], "--concurrency: every level must be between 1 and 1,000"),
        (["--concurrency", "1,x"], "--concurrency: expected integers like 1,10,50"),
        (["--resume"], "--resume needs --out DIR"),
    ],
)
def test_bad_run_options_exit_2(args, message, capsys):
    assert main(["run", "--scenario-dir", str(SCENARIO_DIR), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("schedbench run: error: ")
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_out_must_be_a_directory(tmp_path, capsys):
    file = tmp_path / "file"
    file.write_text("x")
    assert main(["run", "--scenario-dir", str(SCENARIO_DIR), "--out", str(file)]) == 2
    assert f"--out {file}: exists and is not a directory" in capsys.readouterr().err


def test_an_existing_run_is_never_overwritten(quick_run, capsys):
    out, _ = quick_run
    before = (out / "runs.jsonl").read_text()
    assert main(["run", "--scenario-dir", str(SCENARIO_DIR), "--out", str(out)]) == 2
    assert "already holds a run; pass --resume" in capsys.readouterr().err
    assert (out / "runs.jsonl").read_text() == before


def test_resume_refuses_other_options_and_missing_runs(quick_run, tmp_path, capsys):
    out, _ = quick_run
    args = ["run", "--scenario-dir", str(SCENARIO_DIR), "--resume", "--out"]
    assert main([*args, str(out), "--repeat", "9"]) == 2
    assert "--repeat differs from the stored run (None)" in capsys.readouterr().err
    assert main([*args, str(tmp_path)]) == 2
    assert "holds no run to resume (no meta.json)" in capsys.readouterr().err


def test_compare_needs_two_runs(tmp_path, capsys):
    assert main(["compare", str(tmp_path), str(tmp_path / "missing")]) == 2
    assert "no runs.jsonl (not a schedbench run directory)" in capsys.readouterr().err
