"""The TTFT phase: each engine's token stream on streaming_long_answer, into ttft.jsonl/.csv."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys

import pytest

from bench.engines.plugins import ENV_VAR
from bench.results.files import TTFT_KEY
from bench.results.summary import TTFT_COLUMNS
from bench.runner.plan import RunConfig
from tests.once import once
from tests.runner.conftest import FAKES, ROOT

# the real raw loop and scheduler (fast to import), and a fake engine that cannot stream
ENGINES = ("raw", "scheduler", "fake-slow")
REPEAT = RunConfig.quick_defaults()["ttft_repeat"]  # --quick's timed TTFT runs per engine


def schedbench(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env[ENV_VAR] = f"fake-slow={FAKES}:FakeSlow"  # raw stays the real engine here
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "bench.cli", "run", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def ttft_run(tmp_path_factory):
    def build(folder):
        out = folder / "run"
        done = schedbench("--quick", "--out", str(out), "--engines", ",".join(ENGINES),
                          "--scenarios", "single_tool", "--no-throughput", "--no-footprint", "--no-load")  # fmt: skip
        assert done.returncode == 0, done.stderr
        return out, done

    return tuple(once(tmp_path_factory, "ttft-run", build))


def test_ttft_csv_has_a_row_per_engine(ttft_run):
    out, done = ttft_run
    with (out / "ttft.csv").open(newline="") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == TTFT_COLUMNS
    assert [r["engine"] for r in table] == list(ENGINES)
    assert {(r["scenario"], r["latency"], r["transport"]) for r in table} == {
        ("streaming_long_answer", "ttft", "inprocess")
    }
    assert [(r["n"], r["crashed"], r["errors"], r["expect_ok_rate"]) for r in table] == [
        (str(REPEAT), "0", "0", "1")
    ] * 3
    raw, scheduler, fake = table
    floor = float(raw["floor_ttft_ms"])
    assert 180 < floor < 240  # 2 × ~100 ms to the first token + the tool call's stream
    for row in (raw, scheduler):
        assert row["n_ttft"] == str(REPEAT) and row["streamed_requests_median"] == "2"
        assert float(row["floor_ttft_ms"]) == floor  # the same floor for every engine
        # no first token before the scripted floor; how far past it is a measurement (a busy
        # host adds to it), bounded below by the run's end
        assert floor < float(row["ttft_ms_median"])
        assert float(row["extra_ttft_ms"]) == pytest.approx(
            float(row["ttft_ms_median"]) - floor, abs=1e-3
        )
        assert float(row["ttft_ms_p25"]) <= float(row["ttft_ms_median"])
        assert float(row["ttft_ms_median"]) <= float(row["ttft_ms_p75"])
        assert float(row["ttft_ms_max"]) < float(row["wall_ms_median"])
        # these engines send exactly the floor's requests: own scripted time = floor
        assert float(row["scripted_ttft_ms_median"]) == pytest.approx(floor, abs=0.5)
    assert float(raw["extra_ttft_vs_raw_ms"]) == 0
    # the fake engine ignores stream_tokens: its runs count, but it has no TTFT
    assert fake["n_ttft"] == "0" and fake["ttft_ms_median"] == "" and fake["extra_ttft_ms"] == ""
    assert (
        "Time to first token" in done.stdout
        and f"[ttft] {len(ENGINES) * (REPEAT + 1)} runs planned" in done.stderr
    )


def test_ttft_rows_stay_out_of_runs_jsonl(ttft_run):
    out, _ = ttft_run
    runs = rows(out / "runs.jsonl")
    assert {r["scenario"] for r in runs} == {"single_tool"}
    ttft = rows(out / "ttft.jsonl")
    assert sorted((r["engine"], r["phase"], r["repeat"]) for r in ttft) == sorted(
        [(e, "warmup", 0) for e in ENGINES]
        + [(e, "timed", i) for e in ENGINES for i in range(REPEAT)]
    )
    meta = json.loads((out / "meta.json").read_text())
    assert meta["complete"] is True
    assert (
        meta["outcome"]["ttft_runs"] == len(ENGINES) * REPEAT
        and meta["outcome"]["ttft_missing"] == 0
    )
    assert meta["config"]["ttft_repeat"] == REPEAT and meta["config"]["ttft_latency"] == "ttft"


def test_resume_measures_only_the_missing_ttft_runs(ttft_run, tmp_path):
    out = shutil.copytree(ttft_run[0], tmp_path / "run")  # the other tests read the run
    path = out / "ttft.jsonl"
    lost = {"engine": "raw", "scenario": "streaming_long_answer", "latency": "ttft",
            "transport": "inprocess", "round": 0, "repeat": 1, "phase": "timed",
            "status": "error", "termination": "worker_crash", "crashed": True}  # fmt: skip
    with path.open("a") as f:
        f.write(json.dumps(lost) + "\n")
    before = len(rows(path))
    done = schedbench("--out", str(out), "--resume")
    assert done.returncode == 0, done.stderr
    new = rows(path)[before:]
    assert [(r["engine"], r["phase"], r["repeat"]) for r in new] == [
        ("raw", "warmup", 0),
        ("raw", "timed", 1),
    ]
    assert new[-1]["status"] == "completed" and new[-1]["ttft_ms"] > 0
    latest = {tuple(r.get(k) for k in TTFT_KEY): r for r in rows(path)}
    assert not any(r.get("crashed") for r in latest.values())
