"""Call counting: new calls told from resumes, C calls, executor jobs, reproducible counts."""

from __future__ import annotations

import asyncio

from bench.engines.raw import RawEngine
from bench.probe.counting import CallCounter, harness_roots
from bench.probe.groups import HARNESS
from bench.probe.measure import ExecutorJobs, _Stack
from tests.probe import sample_code
from tests.probe.helpers import scenario_probe


async def test_a_coroutine_is_one_call_and_its_resumes_are_counted_apart(
    sample_group: str,
) -> None:
    counter = CallCounter(frozenset())
    with counter as counts:
        await sample_code.three_steps()
    # three_steps once, plain once; three_steps resumed after each of its two sleeps
    assert (counts.calls[sample_group], counts.resumes[sample_group]) == (2, 2)
    assert counts.c_calls[sample_group] == 2  # plain's two len() calls
    assert counts.calls["asyncio"] >= 2  # the two asyncio.sleep calls (and the loop's steps)


async def test_jobs_handed_to_the_thread_pool_are_counted_in_their_thread(
    sample_group: str,
) -> None:
    counter = CallCounter(frozenset())
    loop = asyncio.get_running_loop()
    with _Stack(ExecutorJobs(counter.thread_job), counter):
        assert await loop.run_in_executor(None, sample_code.sync_work) == 4
    assert counter.counts.executor_jobs == 1
    assert counter.counts.calls[sample_group] == 3  # sync_work and plain twice
    assert counter.counts.c_calls[sample_group] == 4
    assert "run_in_executor" not in vars(loop)  # the loop's own method again


def test_harness_roots_are_the_mock_and_the_tool_bodies() -> None:
    names = sorted(code.co_qualname for code in harness_roots())
    assert names == ["MockLLM.handle", "ScenarioTool.acall", "ScenarioTool.call"]


async def test_the_raw_loop_makes_the_same_calls_run_after_run() -> None:
    probe = await scenario_probe(RawEngine(), "customer_returns")
    runs = []
    for _ in range(3):
        counter = CallCounter()
        await probe.run(counter)
        runs.append(counter.counts)
    first = runs[0]
    assert first.engine_calls > 100 and first.calls[HARNESS] > 0
    assert first.calls["httpx"] > first.calls["engine code"] > 0
    for later in runs[1:]:
        assert (later.calls, later.resumes, later.c_calls) == (
            first.calls,
            first.resumes,
            first.c_calls,
        )
