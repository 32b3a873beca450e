"""``run --cluster``: shards on the workers of a real Dask distributed cluster on loopback,
gathered and merged; the same shards merged again by ``schedbench merge``; a worker killed
mid-shard gets its shard re-run, or (when the scheduler may not retry) the shard is reported
missing and nothing is merged.

A merged run is the run: the same outcomes as on one host, the same per-step ratios within
their intervals, every row tagged with its shard; shards that do not make one run are refused
with the reason. One one-host run and one cluster run (three shards) serve every test of both.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import psutil
import pytest
from distributed import Client, LocalCluster

from bench.results import pooling
from bench.results.folder import load_run_folder
from bench.results.merge import merge
from bench.runner.cluster import run_on_cluster, shard_argv
from tests.once import Completed, once
from tests.run_folders import outcomes

ROOT = Path(__file__).resolve().parents[2]
HAPPY = ("customer_returns", "single_tool", "sequential_chain")
SCENARIOS = (*HAPPY, "tool_flaky")
# two rounds of four runs: intervals for the ratio test
OPTIONS = [
    "--engines", "raw,scheduler,lc-create-agent", "--scenarios", ",".join(SCENARIOS),
    "--quick", "--rounds", "2", "--repeat", "4",
    "--no-load", "--no-ttft", "--no-throughput", "--no-footprint",
]  # fmt: skip
# the kill tests: a shard is stopped (SIGSTOP) once it has written its first run, so the
# kill lands mid-shard however little work is left; two engines with light workers
KILL_OPTIONS = [
    "--engines", "raw,scheduler", "--scenarios", "customer_returns,single_tool",
    "--quick", "--repeat", "10", "--no-load", "--no-ttft", "--no-throughput", "--no-footprint",
]  # fmt: skip
EVENT_TIMEOUT_S = 300.0  # a generous bound on waiting for an event, not a speed check
# whole runs on a cluster sharing the machine: pytest's 120 s default is a speed bound here
pytestmark = pytest.mark.timeout(3 * EVENT_TIMEOUT_S)


def schedbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.fixture(scope="module")
def one_host(tmp_path_factory) -> Path:
    def build(folder: Path) -> Path:
        done = schedbench("run", *OPTIONS, "--out", str(folder / "run"))
        assert done.returncode == 0, done.stderr[-3000:]
        return folder / "run"

    return once(tmp_path_factory, "cluster-one-host", build)


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory) -> tuple[Path, Completed]:
    """The same run on a 3-worker local cluster, with the load phase spread over its nodes."""

    def build(folder: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
        out = folder / "merged"
        spread = [o for o in OPTIONS if o != "--no-load"]
        spread += ["--spread-load", "--load-engines", "raw", "--load-rates", "10"]
        spread += ["--load-processes", "1,2"]
        done = schedbench("run", "--cluster", "local:3", *spread, "--out", str(out))
        assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
        return out, done

    return tuple(once(tmp_path_factory, "cluster-run", build))


@pytest.fixture(scope="module")
def shards(cluster_run) -> list[Path]:
    return [cluster_run[0] / "shards" / f"shard-{i}" for i in (1, 2, 3)]


@pytest.fixture(scope="module")
def merged(shards, tmp_path_factory) -> Path:
    """``schedbench merge`` of the cluster run's shards, given out of order."""

    def build(folder: Path) -> Path:
        done = schedbench("merge", *map(str, reversed(shards)), "--out", str(folder / "merged"))
        assert done.returncode == 0, done.stderr[-3000:]
        return folder / "merged"

    return once(tmp_path_factory, "cluster-merged", build)


def test_a_run_on_a_local_cluster_is_the_one_host_run(one_host, cluster_run):
    """Three shards have the one-host run's outcomes; with ``--spread-load`` the merged run's
    load phase is the launcher's, across the nodes (tests/cluster/test_spread_load.py tests
    the placement itself)."""
    out, done = cluster_run
    meta = json.loads((out / "meta.json").read_text())
    assert [s["index"] for s in meta["shards"]] == [1, 2, 3]
    assert sorted((out / "shards").iterdir()) == [out / "shards" / f"shard-{i}" for i in (1, 2, 3)]
    assert outcomes(out) == outcomes(one_host)

    assert "load phase spread: the mock on" in done.stdout
    assert meta["config"]["load"] is True and meta["outcome"]["load_levels"] == 2
    placement = meta["load_placement"]
    assert len(placement["generators"]) == 2 and placement["mock"] not in placement["generators"]
    for shard in (out / "shards").iterdir():  # no shard ran a load phase of its own
        assert not (shard / "load.jsonl").exists() or not (shard / "load.jsonl").read_text()
    rows = [json.loads(x) for x in (out / "load.jsonl").read_text().splitlines()]
    levels = [r for r in rows if r["kind"] == "level"]
    assert sorted(r["processes"] for r in levels) == [1, 2]
    assert all(r["mock_host"] == placement["mock"] for r in levels)
    assert (out / "load.csv").read_text().count("\n") == 3  # the header and two levels


def step_ratio(folder: Path):
    rows = [
        r for r in load_run_folder(folder).runs if r.status == "completed" and r.phase == "timed"
    ]
    observations = [
        (r.engine, r.scenario, r.round, r.overhead_ms / r.llm_calls) for r in rows if r.llm_calls
    ]
    return pooling.pool(observations, HAPPY).ratio("lc-create-agent", "scheduler")


def test_the_shards_split_the_scenarios_and_the_merge_has_them_all(shards, merged):
    metas = [json.loads((folder / "meta.json").read_text()) for folder in shards]
    parts = [meta["config"]["scenarios"] for meta in metas]
    played = [s for part in parts for s in part]
    assert sorted(played) == sorted(SCENARIOS)  # each scenario in exactly one shard
    meta = json.loads((merged / "meta.json").read_text())
    assert sorted(meta["config"]["scenarios"]) == sorted(SCENARIOS)
    assert meta["config"]["shard"] is None
    assert [s["index"] for s in meta["shards"]] == [1, 2, 3]
    assert [s["scenarios"] for s in meta["shards"]] == parts
    assert meta["complete"] is True
    rows = [json.loads(line) for line in (merged / "runs.jsonl").read_text().splitlines()]
    shard_rows = [len((folder / "runs.jsonl").read_text().splitlines()) for folder in shards]
    assert len(rows) == sum(shard_rows)
    assert [sum(r["shard"] == i for r in rows) for i in (1, 2, 3)] == shard_rows
    by_shard = {r["scenario"]: r["shard"] for r in rows}
    for index, part in enumerate(parts, start=1):
        assert all(by_shard[s] == index for s in part)
    assert (merged / "summary.csv").exists()


def test_a_merged_run_has_the_one_host_runs_outcomes_and_ratio_within_the_intervals(
    one_host, merged
):
    assert outcomes(merged) == outcomes(one_host)
    ours, one = step_ratio(merged), step_ratio(one_host)
    assert ours.estimate.low <= one.estimate.high and one.estimate.low <= ours.estimate.high
    assert ours.estimate.point > 1 and one.estimate.point > 1


def test_the_merged_folder_reports(merged):
    done = schedbench("report", str(merged))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "3 shards" in (merged / "report.md").read_text()


def _copy(src: Path, dst: Path, **config) -> Path:
    dst.mkdir()
    meta = json.loads((src / "meta.json").read_text())
    meta["config"].update(config)
    (dst / "meta.json").write_text(json.dumps(meta))
    (dst / "runs.jsonl").write_text((src / "runs.jsonl").read_text())
    return dst


def test_shards_that_do_not_make_one_run_are_refused_with_the_reason(
    one_host, shards, merged, tmp_path
):
    s1, s2, s3 = shards
    cases = {
        "missing": ([s1, s3], "shard\\(s\\) 2/3 missing"),
        "twice": ([s1, s1, s2, s3], "shard 1/3 again"),
        "not a shard": ([one_host, s1], "not a shard"),
        "options": ([s1, _copy(s2, tmp_path / "seed", seed=7), s3], "options differ.*seed"),
        "split": ([s1, _copy(s2, tmp_path / "of4", shard="2/4"), s3], "is one of 3"),
    }
    for name, (folders, reason) in cases.items():
        out = tmp_path / f"out-{name.replace(' ', '-')}"
        done = schedbench("merge", *map(str, folders), "--out", str(out))
        assert done.returncode == 2, (name, done.stderr)
        assert re.search(reason, done.stderr), (name, done.stderr)
        assert not (out / "runs.jsonl").exists(), name
    again = schedbench("merge", *map(str, shards), "--out", str(merged))
    assert again.returncode == 2 and "already holds a run" in again.stderr


def test_the_projection_of_a_one_host_run_accounts_for_every_second_once(one_host):
    from bench.runner.shard_projection import project

    meta = json.loads((one_host / "meta.json").read_text())
    whole = project(one_host, 1)
    # meta.json rounds the duration and every phase's seconds to 0.1 s each.
    rounding = 0.05 * (1 + len(meta["outcome"]["phase_s"]))
    assert whole.low_s == pytest.approx(whole.high_s)  # one host: no range (sums in float)
    assert whole.low_s == pytest.approx(meta["duration_s"], abs=rounding)
    for hosts in (2, 3):
        split = project(one_host, hosts)
        names = [n for s in split.shards for n in s.scenarios]
        assert sorted(names) == sorted(SCENARIOS)
        assert sum(s.run_s for s in split.shards) == pytest.approx(whole.shards[0].run_s)
        assert sum(s.phase_s for s in split.shards) == pytest.approx(whole.shards[0].phase_s)
        assert all(s.low_s <= s.high_s for s in split.shards)
        assert split.low_s <= whole.low_s
    done = schedbench("shards", str(one_host), "--hosts", "2")
    assert done.returncode == 0 and "2 host(s):" in done.stdout, done.stderr
    bad = schedbench("shards", str(one_host), "--hosts", "9")
    assert bad.returncode == 2 and "cannot fill 9 shards" in bad.stderr


def test_a_shards_corrupt_row_is_left_out_and_counted_not_fatal(shards, tmp_path):
    """The merge writes through the strict store: a line of the wrong shape is counted as
    skipped, as the folder reader would, and the rest is merged."""
    copies = [_copy(folder, tmp_path / folder.name) for folder in shards]
    with (copies[1] / "runs.jsonl").open("a") as f:
        f.write(json.dumps({"engine": "raw", "scenario": 5}) + "\n")  # valid JSON, not a row
    result = merge(copies, tmp_path / "merged")
    assert result.skipped == {"runs.jsonl": 1}
    lines = [len((folder / "runs.jsonl").read_text().splitlines()) for folder in shards]
    assert result.rows["runs.jsonl"] == sum(lines)


def test_the_shard_options_leave_out_cluster_and_out():
    assert shard_argv(["--cluster", "local", "--quick", "--out", "x", "--rounds=2"]) == [
        "--quick",
        "--rounds=2",
    ]
    assert shard_argv(["--out=x", "--cluster=local", "--engines", "raw"]) == ["--engines", "raw"]


def test_cluster_with_shard_or_resume_or_without_out_is_refused(tmp_path):
    for extra, reason in (
        (["--shard", "1/2", "--out", str(tmp_path / "a")], "--shard is for one shard"),
        (["--resume", "--out", str(tmp_path / "b")], "--resume is for one shard"),
        ([], "--cluster needs --out"),
    ):
        done = schedbench("run", "--cluster", "local", *OPTIONS, *extra)
        assert done.returncode == 2 and reason in done.stderr, (extra, done.stderr)


def _suspend_a_shard_with_a_run(tmp_path: Path) -> psutil.Process:
    """The first shard process seen to have written a run, stopped (SIGSTOP) at once so that
    it cannot finish before its worker is killed, however busy the machine is."""
    deadline = time.monotonic() + EVENT_TIMEOUT_S
    while time.monotonic() < deadline:
        for process in psutil.process_iter(["cmdline"]):
            cmdline = process.info["cmdline"] or []
            if "--shard" not in cmdline or "--out" not in cmdline:
                continue
            runs = Path(cmdline[cmdline.index("--out") + 1]) / "runs.jsonl"
            if runs.is_relative_to(tmp_path) and runs.exists() and runs.stat().st_size > 0:
                with contextlib.suppress(psutil.NoSuchProcess):
                    process.suspend()
                    return process
        time.sleep(0.05)
    raise AssertionError("no shard wrote a run")


def _kill_a_shard_mid_run(tmp_path: Path, allowed_failures: int) -> tuple[int, list[str], int]:
    """Run the shards on a 2-worker cluster; once a shard has written its first run, kill its
    worker (the shard's own processes die with it). (exit code, messages, killed shard)."""
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            worker_dashboard_address=None,
            env={"TMPDIR": str(tmp_path)},
        )
        try:
            messages: list[str] = []
            result: dict[str, int] = {}
            launcher = threading.Thread(
                target=lambda: result.setdefault(
                    "rc",
                    run_on_cluster(
                        "test",
                        KILL_OPTIONS,
                        tmp_path / "merged",
                        say=messages.append,
                        client=Client(cluster),
                    ),
                )
            )
            launcher.start()
            shard = _suspend_a_shard_with_a_run(tmp_path)
            worker = shard.parent()
            index = int(shard.cmdline()[shard.cmdline().index("--shard") + 1].split("/")[0])
            worker.kill()  # the shard (stopped) dies with its dask worker (PDEATHSIG)
            launcher.join(EVENT_TIMEOUT_S)
            assert not launcher.is_alive()
            return result["rc"], messages, index
        finally:
            cluster.close()


def test_a_shard_whose_worker_dies_is_re_run(tmp_path):
    rc, messages, _index = _kill_a_shard_mid_run(tmp_path, allowed_failures=3)
    assert rc == 0, messages
    merged = tmp_path / "merged"
    assert json.loads((merged / "meta.json").read_text())["complete"] is True
    cells = {(r.engine, r.scenario) for r in load_run_folder(merged).runs if r.phase == "timed"}
    engines, scenarios = KILL_OPTIONS[1].split(","), KILL_OPTIONS[3].split(",")
    assert cells == {(e, s) for e in engines for s in scenarios}
    timed = [r for r in load_run_folder(merged).runs if r.phase == "timed"]
    assert len(timed) == len(engines) * len(scenarios) * 10  # the re-run shard's, once each


def test_a_shard_lost_for_good_is_reported_missing_and_nothing_is_merged(tmp_path):
    rc, messages, index = _kill_a_shard_mid_run(tmp_path, allowed_failures=0)
    assert rc == 1
    assert any(m.startswith(f"missing: shard {index}/2") for m in messages), messages
    assert any(f"--shard {index}/2 --out" in m for m in messages), messages
    other = 3 - index
    assert (tmp_path / "merged" / "shards" / f"shard-{other}" / "meta.json").exists()
    assert not (tmp_path / "merged" / "meta.json").exists()
