"""How busy the host was with other work while a run ran (meta.json machine.other_cores), and
the merge's warning about a shard measured on a busy host (docs/cluster.md)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.results import metrics
from bench.runner.metadata import other_cores
from tests.runner.conftest import ROOT, schedbench_env

pytestmark = [pytest.mark.subprocess, pytest.mark.timeout(600)]
QUICK = [
    "--quick", "--engines", "raw,scheduler", "--scenarios", "customer_returns,single_tool",
    "--no-load", "--no-ttft", "--no-throughput", "--no-footprint",
]  # fmt: skip


def test_other_cores_is_the_hosts_busy_time_less_the_runs_own_per_second():
    assert other_cores((0.0, 10.0, 1.0), (2.0, 14.0, 2.0)) == 1.5
    assert other_cores((0.0, 10.0, 1.0), (2.0, 11.0, 3.0)) == 0.0  # never below 0
    assert other_cores((5.0, 1.0, 1.0), (5.0, 9.0, 1.0)) == 0.0  # no time passed


def schedbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.cli", *args],
        cwd=ROOT, env=schedbench_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_a_shard_run_beside_a_cpu_hog_is_flagged_by_the_merge(tmp_path):
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        done = schedbench("run", *QUICK, "--shard", "1/2", "--out", str(tmp_path / "a"))
    finally:
        hog.kill()
        hog.wait()
    assert done.returncode == 0, done.stderr[-3000:]
    done = schedbench("run", *QUICK, "--shard", "2/2", "--out", str(tmp_path / "b"))
    assert done.returncode == 0, done.stderr[-3000:]
    busy = json.loads((tmp_path / "a" / "meta.json").read_text())["machine"]["other_cores"]
    # the hog spun through the whole shard: whatever else the machine does, it counts
    assert busy >= metrics.CONTENDED
    quiet = json.loads((tmp_path / "b" / "meta.json").read_text())["machine"]["other_cores"]
    assert quiet >= 0.0
    merged = schedbench(
        "merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "m")
    )
    assert merged.returncode == 0, merged.stderr[-3000:]
    assert f"warning: shard 1 ran beside other processes using {busy:.2f} cores" in merged.stdout
