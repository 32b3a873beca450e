"""Bounded composition and "run() never raises" (issue 14, points 13 and 14)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from scheduler import (
    AgentConfig,
    AgentStatus,
    Budget,
    LightweightAgent,
    OpenAIChatClient,
    TerminationReason,
    tool,
)

from .faults import BASE_URL, RoutingLLM, ask, completion, tool_call

S, R = AgentStatus, TerminationReason


class Relentless:
    """An LLM that always calls the first offered tool whose name starts with ``prefix``."""

    def __init__(self, prefix: str, arguments: dict | None = None):
        self.prefix, self.arguments = prefix, arguments or {}
        self.calls = 0
        self.http = httpx.AsyncClient(transport=httpx.MockTransport(self.route))

    def route(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        body = json.loads(request.content)
        names = [t["function"]["name"] for t in body.get("tools") or ()]
        wanted = [n for n in names if n.startswith(self.prefix)]
        if not wanted:
            return completion("nothing to call")
        return tool_call(wanted[0], self.arguments, call_id=f"call_{self.calls}")

    def client(self) -> OpenAIChatClient:
        return OpenAIChatClient(base_url=BASE_URL, model="m", http_client=self.http)


@pytest.fixture
async def relentless_factory():
    made: list[Relentless] = []

    def make(prefix: str, arguments: dict | None = None) -> Relentless:
        made.append(Relentless(prefix, arguments))
        return made[-1]

    yield make
    for r in made:
        await r.http.aclose()


def depth_of(span, kind: str = "agent") -> int:
    below = [depth_of(child, kind) for child in span.children]
    return (span.kind == kind) + max(below, default=0)


# -- point 13: one budget per request, shared by handoffs and agents run as tools -----------


async def test_p13_agents_handing_over_to_each_other_are_bounded(relentless_factory):
    llm = relentless_factory("transfer_to_")
    config = AgentConfig(max_steps=3, token_budget=None, max_same_tool_calls=None)
    a = LightweightAgent(llm.client(), AgentConfig(**{**_fields(config), "name": "a"}))
    b = LightweightAgent(llm.client(), AgentConfig(**{**_fields(config), "name": "b"}))
    a.handoff_to(b)
    b.handoff_to(a)
    result = await a.run("ping")
    assert (result.status, result.reason) == (S.ABORTED, R.MAX_DEPTH)
    assert result.detail == "agents nested 9 deep, more than the request's max_depth 8"
    assert llm.calls == 8 and result.handoffs == ["a", "b"] * 4 + ["a"]  # the 9th is refused
    assert len(json.loads(result.trace.to_json())["root"]["children"]) == 1


async def test_p13_an_agent_calling_itself_as_a_tool_is_bounded(relentless_factory):
    llm = relentless_factory("myself", {"task": "again"})
    agent = LightweightAgent(
        llm.client(), AgentConfig(name="loop", token_budget=None, max_same_tool_calls=None)
    )
    agent.register_tool(agent.as_tool("myself"))
    result = await agent.run("go", budget=Budget(max_depth=4))
    assert (result.status, result.reason) == (S.ABORTED, R.MAX_DEPTH)
    assert depth_of(result.trace.root) == 5  # four levels ran, the fifth was refused
    assert json.loads(result.trace.to_json())["root"]["name"] == "invoke_agent loop"
    assert llm.calls == 4


async def test_p13_steps_of_nested_runs_count_against_the_request(relentless_factory):
    llm = relentless_factory("worker", {"task": ask("search", query="x")})
    worker_llm = RoutingLLM()
    try:

        @tool
        def search(query: str) -> str:
            """Search."""
            return "hits"

        worker = LightweightAgent(
            worker_llm.client(), AgentConfig(name="worker", token_budget=None), tools=[search]
        )
        boss = LightweightAgent(
            llm.client(), AgentConfig(name="boss", token_budget=None, max_same_tool_calls=None)
        )
        boss.register_tool(worker.as_tool())
        result = await boss.run("go", budget=Budget(max_steps=5))
        assert (result.status, result.reason) == (S.ABORTED, R.MAX_STEPS)
        assert result.detail == "request step budget 5 spent across agents"
        llm_spans = [s for s in result.trace.spans("llm")]
        assert len(llm_spans) == 5  # boss and worker steps together
    finally:
        await worker_llm.aclose()


async def test_p13_the_request_has_a_wall_time_budget():
    routing = RoutingLLM()

    @tool
    async def slow() -> str:
        """Takes forever."""
        await asyncio.sleep(30)
        return "late"

    agent = LightweightAgent(
        routing.client(), AgentConfig(token_budget=None, tool_timeout=None), tools=[slow]
    )
    try:
        result = await agent.run(ask("slow"), budget=Budget(timeout_s=0.1))
    finally:
        await routing.aclose()
    assert (result.status, result.reason, result.detail) == (
        S.ABORTED,
        R.TIME_LIMIT,
        "request time budget 0.1s spent",
    )
    assert result.duration_s < 5


def _fields(config: AgentConfig) -> dict:
    import dataclasses

    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


# -- point 14: run() never raises for what a tool does ---------------------------------------


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


async def _raises_cancelled() -> None:
    raise asyncio.CancelledError()


def _sync_raises_cancelled() -> None:
    raise asyncio.CancelledError()


async def _returns_unprintable() -> Unprintable:
    return Unprintable()


def _raises_unprintable() -> None:
    raise UnprintableError()


@pytest.mark.parametrize(
    ("handler", "status", "content"),
    [
        (_raises_cancelled, "error", "Error: tool 'bad' failed: CancelledError"),
        (_sync_raises_cancelled, "error", "Error: tool 'bad' failed: CancelledError"),
        (_returns_unprintable, "ok", "<Unprintable object (str() failed)>"),
        (_raises_unprintable, "error", "Error: tool 'bad' failed: UnprintableError"),
    ],
    ids=["async-cancelled", "sync-cancelled", "bad-result", "bad-exception"],
)
async def test_p14_whatever_a_tool_does_run_returns(handler, status, content):
    routing = RoutingLLM()
    from scheduler import ToolSpec

    spec = ToolSpec("bad", "Misbehaves.", {"type": "object", "properties": {}}, handler)
    agent = LightweightAgent(routing.client(), AgentConfig(token_budget=None), tools=[spec])
    try:
        result = await agent.run(ask("bad"))
    finally:
        await routing.aclose()
    tool_result = result.steps[0].tool_results[0]
    assert (result.status, tool_result.status, tool_result.content) == (
        S.COMPLETED,
        status,
        content,
    )
    result.trace.to_json()  # the trace can still be exported
    result.trace.render()
