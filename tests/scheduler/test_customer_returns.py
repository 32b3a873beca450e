"""The seed scenario end to end: result, conversation, transitions, and the trace as a whole."""

from __future__ import annotations

import json

from scheduler import AgentConfig, AgentStatus, TerminationReason
from scheduler.tokens import count_request_tokens

from .conftest import FakeClock, builtin

S = AgentStatus
ANSWER = builtin("customer_returns").script[-1].content

TREE = """\
[Agent: support] completed, reason=stop
[LLM Reasoning] step 1
├── Input: [system: You are a customer-service agent. Use..., user: I want to return order A123. What is...]
├── Output: calling tool search_knowledge_base
└── Tokens: 121 input, 11 output
[Tool: search_knowledge_base] step 1
├── Args: {query: return policy}
└── Result: {"article_id": "KB-17", "title": "Returns policy", "text"... (159 chars)
[LLM Reasoning] step 2
├── Input: [... 1 earlier, user: I want to return order A123. What is..., assistant: -> search_knowledge_base, tool: {"article_id": "KB-17", "title": "Ret...]
├── Output: calling tool query_order
└── Tokens: 182 input, 10 output
[Tool: query_order] step 2
├── Args: {order_id: A123}
└── Result: {"order_id": "A123", "status": "delivered", "delivered_on... (146 chars)
[LLM Reasoning] step 3
├── Input: [... 3 earlier, tool: {"article_id": "KB-17", "title": "Ret..., assistant: -> query_order, tool: {"order_id": "A123", "status": "deliv...]
├── Output: Order A123 (trail shoes, delivered on 2026-11-20) can be returned within 30 d...
└── Tokens: 258 input, 45 output"""


async def run_customer_returns(harness_factory, **config):
    h = harness_factory(builtin("customer_returns"))
    agent = h.agent("customer_returns", AgentConfig(name="support", **config))
    result = await agent.run(h.scenarios["customer_returns"].user)
    return h, agent, result


async def test_bounded_counting_tokenizes_only_when_the_budget_is_near(harness_factory):
    _, _, roomy = await run_customer_returns(harness_factory)  # 12,000: the bound fits
    assert [s.input_tokens for s in roomy.steps] == [None, None, None]
    h, _, tight = await run_customer_returns(harness_factory, token_budget=600)
    reported = [r.prompt_tokens for r in h.mock.requests]
    # steps 1 and 2 fit by their size alone; step 3's bound passes 600, so it is counted
    assert [s.input_tokens for s in tight.steps] == [None, None, reported[2]]
    assert tight.ok


async def test_result_and_conversation(harness_factory):
    h, agent, result = await run_customer_returns(harness_factory)
    assert (result.status, result.reason, result.content) == (
        S.COMPLETED,
        TerminationReason.STOP,
        ANSWER,
    )
    assert (result.llm_calls, result.tool_calls, result.usage.retries, result.error) == (
        3,
        2,
        0,
        None,
    )
    assert h.calls == [
        ("search_knowledge_base", {"query": "return policy"}),
        ("query_order", {"order_id": "A123"}),
    ]
    kb = json.dumps(builtin("customer_returns").tools[0].behavior.returns, ensure_ascii=False)
    order = json.dumps(builtin("customer_returns").tools[1].behavior.returns, ensure_ascii=False)
    call = {"type": "function"}
    assert result.messages == [
        {
            "role": "system",
            "content": "You are a customer-service agent. Use the tools to answer accurately.",
        },
        {"role": "user", "content": "I want to return order A123. What is the process?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_t0_0",
                    **call,
                    "function": {
                        "name": "search_knowledge_base",
                        "arguments": '{"query": "return policy"}',
                    },
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_t0_0", "content": kb},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_t1_0",
                    **call,
                    "function": {"name": "query_order", "arguments": '{"order_id": "A123"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_t1_0", "content": order},
        {"role": "assistant", "content": ANSWER},
    ]
    # what was sent is what the mock received, request by request
    assert [len(b["messages"]) for b in h.bodies()] == [2, 4, 6]
    assert h.bodies()[2]["messages"] == result.messages[:6]
    assert agent.status is S.COMPLETED


async def test_state_machine_path(harness_factory):
    _, _, result = await run_customer_returns(harness_factory)
    steps = [
        (s.number, [r.name for r in s.tool_results], s.response.finish_reason) for s in result.steps
    ]
    assert steps == [
        (1, ["search_knowledge_base"], "tool_calls"),
        (2, ["query_order"], "tool_calls"),
        (3, [], "stop"),
    ]


async def test_exact_token_count_matches_the_server(harness_factory):
    h, _, result = await run_customer_returns(harness_factory, token_counting="exact")
    tools = h.bodies()[0]["tools"]
    counted = [s.input_tokens for s in result.steps]
    reported = [r.prompt_tokens for r in h.mock.requests]
    expected = [count_request_tokens(b["messages"], tools) for b in h.bodies()]
    assert counted == reported == expected
    assert result.usage.input_tokens == sum(reported)
    assert result.usage.output_tokens == sum(r.completion_tokens for r in h.mock.requests)


async def test_trace_tree_as_the_article_prints_it(harness_factory, capsys):
    _, _, result = await run_customer_returns(harness_factory)
    assert result.trace.render(durations=False) == TREE
    result.trace.print_tree(durations=False)
    assert capsys.readouterr().out == TREE + "\n"


async def test_trace_tree_durations(harness_factory):
    # every clock reading advances 50 ms: durations are fixed by the number of readings
    _, _, result = await run_customer_returns(harness_factory, trace_clock=FakeClock(tick=0.05))
    heads = [line for line in result.trace.render().splitlines() if line.startswith("[")]
    assert heads == [
        "[Agent: support] (0.8s) completed, reason=stop",
        "[LLM Reasoning] (50.0ms) step 1",
        "[Tool: search_knowledge_base] (50.0ms) step 1",
        "[LLM Reasoning] (50.0ms) step 2",
        "[Tool: query_order] (50.0ms) step 2",
        "[LLM Reasoning] (50.0ms) step 3",
    ]


async def test_trace_spans_follow_otel_genai_names(harness_factory):
    h, _, result = await run_customer_returns(
        harness_factory, trace_clock=FakeClock(tick=0.001), token_counting="exact"
    )
    root = result.trace.to_dict()["root"]

    def shape(span):
        return (span["name"], span["kind"], [shape(c) for c in span["children"]])

    chat = ("chat scenario/customer_returns", "llm", [])
    assert shape(root) == (
        "invoke_agent support",
        "agent",
        [
            ("step 1", "step", [chat, ("execute_tool search_knowledge_base", "tool", [])]),
            ("step 2", "step", [chat, ("execute_tool query_order", "tool", [])]),
            ("step 3", "step", [chat]),
        ],
    )
    assert root["attributes"] == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        "gen_ai.request.model": "scenario/customer_returns",
        "agent.status": "completed",
        "agent.termination_reason": "stop",
        "gen_ai.usage.input_tokens": result.usage.input_tokens,
        "gen_ai.usage.output_tokens": result.usage.output_tokens,
        "scheduler.run.id": result.run_id,
    }
    first_chat, first_tool = root["children"][0]["children"]
    request = h.mock.requests[0]
    assert first_chat["attributes"] == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "scenario/customer_returns",
        "gen_ai.input.messages": result.messages[:2],
        "scheduler.input_tokens.counted": request.prompt_tokens,
        "gen_ai.output": result.messages[2],
        "gen_ai.response.finish_reasons": ["tool_calls"],
        "gen_ai.response.id": first_chat["attributes"]["gen_ai.response.id"],
        "gen_ai.usage.input_tokens": request.prompt_tokens,
        "gen_ai.usage.output_tokens": request.completion_tokens,
    }
    assert first_chat["attributes"]["gen_ai.response.id"].startswith("chatcmpl-")
    assert first_tool["attributes"] == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "search_knowledge_base",
        "gen_ai.tool.call.id": "call_t0_0",
        "gen_ai.tool.call.arguments": '{"query": "return policy"}',
        "scheduler.tool.args": {"query": "return policy"},
        "gen_ai.tool.call.result": result.messages[3]["content"],
        "scheduler.tool.status": "ok",
    }
    assert (first_tool["events"], first_tool["error"]) == ([], None)
    assert json.loads(result.trace.to_json()) == result.trace.to_dict()


async def test_run_sync_outside_an_event_loop(harness_factory):
    from bench.referee import MockLLM
    from bench.referee.transport import BASE_URL, mock_async_client
    from scheduler import LightweightAgent, OpenAIChatClient

    from .conftest import Harness

    scenario = builtin("customer_returns")
    tools = Harness(scenario).tools("customer_returns")
    mock = MockLLM({scenario.name: scenario})

    def run() -> object:
        # run_sync makes its own event loop; the http client must belong to it
        llm = OpenAIChatClient(
            base_url=BASE_URL,
            model="scenario/customer_returns",
            http_client=mock_async_client(mock),
        )
        agent = LightweightAgent(
            llm, AgentConfig(system_prompt=scenario.system_prompt), tools=tools
        )
        return agent.run_sync(scenario.user)

    import asyncio

    result = await asyncio.to_thread(run)
    assert (result.status, result.content, result.llm_calls) == (S.COMPLETED, ANSWER, 3)
