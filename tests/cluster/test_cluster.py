"""``run --cluster``: shards on the workers of a real Dask distributed cluster on loopback,
gathered and merged; a worker killed mid-shard gets its shard re-run, or (when the scheduler
may not retry) the shard is reported missing and nothing is merged."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import dask
import psutil
import pytest
from distributed import Client, LocalCluster

from bench.results.folder import load_run_folder
from bench.runner.cluster import run_on_cluster, shard_argv
from tests.run_folders import outcomes

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = [
    "--engines", "raw,scheduler,lc-create-agent",
    "--scenarios", "customer_returns,single_tool,sequential_chain,tool_flaky",
    "--quick", "--no-load", "--no-ttft", "--no-throughput", "--no-footprint",
]  # fmt: skip
# the kill tests: every shard has seconds of work left after its first run (its other
# engines' workers still have to start), so the kill lands mid-shard
KILL_OPTIONS = [
    "--engines", "raw,scheduler,lc-create-agent", "--scenarios", "customer_returns,single_tool",
    "--quick", "--repeat", "20", "--no-load", "--no-ttft", "--no-throughput", "--no-footprint",
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
    out = tmp_path_factory.mktemp("one") / "run"
    done = schedbench("run", *OPTIONS, "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_a_run_on_a_local_cluster_is_the_one_host_run(one_host, tmp_path):
    """Three shards have the one-host run's outcomes; with ``--spread-load`` the merged run's
    load phase is the launcher's, across the nodes (tests/cluster/test_spread_load.py tests
    the placement itself)."""
    out = tmp_path / "merged"
    spread = [o for o in OPTIONS if o != "--no-load"]
    spread += ["--spread-load", "--load-engines", "raw", "--load-rates", "10"]
    spread += ["--load-processes", "1,2"]
    done = schedbench("run", "--cluster", "local:3", *spread, "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
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
    assert len(timed) == len(engines) * len(scenarios) * 20  # the re-run shard's, once each


def test_a_shard_lost_for_good_is_reported_missing_and_nothing_is_merged(tmp_path):
    rc, messages, index = _kill_a_shard_mid_run(tmp_path, allowed_failures=0)
    assert rc == 1
    assert any(m.startswith(f"missing: shard {index}/2") for m in messages), messages
    assert any(f"--shard {index}/2 --out" in m for m in messages), messages
    other = 3 - index
    assert (tmp_path / "merged" / "shards" / f"shard-{other}" / "meta.json").exists()
    assert not (tmp_path / "merged" / "meta.json").exists()
