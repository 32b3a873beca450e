"""The LangChain production engines: each production setting is shown to have its effect,
and the built-ins variants are exactly the production configurations without the custom
code (``langchain_baseline.production_*`` / ``custom_*``)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

import langchain_baseline as lcb
from bench.engines import RunContext
from bench.engines.kit.tools import build_tools
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from scenarios import Scenario, load_scenarios
from tests.engines.conftest import run_once
from tests.engines.test_fairness import normalise
from tests.engines.test_imports import PROBE, ROOT

session_loop = pytest.mark.asyncio(loop_scope="session")

PROD = ["lc-create-agent-prod", "lc-create-agent-prod-stream", "lc-agentexecutor-prod"]


def with_limits(scenario: Scenario, **limits: Any) -> Scenario:
    return scenario.model_copy(update={"limits": scenario.limits.model_copy(update=limits)})


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool messages' contents of one request body, in order."""
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def text_of(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


@pytest.mark.parametrize("engine_name", PROD)
@pytest.mark.parametrize("approval", ["deny", "approve"])
@session_loop
async def test_the_approval_decides_and_a_denied_call_never_runs(
    engines, scenarios, engine_name, approval
):
    base = scenarios["confirmation_required"]
    tools = [
        t.model_copy(update={"approval": approval}) if t.require_confirmation else t
        for t in base.tools
    ]
    scenario = base.model_copy(update={"tools": tools})
    record = await run_once(engines[engine_name], scenario, MockLLM({scenario.name: scenario}))
    assert record.status == "completed", record.error
    told = tool_results(record.requests[-1])[-1]  # what the model read for issue_refund
    if approval == "deny":
        assert [t.name for t in record.tools] == ["query_order"]
        assert "rejected" in told and "issue_refund" in told and "not executed" in told
    else:
        assert [t.name for t in record.tools] == ["query_order", "issue_refund"]
        assert told == scenario.tool_map["issue_refund"].fixed_result


@pytest.mark.parametrize("engine_name", PROD)
@session_loop
async def test_a_hung_tool_is_cut_at_its_timeout_and_the_model_is_told(
    engines, scenarios, mock, engine_name
):
    scenario = scenarios["tool_timeout"]
    record = await run_once(engines[engine_name], scenario, mock)
    assert (record.status, [t.name for t in record.tools]) == (
        "completed",
        ["fetch_live_rate", "get_cached_rate"],
    )
    hung = record.tools[0]
    assert (hung.ok, hung.error) == (False, "cancelled")
    # cut at tool_timeout_s = 0.2 s (the run deadline would have cut it at 2 s)
    assert 150 <= hung.duration_ms < scenario.expect.max_tool_ms
    assert "fetch_live_rate timed out after 0.2s" in tool_results(record.requests[1])[0]


@pytest.mark.parametrize("engine_name", PROD)
@pytest.mark.parametrize("limit", [2, 3])
@session_loop
async def test_the_loop_guard_stops_the_run_at_n_executions(
    engines, scenarios, mock, engine_name, limit
):
    scenario = with_limits(scenarios["loop_detection"], max_same_tool_calls=limit)
    record = await run_once(engines[engine_name], scenario, MockLLM({scenario.name: scenario}))
    assert (record.status, record.termination, record.tool_calls, record.llm_calls) == (
        "aborted",
        "tool_limit",
        limit,
        limit + 1,  # the request whose repeated call was refused
    )
    assert record.error.startswith("RepeatedToolCallError: get_job_status")


@pytest.mark.parametrize("engine_name", [*PROD, "lc-create-agent-builtins"])
@session_loop
async def test_no_request_over_the_budget_is_sent(engines, scenarios, mock, engine_name):
    scenario = scenarios["huge_tool_result"]
    budget = scenario.limits.token_budget
    record = await run_once(engines[engine_name], scenario, mock)
    assert max(record.request_tokens) <= budget
    if engine_name == "lc-agentexecutor-prod":  # the budget guard stops before the request
        assert (record.status, record.termination, record.llm_calls) == (
            "aborted",
            "token_budget",
            1,
        )
    else:  # ContextEditingMiddleware cleared the oversized result instead
        assert (record.status, record.llm_calls) == ("completed", 2)
        assert tool_results(record.requests[1]) == ["[cleared]"]


@session_loop
async def test_the_custom_budget_guard_stops_what_context_editing_cannot_shrink(
    engines, scenarios, mock
):
    """A conversation over the budget with no tool result to clear: the built-ins send it,
    the custom ``token_budget`` middleware refuses it."""
    scenario = with_limits(scenarios["long_conversation"], token_budget=5000)
    mock = MockLLM({scenario.name: scenario})
    builtins = await run_once(engines["lc-create-agent-builtins"], scenario, mock)
    assert builtins.status == "completed" and max(builtins.request_tokens) > 5000
    prod = await run_once(engines["lc-create-agent-prod"], scenario, mock)
    assert (prod.status, prod.termination, prod.llm_calls) == ("aborted", "token_budget", 0)
    assert prod.error.startswith("TokenBudgetExceededError: token budget 5000 exceeded")


@session_loop
async def test_the_flaky_tool_is_retried_inside_the_tool_node(engines, scenarios, mock):
    scenario = scenarios["tool_flaky"]
    record = await run_once(engines["lc-create-agent-prod"], scenario, mock)
    assert [t.ok for t in record.tools] == [False, False, True]
    # the model never saw the failures: its second request carries the result
    assert record.llm_calls == 2
    assert tool_results(record.requests[1]) == [scenario.tool_map["track_parcel"].fixed_result]


@pytest.mark.parametrize("engine_name", PROD)
@session_loop
async def test_the_breaker_stops_calling_the_failing_tool(engines, scenarios, mock, engine_name):
    scenario = scenarios["tool_circuit_breaker"]
    record = await run_once(engines[engine_name], scenario, mock)
    assert (record.status, record.tool_calls) == ("completed", 3)
    assert not any(t.ok for t in record.tools)
    told = tool_results(record.requests[-1])
    assert told[-1].startswith("get_quote is unavailable: it failed 3 times in a row")


@pytest.mark.parametrize("engine_name", PROD)
@session_loop
async def test_a_malformed_call_is_reported_back_to_the_model(
    engines, scenarios, mock, engine_name
):
    scenario = scenarios["malformed_tool_args"]
    record = await run_once(engines[engine_name], scenario, mock)
    assert record.status == "completed", record.error
    assert [(t.name, t.args) for t in record.tools] == [
        ("get_weather", {"city": "Paris", "unit": "celsius"})
    ]
    told = text_of(record.requests[1]).lower()
    if engine_name == "lc-agentexecutor-prod":  # InvalidToolCallsParser's observation
        assert "the arguments of get_weather are not valid json" in told
    elif engine_name == "lc-create-agent-prod-stream":
        # the streaming parser repairs the cut JSON ({"unit": "cels"}); pydantic refuses it
        assert "error invoking tool 'get_weather'" in told
        assert "input should be 'celsius' or 'fahrenheit'" in told
    else:  # LangChain's own answer to an invalid call (_patch_invalid_tool_calls)
        assert "tool call get_weather with id" in told
        assert "could not be executed - arguments were malformed or truncated" in told


@pytest.mark.parametrize("engine_name", ["lc-create-agent-prod", "lc-create-agent-builtins"])
@session_loop
async def test_a_reviewed_run_leaves_no_thread_behind(engines, scenarios, mock, engine_name):
    engine = engines[engine_name]
    scenario = scenarios["confirmation_required"]
    prepared = await engine.prepare(RunContext(scenario=scenario, mock=mock, base_url=BASE_URL))
    for _ in range(3):
        mock.reset()
        record = await engine.run(prepared)
        assert [t.name for t in record.tools] == ["query_order"]
    assert dict(prepared.agent.checkpointer.storage) == {}


@session_loop
async def test_the_builtins_and_the_custom_parts(scenarios) -> None:
    """What each part is made of: the report's split counts these functions and modules."""
    scenario = scenarios["confirmation_required"]
    settings = lcb.AgentSettings.from_limits(scenario.limits)
    tools = lcb.validated_tools(build_tools(scenario))
    builtins = lcb.builtin_middleware(settings, tools, "prompt", confirm=["issue_refund"])
    assert [type(m).__name__ for m in builtins] == [
        "ModelRetryMiddleware",
        "ModelCallLimitMiddleware",  # thread_limit: the step limit across the resumes
        "HumanInTheLoopMiddleware",
        "ContextEditingMiddleware",
        "ToolErrorMiddleware",
        "ToolRetryMiddleware",
    ]
    custom = lcb.make_custom_middleware(settings, tools)
    assert [m.name for m in custom] == ["ModelCallGuards", "ToolCallGuards"]
    # no budget, no context editing and no budget guard; no gated tool, no human review
    unbudgeted = lcb.AgentSettings.from_limits(
        scenario.limits.model_copy(update={"token_budget": None})
    )
    assert [type(m).__name__ for m in lcb.builtin_middleware(unbudgeted, tools, "prompt")] == [
        "ModelRetryMiddleware",
        "ToolErrorMiddleware",
        "ToolRetryMiddleware",
    ]


@session_loop
async def test_the_builtins_variants_run_without_the_custom_code(engines, scenarios, mock):
    ctx = RunContext(scenario=scenarios["customer_returns"], mock=mock, base_url=BASE_URL)
    graph = (await engines["lc-create-agent-builtins"].prepare(ctx)).agent
    prod_graph = (await engines["lc-create-agent-prod"].prepare(ctx)).agent
    # the custom guards are wrap_* hooks: no node of their own, the same graph as the default
    plain = (await engines["lc-create-agent"].prepare(ctx)).agent
    assert set(prod_graph.nodes) == set(graph.nodes) == set(plain.nodes)
    executor = await engines["lc-agentexecutor-builtins"].prepare(ctx)
    assert executor.config is None  # no guard callbacks
    assert type(executor.agent.agent.runnable.steps[-1]).__name__ == "ToolsAgentOutputParser"
    prod = await engines["lc-agentexecutor-prod"].prepare(ctx)
    assert [type(h).__name__ for h in prod.config["callbacks"]] == ["RunGuards"]
    assert type(prod.agent.agent.runnable.steps[-1]).__name__ == "InvalidToolCallsParser"


NEW_ENGINES = [
    *PROD,
    "lc-create-agent-prod-inline",
    "lc-create-agent-builtins",
    "lc-agentexecutor-builtins",
]
HAPPY = sorted(n for n, s in load_scenarios().items() if "happy-path" in s.tags)


@pytest.mark.parametrize("scenario_name", HAPPY)
@pytest.mark.parametrize("engine_name", NEW_ENGINES)
@session_loop
async def test_the_middleware_sends_what_raw_sends_on_the_happy_paths(
    engines, scenarios, mock, engine_name, scenario_name
):
    """No production setting changes what the model is asked (test_fairness.normalise)."""
    scenario = scenarios[scenario_name]
    raw = await run_once(engines["raw"], scenario, mock)
    record = await run_once(engines[engine_name], scenario, mock)
    assert record.status == "completed", record.error
    assert [normalise(b) for b in record.requests] == [normalise(b) for b in raw.requests]


@pytest.mark.parametrize(
    ("engine_name", "loaded"),
    [
        ("lc-agentexecutor-prod", ["httpx2", "langchain_classic", "langchain_core", "openai"]),
        ("lc-create-agent-prod", ["httpx2", "langchain_core", "langgraph", "openai"]),
    ],
)
def test_a_production_engine_imports_only_its_own_stack(engine_name, loaded):
    out = subprocess.run(
        [sys.executable, "-c", PROBE, engine_name],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(out.stdout.splitlines()[-1]) == ["completed", loaded]
