"""The load phase spread over the nodes of a real Dask cluster on loopback: the mock pool on
one worker's node, the load workers on the others', each level's processes split over the
generator nodes (``run --cluster --spread-load`` end to end: tests/cluster/test_cluster.py)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from bench.results.files import LOAD
from bench.results.store import RunStore
from bench.runner.cluster import connect
from bench.runner.phases.load.nodes import on_cluster
from bench.runner.phases.load.phase import LoadPhase
from bench.runner.plan import RunConfig
from scenarios import load_scenarios

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.timeout(900), pytest.mark.slow, pytest.mark.subprocess]


def quick_load_config(**changes) -> RunConfig:
    values = {
        **RunConfig.quick_defaults(),
        "engines": ("raw",),
        "scenarios": ("customer_returns",),
        "load_engines": ("raw",),
        "load_rates": (10.0,),
        "load_start_rate": 10.0,
        "load_processes": (1, 2),
        # placement is under test, not speed: a target no busy host misses, so every level
        # runs its window instead of stopping early on lateness
        "load_target_factor": 20.0,
        **changes,
    }
    return RunConfig(**values)


@pytest.fixture(scope="module")
def cluster():
    client, local = connect("local:3")  # the launcher's own local cluster: 3 worker processes
    try:
        yield client
    finally:
        client.close()
        local.close()


def test_the_mock_runs_on_one_node_and_each_level_on_the_generator_nodes(cluster, tmp_path):
    workers = sorted(cluster.scheduler_info()["workers"])
    placement = on_cluster(cluster, workers[0], workers[1:])
    assert placement.spread and placement.mock_host == "127.0.0.1"
    store = RunStore(tmp_path / "run")
    store.create()
    config = quick_load_config()
    outcome = LoadPhase(
        config, load_scenarios(None), store, placement=placement, scenario_dir=None
    ).run()
    assert outcome.crashed_levels == 0 and outcome.levels == 2, outcome
    rows = [json.loads(line) for line in store.path(LOAD).read_text().splitlines()]

    # every process ran where the placement put it: the pids a level's workers reported are
    # processes started by that node's actor (its Dask worker process), the mock's by the first
    mock_pids = set(placement.mock.call("started"))
    started = [set(node.call("started")) for node in placement.generators]
    assert not mock_pids & (started[0] | started[1])
    mock_rows = [r for r in rows if r["kind"] == "mock"]
    assert len(mock_rows) == 2 and all(r["mock_host"] == placement.mock.host for r in mock_rows)
    levels = {r["processes"]: r for r in rows if r["kind"] == "level"}
    assert set(levels) == {1, 2}
    one, two = levels[1], levels[2]
    assert set(one["pids"]) <= started[0]
    assert one["generator_hosts"] == [placement.generators[0].host]
    # two processes: one on each generator node, from one start time read in its node's clock
    first, second = two["pids"]
    assert first in started[0] and second in started[1]
    assert two["generator_hosts"] == [g.host for g in placement.generators]
    assert len(two["clock_offsets_ms"]) == 2 and all(map(math.isfinite, two["clock_offsets_ms"]))
    for row in (one, two):
        assert row["mock_host"] == placement.mock.host
        assert row["ok"] > 0 and row["failed"] == 0 and row["wrong"] == 0
        assert row["scheduled"] == row["ok"] + row["timeouts"] + row["cut"] + row["not_run"]
    # the deployment's cores: the generator nodes' (one machine here: counted once)
    assert placement.cores == placement.generators[0].cores


def test_a_spread_load_needs_two_nodes_and_distinct_roles(cluster):
    workers = sorted(cluster.scheduler_info()["workers"])
    with pytest.raises(ValueError, match="at least one generator"):
        on_cluster(cluster, workers[0], [])
    with pytest.raises(ValueError, match="both the mock's node and a generator"):
        on_cluster(cluster, workers[0], workers[:2])


def schedbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench.cli", *args], capture_output=True, text=True, cwd=ROOT
    )


def test_spread_load_without_a_cluster_or_with_no_load_is_refused(tmp_path):
    done = schedbench("run", "--spread-load", "--quick", "--out", str(tmp_path / "a"))
    assert done.returncode == 2 and "it needs --cluster" in done.stderr
    done = schedbench(
        "run", "--cluster", "local", "--spread-load", "--no-load", "--out", str(tmp_path / "b")
    )
    assert done.returncode == 2 and "pick one" in done.stderr


def test_the_report_says_where_a_spread_load_phase_ran():
    from types import SimpleNamespace

    from bench.report.load_section import _placement_text

    assert _placement_text(SimpleNamespace(meta={})) == ""
    placement = {"mock": "a[tcp://1]", "generators": ["b[tcp://2]", "c[tcp://3]"], "cores": 16}
    text = _placement_text(SimpleNamespace(meta={"load_placement": placement}))
    assert "the mock on a[tcp://1]" in text and "b[tcp://2], c[tcp://3]" in text
    assert "16 cores together" in text
