"""Conversation memory across runs; supervisor/workers; handoff (swarm); nested traces."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from scheduler import AgentConfig, AgentStatus, ConversationMemory, LightweightAgent

from .conftest import SEARCH, scenario

S = AgentStatus


async def test_memory_carries_the_conversation_across_runs(harness_factory):
    h = harness_factory(scenario("chat", script=[{"content": "Noted."}]))
    agent = h.agent("chat", AgentConfig(memory=True))
    await agent.run("My name is Ada.")
    second = await agent.run("What is my name?")
    assert h.bodies()[1]["messages"] == [
        {"role": "system", "content": "You are a test agent."},
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "What is my name?"},
    ]
    assert second.messages[-1] == {"role": "assistant", "content": "Noted."}
    assert len(agent.memory) == 4 and agent.memory.max_tokens == 6000  # half the 12000 budget


async def test_memory_is_bounded_by_its_token_budget(harness_factory):
    h = harness_factory(scenario("chat", script=[{"content": "Noted."}]))
    agent = h.agent("chat", AgentConfig(memory=True, memory_max_tokens=30))
    for i in range(4):
        await agent.run(f"Fact number {i}: the sky is blue.")
    assert agent.memory.tokens() <= 30
    assert [m["content"] for m in agent.memory.messages] == [
        "Fact number 3: the sky is blue.",
        "Noted.",
    ]
    assert [m["content"] for m in h.bodies()[3]["messages"][1:]] == [
        "Fact number 2: the sky is blue.",
        "Noted.",
        "Fact number 3: the sky is blue.",
    ]


def test_memory_never_keeps_tool_calls_without_their_results():
    memory = ConversationMemory()
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    memory.save(
        [
            {"role": "user", "content": "a"},
            call,
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "assistant", "content": "done"},
        ]
    )
    memory.save(
        [
            {"role": "user", "content": "b"},
            {**call, "tool_calls": [{**call["tool_calls"][0], "id": "c2"}]},
        ]
    )
    assert [m["role"] for m in memory.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]


WORKER_TOOL = {
    "description": "Delegate a task.",
    "parameters": {
        "type": "object",
        "properties": {"task": {"type": "string"}},
        "required": ["task"],
    },
    "behavior": {"returns": "unused"},
}

SUPERVISOR_TREE = """\
[Agent: supervisor] completed, reason=stop
[LLM Reasoning] step 1
├── Input: [system: You coordinate two workers., user: Write a note about returns.]
├── Output: calling tools researcher, writer
└── Tokens: 107 input, 20 output
[Tool: researcher] step 1
├── Args: {task: find the return policy}
├── [Agent: researcher] completed, reason=stop
│   [LLM Reasoning] step 1
│   ├── Input: [system: You research., user: find the return policy]
│   ├── Output: calling tool search
│   └── Tokens: 52 input, 7 output
│   [Tool: search] step 1
│   ├── Args: {query: returns}
│   └── Result: {"hits": 3} (11 chars)
│   [LLM Reasoning] step 2
│   ├── Input: [... 1 earlier, user: find the return policy, assistant: -> search, tool: {"hits": 3}]
│   ├── Output: Returns within 30 days.
│   └── Tokens: 73 input, 6 output
└── Result: Returns within 30 days. (23 chars)
[Tool: writer] step 1
├── Args: {task: draft the note}
├── [Agent: writer] completed, reason=stop
│   [LLM Reasoning] step 1
│   ├── Input: [system: You write., user: draft the note]
│   ├── Output: Dear customer, ...
│   └── Tokens: 51 input, 4 output
└── Result: Dear customer, ... (18 chars)
[LLM Reasoning] step 2
├── Input: [... 2 earlier, assistant: -> researcher, writer, tool: Returns within 30 days., tool: Dear customer, ...]
├── Output: Note: returns within 30 days.
└── Tokens: 149 input, 8 output"""


async def test_supervisor_delegates_to_two_workers(harness_factory):
    h = harness_factory(
        scenario(
            "supervisor",
            system_prompt="You coordinate two workers.",
            user="Write a note about returns.",
            tools=[{"name": "researcher", **WORKER_TOOL}, {"name": "writer", **WORKER_TOOL}],
            script=[
                {
                    "tool_calls": [
                        {"name": "researcher", "args": {"task": "find the return policy"}},
                        {"name": "writer", "args": {"task": "draft the note"}},
                    ]
                },
                {"content": "Note: returns within 30 days."},
            ],
        ),
        scenario(
            "researcher",
            system_prompt="You research.",
            script=[
                {"tool_calls": [{"name": "search", "args": {"query": "returns"}}]},
                {"content": "Returns within 30 days."},
            ],
        ),
        scenario("writer", system_prompt="You write.", script=[{"content": "Dear customer, ..."}]),
    )
    researcher = h.agent("researcher", AgentConfig(name="researcher"))
    writer = h.agent("writer", AgentConfig(name="writer"))
    supervisor = LightweightAgent(
        h.client("supervisor"),
        AgentConfig(name="supervisor", system_prompt="You coordinate two workers."),
        tools=[researcher.as_tool(), writer.as_tool()],
    )
    result = await supervisor.run("Write a note about returns.")
    assert (result.status, result.content, result.llm_calls) == (
        S.COMPLETED,
        "Note: returns within 30 days.",
        2,
    )
    assert [r.content for r in result.steps[0].tool_results] == [
        "Returns within 30 days.",
        "Dear customer, ...",
    ]
    # the two workers run concurrently: their requests interleave
    assert [r.scenario for r in h.mock.requests] == [
        "supervisor",
        "researcher",
        "writer",
        "researcher",
        "supervisor",
    ]
    assert h.calls == [("search", {"query": "returns"})]
    assert result.trace.render(durations=False) == SUPERVISOR_TREE
    # the workers' spans are in the supervisor's trace, on one time line
    agents = [s.attributes["gen_ai.agent.name"] for s in result.trace.spans("agent")]
    assert agents == ["supervisor", "researcher", "writer"]
    assert json.loads(result.trace.to_json())["root"]["children"][0]["children"][1]["children"][0][
        "name"
    ] == ("invoke_agent researcher")


async def test_a_failing_worker_is_a_tool_error(harness_factory):
    h = harness_factory(
        scenario(
            "boss",
            tools=[{"name": "worker", **WORKER_TOOL}],
            script=[{"tool_calls": [{"name": "worker", "args": {"task": "x"}}]}, {"content": "ok"}],
        ),
        scenario("worker", script=[SAME_FOREVER], status="aborted"),
    )
    worker = h.agent(
        "worker", AgentConfig(name="worker", max_steps=1, summarize_on_max_steps=False)
    )
    boss = LightweightAgent(h.client("boss"), AgentConfig(name="boss"), tools=[worker.as_tool()])
    result = await boss.run("go")
    assert result.steps[0].tool_results[0].content == (
        "Error: tool 'worker' failed: WorkerFailed: worker aborted (max_steps): "
        "max_steps 1 reached without a final answer"
    )
    assert result.status is S.COMPLETED


SAME_FOREVER = {"tool_calls": [{"name": "search", "args": {"query": "q"}}], "repeat": True}

HANDOFF_TREE = """\
[Agent: triage] completed, reason=stop
[LLM Reasoning] step 1
├── Input: [system: You triage., user: I was charged twice.]
├── Output: calling tool transfer_to_billing
└── Tokens: 73 input, 4 output
[Tool: transfer_to_billing] step 1
├── Args: {}
├── [Agent: billing] completed, reason=stop
│   [LLM Reasoning] step 1
│   ├── Input: [... 1 earlier, user: I was charged twice., assistant: -> transfer_to_billing, tool: Transferred to billing.]
│   ├── Output: I refunded the duplicate charge.
│   └── Tokens: 71 input, 6 output
└── Result: Transferred to billing. (23 chars)"""


async def test_handoff_passes_the_conversation_to_another_agent(harness_factory):
    transfer = {
        "name": "transfer_to_billing",
        "description": "Hand over to billing.",
        "parameters": {"type": "object", "properties": {}},
        "behavior": {"returns": "unused"},
    }
    h = harness_factory(
        scenario(
            "triage",
            system_prompt="You triage.",
            user="I was charged twice.",
            tools=[SEARCH, transfer],
            script=[{"tool_calls": [{"name": "transfer_to_billing"}]}, {"content": "unused"}],
        ),
        # billing continues the same conversation: one assistant message is already there
        scenario(
            "billing",
            system_prompt="You handle billing.",
            user="I was charged twice.",
            script=[{"content": "unused"}, {"content": "I refunded the duplicate charge."}],
        ),
    )
    billing = h.agent("billing", AgentConfig(name="billing"))
    triage = LightweightAgent(
        h.client("triage"),
        AgentConfig(name="triage", system_prompt="You triage."),
        tools=h.tools("triage")[:1],
    ).handoff_to(billing)
    result = await triage.run("I was charged twice.")
    assert (result.status, result.content, result.agent_name) == (
        S.COMPLETED,
        "I refunded the duplicate charge.",
        "billing",
    )
    assert (result.handoffs, result.llm_calls, len(result.steps)) == (["triage", "billing"], 2, 2)
    assert h.bodies("billing")[0]["messages"][:2] == [
        {"role": "system", "content": "You handle billing."},
        {"role": "user", "content": "I was charged twice."},
    ]
    assert [t["function"]["name"] for t in h.bodies("billing")[0]["tools"]] == ["search"]
    assert result.trace.render(durations=False) == HANDOFF_TREE
    assert triage.status is S.COMPLETED


def test_import_is_light():
    code = (
        "import sys, scheduler; "
        "print(len(sys.modules), [m for m in ('httpx', 'tiktoken', 'opentelemetry', 'bench', 'langchain') "
        "if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split(" ", 1)
    assert int(out[0]) < 300
    assert out[1].strip() == "[]"


def test_otel_export():
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from scheduler import Trace
    from scheduler.otel import export_trace
    from scheduler.trace import AGENT, TOOL

    trace = Trace()
    root = trace.start("invoke_agent a", AGENT, None, {"gen_ai.agent.name": "a"})
    tool = trace.start(
        "execute_tool t", TOOL, root, {"gen_ai.tool.name": "t", "scheduler.tool.args": {"x": 1}}
    )
    trace.end(tool, ValueError("boom"))
    trace.end(root)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_trace(trace, provider.get_tracer("test"))
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"invoke_agent a", "execute_tool t"}
    assert spans["execute_tool t"].parent.span_id == spans["invoke_agent a"].context.span_id
    assert dict(spans["execute_tool t"].attributes) == {
        "gen_ai.tool.name": "t",
        "scheduler.tool.args": '{"x": 1}',
        "error.type": "ValueError",
    }
