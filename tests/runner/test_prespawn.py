"""A round's workers started side by side before its first batch (WorkerPool.prespawn)."""

from __future__ import annotations

from bench.results.files import FOOTPRINT
from bench.results.store import RunStore
from bench.runner.progress import NullProgress
from bench.runner.workers import WorkerPool

ENGINES = ("raw", "scheduler-plain")


def _pool(tmp_path) -> WorkerPool:
    return WorkerPool(
        ENGINES,
        RunStore(tmp_path),
        NullProgress(),
        scenario_dir=None,
        transport="inprocess",
        reference="customer_returns",
        handler_args=[],
    )


def test_prespawned_workers_serve_the_round_and_say_they_started_side_by_side(tmp_path):
    pool = _pool(tmp_path)
    try:
        pool.prespawn([*ENGINES, "raw"], 0, jobs=2)
        assert all(pool.has_worker(e, 0) for e in ENGINES)
        started = {e: pool.worker_for(e, 0) for e in ENGINES}
        assert {e: pool.worker_for(e, 0) for e in ENGINES} == started  # no second spawn
        pool.store.sync()
        rows = pool.store.rows(FOOTPRINT)
        assert sorted(r.engine for r in rows) == sorted(ENGINES)
        assert all(r.status == "ok" and r.spawned_beside == 2 for r in rows)
        assert all(r.first_run_status == "completed" for r in rows)
    finally:
        pool.close_all()


def test_one_job_leaves_each_spawn_to_its_first_use(tmp_path):
    pool = _pool(tmp_path)
    try:
        pool.prespawn(ENGINES, 0, jobs=1)
        assert not any(pool.has_worker(e, 0) for e in ENGINES)
        pool.worker_for("raw", 0)
        pool.store.sync()
        (row,) = pool.store.rows(FOOTPRINT)
        assert row.spawned_beside == 1
    finally:
        pool.close_all()
