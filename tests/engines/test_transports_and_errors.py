"""Loopback runs, honest accounting, and engines that never raise."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_asyncio

from bench.engines import ENGINE_NAMES, MAIN_ENGINES, RunContext, create_engine
from bench.referee.server import start_server_process
from bench.referee.transport import BASE_URL
from tests.engines.conftest import HANG_GUARD_S, TEST_RUN_TIMEOUT_S, run_once

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.fixture(scope="module")
def server():
    with start_server_process() as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def inprocess_records(engines, scenarios, mock) -> dict[str, Any]:
    return {
        name: await run_once(engines[name], scenarios["customer_returns"], mock)
        for name in MAIN_ENGINES
    }


@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_customer_returns_over_loopback(
    engine_name, engines, scenarios, server, inprocess_records
):
    scenario = scenarios["customer_returns"]
    record = await run_once(
        engines[engine_name], scenario, None, transport="loopback", base_url=server.base_url
    )
    inprocess = inprocess_records[engine_name]
    expect = scenario.expect.for_engine(engine_name)
    assert (record.status, record.llm_calls, record.tool_calls) == (
        expect["status"],
        expect["llm_calls"],
        expect["tool_calls"],
    ), record.error
    assert expect["final_contains"] in record.final_answer
    # the same requests, whichever transport carried them: counted in the engine's process
    assert record.requests == inprocess.requests
    assert (record.prompt_tokens, record.completion_tokens) == (
        inprocess.prompt_tokens,
        inprocess.completion_tokens,
    )


class Exploding:
    """Stands in for an agent or a client: any use raises, like a framework bug would."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"framework bug: {name}")


@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_an_exception_inside_an_engine_becomes_an_error_record(
    engine_name, engines, scenarios, mock
):
    engine = engines[engine_name]
    ctx = RunContext(
        scenario=scenarios["customer_returns"],
        mock=mock,
        base_url=BASE_URL,
        run_timeout_s=TEST_RUN_TIMEOUT_S,
    )
    prepared = await engine.prepare(ctx)
    for part in ("agent", "client"):
        if hasattr(prepared, part):
            setattr(prepared, part, Exploding())
    record = await engine.run(prepared)
    assert (record.status, record.termination, record.llm_calls, record.tool_calls) == (
        "error",
        "RuntimeError",
        0,
        0,
    )
    assert "framework bug" in record.error


@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_a_run_is_cut_at_the_run_deadline(engine_name, engines, scenarios, mock):
    """tool_timeout's hung tool: engines with a per-tool timeout answer; the others are
    stopped at the run deadline and say so (aborted / timeout), in about that time."""
    scenario = scenarios["tool_timeout"]
    record = await run_once(engines[engine_name], scenario, mock, run_timeout_s=TEST_RUN_TIMEOUT_S)
    if scenario.expect.for_engine(engine_name)["status"] == "completed":  # has a tool timeout
        assert (record.status, record.termination) == ("completed", "stop")
        assert record.tools[0].error == "cancelled"
        assert record.wall_ms < TEST_RUN_TIMEOUT_S * 1000
    else:
        assert (record.status, record.termination) == ("aborted", "timeout")
        assert [(t.name, t.ok, t.error) for t in record.tools] == [
            ("fetch_live_rate", False, "cancelled")
        ]
        assert TEST_RUN_TIMEOUT_S * 1000 <= record.wall_ms < TEST_RUN_TIMEOUT_S * 1000 + 500


async def test_unknown_engine_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="valid engines: " + ", ".join(ENGINE_NAMES)):
        create_engine("langchain")


async def test_records_are_json_rows(inprocess_records):
    import json

    for record in inprocess_records.values():
        row = record.to_row()
        assert "requests" not in row
        json.dumps(row)  # a trace, tool args and extras are all JSON-able
        assert json.loads(json.dumps(record.to_row(with_bodies=True)))["requests"]


@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_concurrent_runs_of_one_prepared_agent_keep_their_own_counts(
    engine_name, engines, scenarios, mock
):
    """The runner's concurrency levels run one prepared agent many times at once: each
    record must count its own requests and tool calls (the RunLog is per run). The deadline
    only stops a hung run: five runs at once on a busy host outlast a tight one."""
    engine = engines[engine_name]
    mock.reset()
    ctx = RunContext(
        scenario=scenarios["parallel_tool_calls"],
        mock=mock,
        base_url=BASE_URL,
        run_timeout_s=HANG_GUARD_S,
    )
    prepared = await engine.prepare(ctx)
    records = await asyncio.gather(*(engine.run(prepared) for _ in range(5)))
    expect = scenarios["parallel_tool_calls"].expect.for_engine(engine_name)
    assert [(r.status, r.llm_calls, r.tool_calls) for r in records] == [
        (expect["status"], expect["llm_calls"], expect["tool_calls"])
    ] * 5
    assert all(len(r.requests) == r.llm_calls for r in records)
