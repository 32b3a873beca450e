"""The results cache (bench.runner.cache): an outcome cell measured once is reused by the next
run with the same code, environment and scenario, outcome for outcome, and never a timing.

The end-to-end test plays the real scheduler (cached: a built-in engine) and a plug-in fake
(never cached) through the command, twice on one cache directory (the test's own:
``results_cache`` in ``tests/conftest.py``; every other test runs without a cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.model.caches import ENV_VARIABLE, OFF
from bench.report.from_folder import load_run_dir
from bench.results.rows import TIMINGS, RunMeasurement, RunRow
from bench.runner import cache
from bench.runner.cache import ResultsCache, cacheable, key_of, without_timings
from tests.runner.conftest import start_schedbench

FAULTS = ("tool_flaky", "max_steps", "llm_unauthorized")
ONLY_OUTCOMES = ("--no-ttft", "--no-throughput", "--no-footprint", "--no-load", "--rounds", "1")
OUTCOME = ("status", "termination", "expect_ok", "llm_calls", "tool_calls", "prompt_tokens")


def _run(out: Path, *extra: str) -> tuple[list[dict], dict]:
    process = start_schedbench(
        "run",
        "--engines",
        "scheduler,fake-failing",
        "--scenarios",
        ",".join(("single_tool", *FAULTS)),
        *ONLY_OUTCOMES,
        *extra,
        "--out",
        str(out),
    )
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines() if line]
    return rows, json.loads((out / "meta.json").read_text())


def _faults(rows: list[dict], engine: str) -> dict[tuple, dict]:
    return {
        (r["scenario"], r["repeat"]): r
        for r in rows
        if r["engine"] == engine and r["scenario"] in FAULTS
    }


@pytest.mark.subprocess
def test_a_second_run_reuses_each_outcome_cell_without_its_timings(tmp_path, results_cache):
    first, first_meta = _run(tmp_path / "first")
    assert first_meta["outcome"]["cache"]["hits"] == 0
    assert not any(r.get("reused_from") for r in first)
    assert any(results_cache.rglob("*.json"))  # the scheduler's cells were kept

    second, second_meta = _run(tmp_path / "second")
    measured, reused = _faults(first, "scheduler"), _faults(second, "scheduler")
    assert reused.keys() == measured.keys() and len(reused) == len(FAULTS)
    for cell, row in reused.items():
        assert row["reused_from"], cell
        assert {k: row[k] for k in OUTCOME} == {k: measured[cell][k] for k in OUTCOME}
        assert all(row[name] is None for name in TIMINGS if name in row), cell
        assert row["wall_ms"] is None and measured[cell]["wall_ms"] is not None
    assert second_meta["outcome"]["cache"]["hits"] == len(FAULTS)
    assert second_meta["outcome"]["cache"]["reused_runs"] == len(FAULTS)
    # a plug-in's code is not in the key: always measured; the happy path is a timing: measured
    assert all(r.get("reused_from") is None for r in _faults(second, "fake-failing").values())
    timed = [r for r in second if r["scenario"] == "single_tool" and r["phase"] == "timed"]
    assert timed and all(r.get("reused_from") is None and r["wall_ms"] for r in timed)
    # the report reads the reused rows, and says what it took from the cache
    notes = " ".join(load_run_dir(tmp_path / "second").notes)
    assert (
        f"{len(FAULTS)} runs of {len(FAULTS)} fault cells were taken from the results cache"
        in notes
    )


def test_no_cache_turns_it_off_for_the_run(results_cache, monkeypatch):
    from bench.cli import build_parser
    from bench.commands.run import requested_config

    names = ("single_tool", "tool_flaky")
    for argv, expected in ((["run"], True), (["run", "--no-cache"], False)):
        args = build_parser().parse_args(argv)
        assert requested_config(args, names).cache is expected
    assert ResultsCache.for_run(False, "0123456789abcdef").directory is None
    on = ResultsCache.for_run(True, "0123456789abcdef")
    assert on.directory == results_cache and on.provenance.endswith("(git 0123456789)")
    monkeypatch.setenv(ENV_VARIABLE, OFF)  # the test suite's own setting
    assert not ResultsCache.for_run(True, "0123456789abcdef").enabled


# -- the key and the reused row ------------------------------------------------------------


BASE = {
    "phase": "outcomes",
    "engine": "scheduler",
    "scenario": {"name": "tool_flaky", "user": "hi"},
    "latency": "zero",
    "transport": "inprocess",
    "runs": 1,
    "confirm": 2,
    "seed": 0,
    "handlers": [],
    "code": "abc",
    "environment": {"python": "3.11.9", "packages": {"httpx": "0.28.1"}},
}


@pytest.mark.parametrize(
    "change",
    [
        {"engine": "lc-create-agent"},
        {"scenario": {"name": "tool_flaky", "user": "hello"}},
        {"latency": "realistic"},
        {"transport": "loopback"},
        {"runs": 3},
        {"seed": 1},
        {"code": "abd"},
        {"environment": {"python": "3.11.9", "packages": {"httpx": "0.28.2"}}},
        {"environment": {"python": "3.12.1", "packages": {"httpx": "0.28.1"}}},
    ],
)
def test_any_change_to_what_a_result_depends_on_is_another_key(change):
    assert key_of({**BASE, **change}) != key_of(BASE)
    assert key_of(dict(reversed(list(BASE.items())))) == key_of(BASE)  # order is no change


def test_the_code_fingerprint_follows_the_harness_but_not_its_report(tmp_path):
    for top in cache.CODE_ROOTS:
        (tmp_path / top).mkdir()
    (tmp_path / "bench" / "report").mkdir()
    (tmp_path / "bench" / "runner.py").write_text("A = 1\n")
    (tmp_path / "bench" / "report" / "prose.py").write_text("TEXT = 'x'\n")
    before = cache.code_fingerprint.__wrapped__(tmp_path)
    (tmp_path / "bench" / "report" / "prose.py").write_text("TEXT = 'y'\n")
    assert cache.code_fingerprint.__wrapped__(tmp_path) == before
    (tmp_path / "scheduler" / "loop.py").write_text("B = 2\n")
    assert cache.code_fingerprint.__wrapped__(tmp_path) != before


def test_every_time_a_run_measures_is_left_out_of_a_reused_row():
    durations = {name for name in RunMeasurement.model_fields if name.endswith("_ms")}
    assert durations <= TIMINGS
    assert set(RunMeasurement.model_fields) >= TIMINGS
    row = {"engine": "scheduler", "status": "completed", "llm_calls": 3, "wall_ms": 12.5}
    reused = without_timings(row, "2026-12-07T17:00:00Z (git 0123456789)")
    assert reused == {
        "engine": "scheduler",
        "status": "completed",
        "llm_calls": 3,
        "wall_ms": None,
        "reused_from": "2026-12-07T17:00:00Z (git 0123456789)",
    }
    RunRow.model_validate(
        {**reused, "scenario": "s", "latency": "zero", "transport": "inprocess"}
        | {"round": 0, "repeat": 0, "phase": "timed"}
    )


def test_an_unreadable_or_foreign_entry_is_a_miss(tmp_path):
    store = ResultsCache(tmp_path, provenance="now")
    store.put("outcomes", "ab" * 32, BASE, [{"status": "completed"}])
    assert store.get("outcomes", "ab" * 32)["value"] == [{"status": "completed"}]
    path = next(tmp_path.rglob("*.json"))
    path.write_text("{not json")
    assert store.get("outcomes", "ab" * 32) is None
    path.write_text(json.dumps({"key": "cd" * 32, "value": []}))  # another key's entry
    assert store.get("outcomes", "ab" * 32) is None
    assert store.summary() == {"directory": str(tmp_path), "hits": 1, "misses": 2}
    off = ResultsCache(None, provenance="now")
    off.put("outcomes", "ab" * 32, BASE, [])
    assert off.get("outcomes", "ab" * 32) is None and not off.enabled


def test_only_a_cell_whose_every_run_ended_on_its_own_is_kept():
    ended = {"status": "completed", "termination": "stop", "llm_calls": 3}
    refused = {"status": "error", "termination": "llm_error", "llm_calls": 4}
    assert cacheable([ended, refused])  # an error the engine reported is an outcome
    assert not cacheable([])
    assert not cacheable([ended, {**ended, "crashed": True}])
    for termination in ("timeout", "harness_error", "env_unavailable", "worker_crash"):
        assert not cacheable([ended, {**ended, "termination": termination}]), termination
