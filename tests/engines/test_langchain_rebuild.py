"""The rebuilt ``lc-create-agent-prod`` and its two variants (``-inline``, ``-stream``):
the same outcomes as the build they replace on every fault scenario, with fewer graph nodes,
fewer thread hops and each message's tokens counted once per run (executions are counted,
never timed)."""

from __future__ import annotations

import concurrent.futures
from types import SimpleNamespace
from typing import Any

import pytest

import langchain_baseline as lcb
import langchain_baseline.custom_middleware as custom_middleware
from bench.engines import RunContext
from bench.engines.kit.tools import build_tools
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from langchain_baseline.guards import json_tokens
from scenarios import load_scenarios
from tests.engines.conftest import run_once

session_loop = pytest.mark.asyncio(loop_scope="session")

REBUILT = ["lc-create-agent-prod", "lc-create-agent-prod-inline", "lc-create-agent-prod-stream"]

# what the build before the rebuild (ModelCallLimitMiddleware, five custom middleware, two of
# them after_model nodes; main at e4ec5fd) did on each fault scenario, in-process:
# (status, termination, LLM calls, tool executions, the tools executed in order)
BEFORE: dict[str, tuple[str, str, int, int, list[str]]] = {
    "confirmation_required": ("completed", "stop", 3, 1, ["query_order"]),
    "huge_tool_result": ("completed", "stop", 2, 1, ["export_logs"]),
    "llm_bad_request": ("failed", "llm_error", 1, 0, []),
    "llm_down": ("failed", "llm_error", 4, 0, []),
    "llm_model_not_found": ("failed", "llm_error", 1, 0, []),
    "llm_rate_limit": ("completed", "stop", 4, 1, ["get_forecast"]),
    "llm_rate_limit_burst": ("completed", "stop", 5, 1, ["get_forecast"]),
    "llm_server_error": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_slow_first_token": ("completed", "stop", 2, 1, ["get_forecast"]),
    "llm_stream_corrupt_chunk": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_stream_dropped": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_stream_stall": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_stream_stall_forever": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_stream_truncated": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_stream_truncated_tool_call": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_timeout": ("completed", "stop", 3, 1, ["get_forecast"]),
    "llm_unauthorized": ("failed", "llm_error", 1, 0, []),
    "loop_detection": ("aborted", "tool_limit", 3, 2, ["get_job_status"] * 2),
    "malformed_tool_args": ("completed", "stop", 3, 1, ["get_weather"]),
    "max_steps": ("aborted", "max_steps", 5, 5, ["search_papers"] * 5),
    "tool_circuit_breaker": ("completed", "stop", 5, 3, ["get_quote"] * 3),
    "tool_flaky": ("completed", "stop", 2, 3, ["track_parcel"] * 3),
    "tool_timeout": ("completed", "stop", 3, 2, ["fetch_live_rate", "get_cached_rate"]),
    "unknown_tool": ("completed", "stop", 3, 1, ["get_weather"]),
}
FAULTS = sorted(n for n, s in load_scenarios().items() if "fault" in s.tags)


def test_the_table_covers_every_fault_scenario() -> None:
    assert sorted(BEFORE) == FAULTS


@pytest.mark.parametrize("scenario_name", FAULTS)
@pytest.mark.parametrize("engine_name", REBUILT)
@session_loop
async def test_the_outcome_is_the_old_builds(engines, scenarios, mock, engine_name, scenario_name):
    record = await run_once(engines[engine_name], scenarios[scenario_name], mock)
    outcome = (
        record.status,
        record.termination,
        record.llm_calls,
        record.tool_calls,
        [t.name for t in record.tools],
    )
    assert outcome == BEFORE[scenario_name], record.error


class ThreadHops:
    """Counts the tasks handed to worker threads (``run_in_executor`` / ``to_thread``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.count = 0
        submit = concurrent.futures.ThreadPoolExecutor.submit

        def counting(pool: Any, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return submit(pool, fn, *args, **kwargs)

        monkeypatch.setattr(concurrent.futures.ThreadPoolExecutor, "submit", counting)


async def hops_and_nodes(engine, scenario, mock, monkeypatch) -> tuple[int, int]:
    """(thread hops, graph node executions) of one run of ``scenario``."""
    prepared = await engine.prepare(RunContext(scenario=scenario, mock=mock, base_url=BASE_URL))
    mock.reset()
    await engine.run(prepared)  # warm: first-use imports and caches
    mock.reset()
    hops = ThreadHops(monkeypatch)
    record = await engine.run(prepared)
    counted = hops.count
    monkeypatch.undo()
    assert record.status == "completed", record.error
    mock.reset()
    nodes = 0
    with engine.run_config(prepared) as config:
        async for task in prepared.agent.astream(prepared.inputs, config, stream_mode="tasks"):
            nodes += "triggers" in task  # a task's start (its result has no triggers)
    return counted, nodes


@session_loop
async def test_fewer_nodes_and_thread_hops_than_before(engines, scenarios, mock, monkeypatch):
    """customer_returns: 3 model calls, 2 tool calls. The build before the rebuild ran 17
    nodes (5 per model call) and 37 thread hops; the default agent runs 5 and 3."""
    scenario = scenarios["customer_returns"]
    default = await hops_and_nodes(engines["lc-create-agent"], scenario, mock, monkeypatch)
    prod = await hops_and_nodes(engines["lc-create-agent-prod"], scenario, mock, monkeypatch)
    # langsmith.traceable's async wrapper: two hops per wrap_* layer and call — model calls
    # pass ModelRetry, ContextEditing and ModelCallGuards, tool calls ToolError, ToolRetry
    # and ToolCallGuards (before: a fourth tool layer, 37 hops)
    layers = 2 * (3 * 3 + 3 * 2)
    assert default == (3, 5)
    assert prod == (default[0] + layers, 5)
    inline = await hops_and_nodes(
        engines["lc-create-agent-prod-inline"], scenario, mock, monkeypatch
    )
    assert inline == default  # the hops inlined; the override does not outlive the run
    again = await hops_and_nodes(engines["lc-create-agent-prod"], scenario, mock, monkeypatch)
    assert again == prod


@pytest.mark.parametrize("engine_name", ["lc-create-agent-prod", "lc-create-agent-prod-stream"])
@session_loop
async def test_the_step_limit_holds_across_human_reviews(engines, scenarios, engine_name):
    """max_steps with every call gated (and approved): each resume is a new invocation, so
    the recursion limit alone would never stop it (the old build ran to the script's end)."""
    base = scenarios["max_steps"]
    tools = [
        t.model_copy(update={"require_confirmation": True, "approval": "approve"})
        for t in base.tools
    ]
    scenario = base.model_copy(update={"tools": tools})
    record = await run_once(engines[engine_name], scenario, MockLLM({scenario.name: scenario}))
    limit = scenario.limits.max_steps
    assert (record.status, record.termination, record.llm_calls, record.tool_calls) == (
        "aborted",
        "max_steps",
        limit,
        limit,
    )


@session_loop
async def test_each_message_is_counted_once_per_run(engines, scenarios, mock, monkeypatch):
    """customer_returns sends 1, 3 and 5 messages (and the system prompt): the budget counts
    the 5 distinct messages, not the 9 a count of every request would convert."""
    counted: list[Any] = []
    convert = custom_middleware.convert_to_openai_messages

    def counting(message: Any) -> Any:
        counted.append(message)
        return convert(message)

    engine = engines["lc-create-agent-prod"]
    scenario = scenarios["customer_returns"]
    prepared = await engine.prepare(RunContext(scenario=scenario, mock=mock, base_url=BASE_URL))
    monkeypatch.setattr(custom_middleware, "convert_to_openai_messages", counting)
    mock.reset()
    record = await engine.run(prepared)
    assert (record.status, record.llm_calls) == ("completed", 3)
    assert [type(m).__name__ for m in counted] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
        "ToolMessage",
    ]


def test_the_incremental_count_never_undercounts_the_request() -> None:
    """Per message, the count bounds what counting the whole request as one JSON list gives
    (the build before the rebuild), within a token per message."""
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.messages import convert_to_openai_messages as convert
    from langchain_core.utils.function_calling import convert_to_openai_tool

    scenario = load_scenarios()["long_conversation"]
    settings = lcb.AgentSettings.from_limits(scenario.limits)
    tools = lcb.validated_tools(build_tools(scenario))
    guards = custom_middleware.ModelCallGuards(settings, tools, scenario.system_prompt)
    history = [
        HumanMessage(m.content, id=f"m{i}")
        if m.role == "user"
        else AIMessage(m.content, id=f"m{i}")
        for i, m in enumerate(scenario.history)
    ]
    call = {"name": "check_maintenance_window", "args": {"region": "eu"}, "id": "c1"}
    messages = [
        *history,
        HumanMessage(scenario.user, id="u"),
        AIMessage("", tool_calls=[call], id="a"),
        ToolMessage('{"window": "Sunday 02:00"}', tool_call_id="c1", id="t"),
    ]
    system = SystemMessage(scenario.system_prompt)
    request = SimpleNamespace(system_message=system, messages=messages)
    incremental, counts = guards._request_tokens(request, {})
    whole = json_tokens(convert([system, *messages])) + json_tokens(
        [convert_to_openai_tool(t) for t in tools]
    )
    assert whole <= incremental <= whole + len(messages) + 3
    assert len(counts) == len(messages)
    # counted again with the run's counts: nothing new to encode, the same total
    assert guards._request_tokens(request, counts) == (incremental, {})


@session_loop
async def test_the_streaming_engine_streams_every_call_and_times_the_answer(engines, scenarios):
    scenario = scenarios["streaming_long_answer"]
    record = await run_once(
        engines["lc-create-agent-prod-stream"], scenario, MockLLM({scenario.name: scenario})
    )
    assert record.status == "completed", record.error
    assert record.final_answer.endswith(scenario.script[-1].content.strip()[-40:])
    assert [body.get("stream") for body in record.requests] == [True] * record.llm_calls
    # its ordinary run is the stream, so it has a TTFT without RunContext.stream_tokens,
    # as scheduler-stream has (the mock's scripted share is accounted in the TTFT phase)
    assert record.ttft_ms is not None and 0 < record.ttft_ms <= record.wall_ms


def test_the_validated_tools_show_the_model_the_scenario_schema_unchanged() -> None:
    import json

    from langchain_core.utils.function_calling import convert_to_openai_tool

    for scenario in load_scenarios().values():
        for tool in lcb.validated_tools(build_tools(scenario)):
            sent = convert_to_openai_tool(tool)["function"]
            definition = scenario.tool_map[tool.name]
            assert json.dumps(sent["parameters"]) == json.dumps(definition.parameters)
            assert sent["description"] == definition.description


@session_loop
async def test_a_call_outside_the_schema_is_refused_before_the_tool_runs() -> None:
    scenario = load_scenarios()["malformed_tool_args"]
    (tool,) = lcb.validated_tools(build_tools(scenario))
    assert await tool.ainvoke({"city": "Paris"}) == scenario.tool_map["get_weather"].fixed_result
    for bad in ({"city": "Paris", "unit": "cels"}, {"city": "Paris", "unit": None}, {}):
        with pytest.raises(ValueError, match="validation error"):
            await tool.ainvoke(bad)
