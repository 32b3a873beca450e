"""``decide --cluster``: the workload's run as shards on a real local Dask cluster, merged and
answered; the shards play copies of the scenarios in their own folders (a tool failure rate),
so the merge checks the copies agree and keeps them once."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.errors import MergeError
from bench.results.merge import merge
from tests.once import once
from tests.run_folders import outcomes

ROOT = Path(__file__).resolve().parents[2]
WORKLOAD = """\
name: tiny
llm: {first_token_ms: 20, tokens_per_s: 2000}
rate: 4
objective: {p95_ms: 1500}
scenarios: [single_tool, customer_returns]
engines: [raw, scheduler-plain]
tools: {failure_rate: 0.3}
"""
pytestmark = pytest.mark.timeout(900)  # whole runs on a cluster sharing the machine


def schedbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


@pytest.fixture(scope="module")
def decided(tmp_path_factory) -> dict[str, Path]:
    def build(base: Path) -> dict[str, Path]:
        workload = base / "tiny.yaml"
        workload.write_text(WORKLOAD)
        out = {"workload": workload, "one": base / "one", "merged": base / "merged"}
        done = schedbench("decide", str(workload), "--quick", "--out", str(out["one"]))
        assert done.returncode == 0, done.stderr[-3000:]
        done = schedbench(
            "decide", str(workload), "--quick", "--cluster", "local", "--out", str(out["merged"])
        )
        assert done.returncode == 0, done.stderr[-3000:] + done.stdout[-3000:]
        return out

    return once(tmp_path_factory, "decide-cluster", build)


def test_a_decide_on_a_local_cluster_answers_as_on_one_host(decided):
    merged = decided["merged"]
    meta = json.loads((merged / "meta.json").read_text())
    assert [s["index"] for s in meta["shards"]] == [1, 2]
    # the copies every shard played, kept once, and the merged run reads them there
    played = merged / "scenarios"
    assert sorted(p.name for p in played.iterdir()) == ["customer_returns.yaml", "single_tool.yaml"]
    assert meta["config"]["scenario_dir"] == str(played.resolve())
    for shard in ("shard-1", "shard-2"):
        for copy in played.iterdir():
            assert (merged / "shards" / shard / "scenarios" / copy.name).read_bytes() == (
                copy.read_bytes()
            )
    # the same runs, failures and outcomes as one host (the draws follow the repeat index)
    assert outcomes(merged) == outcomes(decided["one"])
    page = (merged / "decision.md").read_text()
    one = (decided["one"] / "decision.md").read_text()
    line = [x for x in page.splitlines() if x.startswith("Tool calls that failed")]
    assert line == [x for x in one.splitlines() if x.startswith("Tool calls that failed")]
    assert "## Decision" in page and "**scheduler-plain**" in page


def test_shards_that_played_other_copies_are_not_merged(decided, tmp_path):
    shards = decided["merged"] / "shards"
    copies = [shutil.copytree(shards / s, tmp_path / s) for s in ("shard-1", "shard-2")]
    edited = copies[1] / "scenarios" / "single_tool.yaml"
    edited.write_text(edited.read_text().replace("fail_rate: 0.3", "fail_rate: 0.4"))
    with pytest.raises(MergeError, match="the scenarios it played differ"):
        merge(copies, tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_decide_cluster_and_shard_misuse_is_refused(decided, tmp_path):
    workload = str(decided["workload"])
    for extra, reason in (
        (["--cluster", "local", "--shard", "1/2", "--out", str(tmp_path / "a")], "--shard"),
        (["--cluster", "local"], "--cluster needs --out"),
        (["--shard", "3/2", "--out", str(tmp_path / "b")], "I must be between 1 and N"),
        (["--from-run", str(decided["merged"]), "--shard", "1/2"], "--from-run measures nothing"),
    ):
        done = schedbench("decide", workload, *extra)
        assert done.returncode != 0 and reason in done.stderr, (extra, done.stderr)
