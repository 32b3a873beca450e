"""Budgets and guards: repeated calls, token budgets, max steps, untrusted arguments, LLM errors."""

from __future__ import annotations

import pytest

from bench.referee.reply import FORCED_TEXT
from scheduler import (
    AgentConfig,
    AgentStatus,
    LLMStatusError,
    MaxStepsExceeded,
    RepeatedCallsExceeded,
    TerminationReason,
    TokenBudgetExceeded,
    TotalTokensExceeded,
)
from scheduler.agent import SUMMARY_PROMPT
from scheduler.tokens import count_request_tokens

from .conftest import builtin, scenario

S, R = AgentStatus, TerminationReason
SAME = {"tool_calls": [{"name": "search", "args": {"query": "same"}}], "repeat": True}


async def test_repeated_call_is_blocked_then_the_run_aborts(harness_factory):
    h = harness_factory(scenario("loop", script=[SAME], status="aborted"))
    agent = h.agent("loop", AgentConfig(max_same_tool_calls=2, max_blocked_calls=2))
    result = await agent.run("go")
    statuses = [[r.status for r in s.tool_results] for s in result.steps]
    assert statuses == [["ok"], ["ok"], ["blocked"], ["blocked"], ["blocked"]]
    assert (
        h.calls == [("search", {"query": "same"})] * 2
    )  # executed exactly max_same_tool_calls times
    assert (result.status, result.reason, result.llm_calls) == (S.ABORTED, R.REPEATED_CALLS, 5)
    assert isinstance(result.error, RepeatedCallsExceeded)
    assert result.detail == "the LLM repeated blocked tool calls 3 times (limit 2; last: search)"
    # the LLM was told, in the tool message, instead of the tool running
    assert result.messages[7] == {
        "role": "tool",
        "tool_call_id": "call_t2_0",
        "content": (
            "Error: 'search' was already called 2 times with these same arguments (limit 2); its results "
            "are above. Do not repeat this call: use what you have or try different arguments."
        ),
    }
    assert result.content == (
        "Stopped before a final answer (repeated_calls: the LLM repeated blocked tool calls 3 times "
        "(limit 2; last: search)).\nWhat was gathered:\n"
        '- search(query: same): {"hits": 3}\n- search(query: same): {"hits": 3}'
    )


async def test_repeat_guard_counts_over_the_whole_run_not_the_last_steps(harness_factory):
    # A, B, C, A: the sketch looked at the last three records only and missed the second A
    calls = [{"tool_calls": [{"name": "search", "args": {"query": q}}]} for q in "ABCA"]
    h = harness_factory(scenario("spread", script=[*calls, {"content": "done"}]))
    result = await h.agent("spread", AgentConfig(max_same_tool_calls=1)).run("go")
    assert [s.tool_results[0].status for s in result.steps[:4]] == ["ok", "ok", "ok", "blocked"]
    assert (result.status, result.content) == (S.COMPLETED, "done")


async def test_argument_order_does_not_hide_a_repeat(harness_factory):
    tool = {
        "name": "find",
        "description": "d",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        },
        "behavior": {"returns": 1},
    }
    turns = [
        {"tool_calls": [{"name": "find", "raw_arguments": raw}]}
        for raw in ('{"a": 1, "b": 2}', '{"b":2,"a":1}')
    ]
    h = harness_factory(scenario("order", tools=[tool], script=[*turns, {"content": "done"}]))
    result = await h.agent("order", AgentConfig(max_same_tool_calls=1)).run("go")
    assert [s.tool_results[0].status for s in result.steps[:2]] == ["ok", "blocked"]


async def test_token_budget_stops_with_the_exact_count(harness_factory):
    h = harness_factory(builtin("customer_returns"))
    first = None

    result = await h.agent("customer_returns", AgentConfig(token_budget=150)).run(
        h.scenarios["customer_returns"].user
    )
    first = h.mock.requests[0].prompt_tokens
    expected = count_request_tokens(result.messages, h.bodies()[0]["tools"])
    assert first <= 150 < expected
    assert (result.status, result.reason, result.llm_calls) == (S.ABORTED, R.TOKEN_BUDGET, 1)
    assert isinstance(result.error, TokenBudgetExceeded)
    assert (result.error.budget, result.error.input_tokens) == (150, expected)
    assert result.detail == f"token budget 150 exceeded (input_tokens={expected}, exact)"
    assert len(h.mock.requests) == 1  # the over-budget request was never sent
    assert result.content.startswith(
        f"Stopped before a final answer (token_budget: token budget 150 "
        f"exceeded (input_tokens={expected}, exact)).\nWhat was gathered:\n"
        "- search_knowledge_base(query: return policy): {"
    )


async def test_token_budget_falls_back_to_server_usage(harness_factory):
    h = harness_factory(builtin("customer_returns"))
    config = AgentConfig(token_budget=150, token_counting="server")
    result = await h.agent("customer_returns", config).run(h.scenarios["customer_returns"].user)
    reported = h.mock.requests[1].prompt_tokens
    assert (result.status, result.reason, result.llm_calls) == (S.ABORTED, R.TOKEN_BUDGET, 2)
    assert result.detail == f"token budget 150 exceeded (input_tokens={reported}, server-reported)"
    assert result.steps[0].input_tokens is None


async def test_total_token_limit(harness_factory):
    h = harness_factory(builtin("customer_returns"))
    result = await h.agent("customer_returns", AgentConfig(max_total_tokens=200)).run("x")
    spent = sum(r.prompt_tokens + r.completion_tokens for r in h.mock.requests)
    assert (result.status, result.reason, result.llm_calls) == (S.ABORTED, R.TOKEN_BUDGET, 2)
    assert isinstance(result.error, TotalTokensExceeded)
    assert result.detail == f"total token limit 200 exceeded (total_tokens={spent})"


async def test_max_steps_asks_for_a_summary_without_tools(harness_factory):
    calls = [{"tool_calls": [{"name": "search", "args": {"query": q}}]} for q in "AB"]
    summary = "I found A and B but could not finish."
    h = harness_factory(scenario("steps", script=[*calls, {"content": summary}], status="aborted"))
    result = await h.agent("steps", AgentConfig(max_steps=2)).run("go")
    assert (result.status, result.reason, result.content) == (S.ABORTED, R.MAX_STEPS, summary)
    assert (result.llm_calls, len(result.steps), isinstance(result.error, MaxStepsExceeded)) == (
        3,
        2,
        True,
    )
    last = h.bodies()[-1]
    assert last["tool_choice"] == "none"
    assert last["messages"][-1] == {"role": "system", "content": SUMMARY_PROMPT}
    assert result.messages[-1]["role"] == "tool"  # the instruction is not left in the conversation


async def test_max_steps_summary_is_readable_without_the_llm(harness_factory):
    h = harness_factory(scenario("forever", script=[SAME], status="aborted"))
    forced = await h.agent("forever", AgentConfig(max_steps=3, max_same_tool_calls=None)).run("go")
    # the mock honours tool_choice "none" with a fixed text: that is the summary
    assert (forced.llm_calls, forced.content) == (4, FORCED_TEXT)
    quiet = await h.agent(
        "forever", AgentConfig(max_steps=3, max_same_tool_calls=None, summarize_on_max_steps=False)
    ).run("go")
    assert (quiet.llm_calls, quiet.reason) == (3, R.MAX_STEPS)
    # built from what was gathered, never raw JSON dumped at the user
    assert quiet.content == (
        "Stopped before a final answer (max_steps: max_steps 3 reached without a final answer).\n"
        "What was gathered:\n" + "\n".join(['- search(query: same): {"hits": 3}'] * 3)
    )


async def test_untrusted_arguments_become_tool_errors(harness_factory):
    turn = {
        "tool_calls": [
            {"name": "search", "raw_arguments": "{bad"},
            {"name": "serch", "args": {"query": "x"}, "unknown": True},
            {"name": "search", "raw_arguments": '{"query": 5}'},
            {"name": "search", "raw_arguments": '{"query": "ok", "limit": 3}'},
        ]
    }
    h = harness_factory(scenario("bad", script=[turn, {"content": "done"}]))

    def search(query: str) -> str:  # takes no 'limit', though the schema would allow it
        h.calls.append(("search", {"query": query}))
        return "found"

    result = await h.agent("bad", overrides={"search": search}).run("go")
    assert (result.status, result.content, h.calls) == (S.COMPLETED, "done", [])  # never called
    assert [(r.status, r.content) for r in result.steps[0].tool_results] == [
        (
            "invalid_arguments",
            "Error: invalid arguments for 'search': arguments are not valid JSON "
            "(Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        ),
        ("not_found", "Error: unknown tool 'serch'; available tools: search"),
        (
            "invalid_arguments",
            "Error: invalid arguments for 'search': query: 5 is not of type 'string'",
        ),
        (
            "invalid_arguments",
            "Error: invalid arguments for 'search': arguments: unexpected property 'limit'",
        ),
    ]
    assert (result.usage.tool_calls, result.usage.tool_errors) == (4, 4)
    assert [m["content"] for m in h.bodies()[1]["messages"][3:7]] == [
        r.content for r in result.steps[0].tool_results
    ]


async def test_llm_errors_fail_the_run_without_consuming_steps(harness_factory):
    h = harness_factory(
        scenario(
            "short",
            script=[{"tool_calls": [{"name": "search", "args": {"query": "x"}}]}],
            status="failed",
        )
    )
    errors = []
    agent = h.agent("short").on(
        "on_error", lambda *, state, error: errors.append(type(error).__name__)
    )
    result = await agent.run("go")
    assert (result.status, result.reason, result.llm_calls, len(result.steps)) == (
        S.FAILED,
        R.LLM_ERROR,
        1,
        2,
    )
    assert isinstance(result.error, LLMStatusError) and result.error.status_code == 400
    assert "past the end of its script" in result.detail
    assert errors == ["LLMStatusError"]
    assert result.content is None


async def test_rate_limit_retried_with_retry_after_is_not_a_step(harness_factory):
    sc = builtin("customer_returns")
    script = [t.model_dump(exclude_none=True) for t in sc.script]
    script[1]["fault"] = {"status": 429, "retry_after_s": 0.05, "times": 1}
    h = harness_factory(
        scenario("limited", script=script, tools=[t.model_dump() for t in sc.tools])
    )
    agent = h.agent("limited", AgentConfig(max_steps=3), client={"sleep": h.recording_sleep()})
    result = await agent.run(sc.user)
    assert (result.status, result.llm_calls, len(result.steps), result.usage.retries) == (
        S.COMPLETED,
        3,
        3,
        1,
    )
    assert h.sleeps == [0.05] and len(h.mock.requests) == 4
    chat = result.trace.spans("llm")[1]
    assert [(name, attrs) for name, _, attrs in chat.events] == [
        (
            "retry",
            {
                "attempt": 1,
                "delay_s": 0.05,
                "error": "HTTP 429: scripted fault: HTTP 429",
                "status_code": 429,
            },
        )
    ]
    assert "├── Retry 1: HTTP 429: scripted fault: HTTP 429; waited 0.05s" in result.trace.render()


async def test_llm_timeout(harness_factory):
    h = harness_factory(
        scenario(
            "slow",
            script=[{"content": "late", "fault": {"delay_s": 5, "times": 9}}],
            status="failed",
        )
    )
    agent = h.agent(
        "slow", AgentConfig(llm_timeout=0.05), client={"max_retries": 1, "backoff_base_s": 0.001}
    )
    result = await agent.run("go")
    assert (result.status, result.reason) == (S.FAILED, R.LLM_ERROR)
    assert result.detail == "LLM call timed out after 0.05s (after 2 attempts)"


def test_config_is_validated():
    from scheduler import ConfigError

    for bad in (
        {"max_steps": 0},
        {"token_budget": -1},
        {"tool_timeout": 0},
        {"token_counting": "guess"},
        {"breaker_cooldown_s": -1},
        {"max_blocked_calls": -1},
    ):
        with pytest.raises(ConfigError):
            AgentConfig(**bad)
