"""A tool failure rate (``fail_rate``, the workload's ``tools.failure_rate``): draws that are
the same for every engine's n-th run, spread evenly over runs, transient; and what real
engines make of it — the one that retries inside the tool node spends no LLM round trip on a
failure (its backoff is a wait), the ones that show the error to the model spend one each,
and create_agent as its docs write it fails the run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.engines.kit import waits
from bench.engines.kit.runlog import end_log, set_ordinal, start_log
from bench.engines.kit.tools import ScenarioTool, ToolFailure
from bench.referee import MockLLM
from bench.workload.decide import with_failure_rate
from scenarios import ToolDef
from tests.engines.conftest import run_once

session_loop = pytest.mark.asyncio(loop_scope="session")
RATE = 0.3
RUNS = 20


@pytest.fixture(autouse=True, scope="module")
def sleeps_recorded() -> Iterator[None]:
    """The worker installs the wait accounting first thing; this process does it here."""
    was = waits.installed()
    waits.install()
    yield
    if not was:
        waits.uninstall()


def flaky(rate: float) -> ScenarioTool:
    return ScenarioTool(
        ToolDef.model_validate(
            {
                "name": "lookup",
                "description": "A lookup.",
                "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}},
                "behavior": {"returns": {"ok": True}, "fail_rate": rate, "fail_message": "reset"},
            }
        )
    )


def first_attempt_fails(tool: ScenarioTool, ordinal: int, x: int = 1) -> tuple[bool, bool]:
    """(the first call failed, its retry failed) in a run numbered ``ordinal``."""
    set_ordinal(ordinal)
    _log, token = start_log()
    try:
        outcomes = []
        for _ in range(2):
            try:
                tool.call(x=x)
                outcomes.append(False)
            except ToolFailure:
                outcomes.append(True)
    finally:
        end_log(token)
        set_ordinal(0)
    return outcomes[0], outcomes[1]


@pytest.mark.parametrize("rate", [0.05, 0.3, 0.7])
def test_any_run_of_consecutive_runs_fails_close_to_the_rate(rate: float) -> None:
    tool = flaky(rate)
    draws = [first_attempt_fails(tool, n)[0] for n in range(1, 1001)]
    for start, length in ((0, 1000), (0, 20), (500, 40), (977, 23)):
        failed = sum(draws[start : start + length])
        # a Weyl sequence: within about one of rate × n (independent draws: ±√(n p (1-p)))
        assert abs(failed - rate * length) <= 2, (start, length, failed)


def test_the_same_run_number_draws_alike_and_a_retry_gets_through() -> None:
    tool = flaky(0.5)
    runs = [first_attempt_fails(tool, n) for n in range(1, 41)]
    assert runs == [first_attempt_fails(tool, n) for n in range(1, 41)]  # deterministic
    assert any(first for first, _ in runs) and not all(first for first, _ in runs)
    for first, retry in runs:
        if first:
            assert not retry  # transient: the call repeating a failed one gets through
    # other arguments are another call site: drawn apart
    other = [first_attempt_fails(tool, n, x=2)[0] for n in range(1, 41)]
    assert other != [first for first, _ in runs]
    assert [first_attempt_fails(flaky(0.0), n)[0] for n in range(1, 41)] == [False] * 40


def failed_sites(record) -> list[tuple[str, str]]:
    """The calls that failed, in order (each a first attempt: a retry gets through)."""
    return [(t.name, repr(sorted(t.args.items()))) for t in record.tools if not t.ok]


@session_loop
async def test_engines_see_the_same_failures_and_pay_for_them_differently(engines, scenarios):
    scenario = with_failure_rate(scenarios["customer_returns"], RATE, "connection reset")
    mock = MockLLM(scenarios={scenario.name: scenario})
    names = ("raw", "scheduler", "lc-create-agent-prod", "lc-create-agent")
    by_engine: dict[str, list] = {name: [] for name in names}
    try:
        for ordinal in range(1, RUNS + 1):
            for name in names:
                set_ordinal(ordinal)
                by_engine[name].append(await run_once(engines[name], scenario, mock))
    finally:
        set_ordinal(0)
    failures = 0
    for n in range(RUNS):
        raw, ours, prod, default = (by_engine[name][n] for name in names)
        sites = failed_sites(raw)
        failures += len(sites)
        # the same run number: the same calls fail, whoever makes them
        assert failed_sites(ours) == failed_sites(prod) == sites, n
        for record in (raw, ours, prod):
            assert record.status == "completed", (record.engine, record.error)
            assert "within 30 days" in (record.final_answer or "")
        # shown to the model: one more LLM round trip (and tokens) per failure
        assert raw.llm_calls == ours.llm_calls == 3 + len(sites)
        # retried inside the tool node: the model never sees it; the backoff is a wait
        assert prod.llm_calls == 3
        assert (prod.wait_count > 0) == bool(sites) and (prod.waited_ms > 0) == bool(sites)
        if sites:
            assert ours.prompt_tokens > prod.prompt_tokens
        # create_agent as its docs write it: the ToolNode re-raises, the run fails
        assert default.status == ("failed" if default.tools[-1].error else "completed")
        assert (default.status == "failed") == any(not t.ok for t in default.tools)
    # 20 runs × 2 call sites at 0.3: the rate, to within the sequence's spread
    assert abs(failures - RATE * 2 * RUNS) <= 3, failures
