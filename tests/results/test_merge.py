"""A run split over shards and merged (``run --shard``, ``schedbench merge``) is the run: the
same outcomes as on one host, the same per-step ratios within their intervals, every row
tagged with its shard; shards that do not make one run are refused with the reason."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.results import pooling
from bench.results.folder import load_run_folder
from bench.results.merge import merge
from tests.run_folders import outcomes

ROOT = Path(__file__).resolve().parents[2]
ENGINES = "raw,scheduler,lc-create-agent"
HAPPY = ("customer_returns", "single_tool", "sequential_chain")
SCENARIOS = (*HAPPY, "tool_flaky")
OPTIONS = [
    "--engines", ENGINES, "--scenarios", ",".join(SCENARIOS), "--quick", "--rounds", "2",
    "--repeat", "4", "--no-load", "--no-ttft", "--no-throughput", "--no-footprint",
]  # fmt: skip


def schedbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("shards")
    out = {name: base / name for name in ("one", "s1", "s2", "merged")}
    for name, extra in (("one", []), ("s1", ["--shard", "1/2"]), ("s2", ["--shard", "2/2"])):
        done = schedbench("run", *OPTIONS, *extra, "--out", str(out[name]))
        assert done.returncode == 0, done.stderr[-3000:]
    done = schedbench("merge", str(out["s2"]), str(out["s1"]), "--out", str(out["merged"]))
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def step_ratio(folder: Path):
    rows = [
        r for r in load_run_folder(folder).runs if r.status == "completed" and r.phase == "timed"
    ]
    observations = [
        (r.engine, r.scenario, r.round, r.overhead_ms / r.llm_calls) for r in rows if r.llm_calls
    ]
    return pooling.pool(observations, HAPPY).ratio("lc-create-agent", "scheduler")


def test_the_shards_split_the_scenarios_and_the_merge_has_them_all(runs):
    metas = {n: json.loads((runs[n] / "meta.json").read_text()) for n in ("s1", "s2", "merged")}
    parts = [metas[n]["config"]["scenarios"] for n in ("s1", "s2")]
    assert sorted(parts[0] + parts[1]) == sorted(SCENARIOS) and not set(parts[0]) & set(parts[1])
    merged = metas["merged"]
    assert sorted(merged["config"]["scenarios"]) == sorted(SCENARIOS)
    assert merged["config"]["shard"] is None
    assert [s["index"] for s in merged["shards"]] == [1, 2]
    assert [s["scenarios"] for s in merged["shards"]] == parts
    assert merged["complete"] is True
    rows = [json.loads(line) for line in (runs["merged"] / "runs.jsonl").read_text().splitlines()]
    shard_rows = [len((runs[n] / "runs.jsonl").read_text().splitlines()) for n in ("s1", "s2")]
    assert len(rows) == sum(shard_rows)
    assert [sum(r["shard"] == i for r in rows) for i in (1, 2)] == shard_rows
    by_shard = {r["scenario"]: r["shard"] for r in rows}
    assert all(by_shard[s] == 1 for s in parts[0]) and all(by_shard[s] == 2 for s in parts[1])
    assert (runs["merged"] / "summary.csv").exists()


def test_a_merged_run_has_the_one_host_runs_outcomes(runs):
    assert outcomes(runs["merged"]) == outcomes(runs["one"])


def test_a_merged_run_has_the_one_host_runs_ratio_within_the_intervals(runs):
    merged, one = step_ratio(runs["merged"]), step_ratio(runs["one"])
    assert merged.estimate.low <= one.estimate.high and one.estimate.low <= merged.estimate.high
    assert merged.estimate.point > 1 and one.estimate.point > 1


def test_the_merged_folder_reports(runs):
    done = schedbench("report", str(runs["merged"]))
    assert done.returncode == 0, done.stderr[-3000:]
    text = (runs["merged"] / "report.md").read_text()
    assert "2 shards" in text


def _copy(src: Path, dst: Path, **config) -> Path:
    dst.mkdir()
    meta = json.loads((src / "meta.json").read_text())
    meta["config"].update(config)
    (dst / "meta.json").write_text(json.dumps(meta))
    (dst / "runs.jsonl").write_text((src / "runs.jsonl").read_text())
    return dst


def test_shards_that_do_not_make_one_run_are_refused_with_the_reason(runs, tmp_path):
    cases = {
        "missing": ([runs["s1"]], "shard\\(s\\) 2/2 missing"),
        "twice": ([runs["s1"], runs["s1"], runs["s2"]], "shard 1/2 again"),
        "not a shard": ([runs["one"], runs["s1"]], "not a shard"),
        "options": (
            [runs["s1"], _copy(runs["s2"], tmp_path / "seed", seed=7)],
            "options differ.*seed",
        ),
        "split": (
            [runs["s1"], _copy(runs["s2"], tmp_path / "of3", shard="2/3")],
            "is one of 2",
        ),
    }
    for name, (folders, reason) in cases.items():
        out = tmp_path / f"out-{name.replace(' ', '-')}"
        done = schedbench("merge", *map(str, folders), "--out", str(out))
        assert done.returncode == 2, (name, done.stderr)
        assert re.search(reason, done.stderr), (name, done.stderr)
        assert not (out / "runs.jsonl").exists(), name
    again = schedbench("merge", str(runs["s1"]), str(runs["s2"]), "--out", str(runs["merged"]))
    assert again.returncode == 2 and "already holds a run" in again.stderr


def test_the_projection_of_a_one_host_run_accounts_for_every_second_once(runs):
    from bench.runner.shard_projection import project

    meta = json.loads((runs["one"] / "meta.json").read_text())
    whole = project(runs["one"], 1)
    # meta.json rounds the duration and every phase's seconds to 0.1 s each.
    rounding = 0.05 * (1 + len(meta["outcome"]["phase_s"]))
    assert whole.low_s == pytest.approx(whole.high_s)  # one host: no range (sums in float)
    assert whole.low_s == pytest.approx(meta["duration_s"], abs=rounding)
    for hosts in (2, 3):
        split = project(runs["one"], hosts)
        names = [n for s in split.shards for n in s.scenarios]
        assert sorted(names) == sorted(SCENARIOS)
        assert sum(s.run_s for s in split.shards) == pytest.approx(whole.shards[0].run_s)
        assert sum(s.phase_s for s in split.shards) == pytest.approx(whole.shards[0].phase_s)
        assert all(s.low_s <= s.high_s for s in split.shards)
        assert split.low_s <= whole.low_s
    done = schedbench("shards", str(runs["one"]), "--hosts", "2")
    assert done.returncode == 0 and "2 host(s):" in done.stdout, done.stderr
    bad = schedbench("shards", str(runs["one"]), "--hosts", "9")
    assert bad.returncode == 2 and "cannot fill 9 shards" in bad.stderr


def test_a_figure_only_some_shards_have_is_the_sum_of_those_that_have_it():
    """A shard without the load phase records ``load_s: None``; the load shard's seconds
    are the run's (a None first shard once crashed the merge of every run with a load
    phase)."""
    from bench.results.merge import _summed_outcome

    summed = _summed_outcome(
        [{"load_s": None, "timed_runs": 6}, {"load_s": 22.2, "timed_runs": 6, "x": None}]
    )
    assert summed == {"load_s": 22.2, "timed_runs": 12, "x": None}


def test_a_shards_corrupt_row_is_left_out_and_counted_not_fatal(runs, tmp_path):
    """The merge writes through the strict store: a line of the wrong shape is counted as
    skipped, as the folder reader would, and the rest is merged."""
    s1, s2 = (_copy(runs[n], tmp_path / n) for n in ("s1", "s2"))
    with (s2 / "runs.jsonl").open("a") as f:
        f.write(json.dumps({"engine": "raw", "scenario": 5}) + "\n")  # valid JSON, not a row
    merged = merge([s1, s2], tmp_path / "merged")
    assert merged.skipped == {"runs.jsonl": 1}
    lines = [len((runs[n] / "runs.jsonl").read_text().splitlines()) for n in ("s1", "s2")]
    assert merged.rows["runs.jsonl"] == sum(lines)
