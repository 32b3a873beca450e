"""Trace hygiene (issue 14, point 17): size caps, a redaction hook, safe error text."""

from __future__ import annotations

import json

import pytest

from scheduler import AgentConfig, LightweightAgent, tool
from scheduler.otel import export_trace

from .conftest import FakeClock
from .faults import RoutingLLM, ask

BIG = 5_000_000


@pytest.fixture
async def llm():
    routing = RoutingLLM()
    yield routing
    await routing.aclose()


async def _three_dumps(llm, **config) -> object:
    """Three runs of one conversation, each adding a 5 MB tool output; the last run's result."""
    count = {"n": 0}

    @tool
    def dump(part: int) -> str:
        """Dump a part."""
        count["n"] += 1
        return f"part {part} " + "x" * BIG

    agent = LightweightAgent(
        llm.client(),
        AgentConfig(token_budget=None, max_same_tool_calls=None, **config),
        tools=[dump],
    )
    results = [await agent.run(ask("dump", part=i)) for i in range(1)]
    # one run with three big outputs: keep the conversation and ask again twice
    messages = results[0].messages
    for i in (1, 2):
        messages = [*messages, {"role": "user", "content": ask("dump", part=i)}]
        results.append(await agent.run(None, messages=messages))
    assert count["n"] == 3
    return results[-1]


async def test_p17_large_outputs_do_not_blow_up_the_exported_trace(llm):
    result = await _three_dumps(llm)
    text = result.trace.to_json()
    assert len(text) < 400_000, f"{len(text):,} characters"  # ~45 MB when every span repeats it
    exported = json.loads(text)
    tool_span = exported["root"]["children"][0]["children"][1]
    assert tool_span["name"] == "execute_tool dump"
    assert tool_span["attributes"]["gen_ai.tool.call.result"].endswith(
        f"... [truncated: {BIG + len('part 2 ') - 16_384:,} more characters]"
    )


async def test_p17_otel_attributes_are_capped(llm):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    result = await _three_dumps(llm, trace_max_attribute_chars=4_096)
    export_trace(result.trace, provider.get_tracer("t"))
    sizes = [
        len(str(v)) for span in exporter.get_finished_spans() for v in span.attributes.values()
    ]
    assert max(sizes) <= 4_096 + 60


async def test_p17_a_redaction_hook_sees_every_exported_attribute(llm):
    @tool
    def profile(user: str) -> str:
        """The user's profile."""
        return f"{user}: card 4111-1111-1111-1111"

    def redact(key: str, value: object) -> object:
        hidden = {"gen_ai.input.messages", "gen_ai.output", "gen_ai.tool.call.result"}
        return "[redacted]" if key in hidden else value

    # Timings are exported too, and one run in ~130 had "4111" in a span's start or duration
    # (0.000241112 s): look for the card number itself, with a clock that always writes 4111.
    clock = FakeClock(tick=0.4111)
    config = AgentConfig(token_budget=None, trace_redact=redact, trace_clock=clock)
    agent = LightweightAgent(llm.client(), config, tools=[profile])
    result = await agent.run(ask("profile", user="ann"))
    assert result.content == "done: ann: card 4111-1111-1111-1111"  # the run itself is untouched
    exported = result.trace.to_json()
    assert '"duration_s": 0.4111' in exported  # the timings that tripped the old check
    assert "4111-" not in exported  # no part of the card number (a number never has "-" next)
    assert exported.count('"[redacted]"') == 5  # two chat spans (in and out), one tool span
    assert "4111-" not in result.trace.render()


async def test_p17_tool_exception_text_reaches_the_llm_only_if_the_tool_opts_in(llm):
    @tool
    def charge(amount: int) -> str:
        """Charge the card."""
        raise KeyError("sk_live_51H-secret-key")

    @tool(expose_errors=True)
    def lookup(order_id: str) -> str:
        """Look an order up."""
        raise LookupError(f"order {order_id} is archived")

    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[charge, lookup])
    hidden = await agent.run(ask("charge", amount=5))
    shown = await agent.run(ask("lookup", order_id="A1"))
    assert hidden.steps[0].tool_results[0].content == "Error: tool 'charge' failed: KeyError"
    assert shown.steps[0].tool_results[0].content == (
        "Error: tool 'lookup' failed: LookupError: order A1 is archived"
    )
    assert "sk_live" in str(hidden.steps[0].tool_results[0].error)  # the app still sees it
    assert "sk_live" not in json.dumps(hidden.messages)
