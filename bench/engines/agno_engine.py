"""``agno`` (+ ``-retries``): an Agno ``Agent``, the way its docs write it.

As its "OpenAI-like" model page does: ``Agent(model=OpenAILike(id=model, base_url=<the
mock>, api_key=..., timeout=..., http_client=...), instructions=system_prompt,
tools=[...], telemetry=False)`` and ``await agent.arun(user)``. ``telemetry=False`` turns
off the run telemetry Agno sends by default. Agno reports a failure as a run *status*
rather than raising: a ``RunOutput`` whose ``status`` is ``RunStatus.error`` and whose
``content`` is the error text. The engine maps that honestly: an error status is a
``failed`` run (``llm_error`` when the model call failed, which is how Agno ends on an LLM
fault), never a completed one, whatever the content says.

The scenario's tools are ``Function(name, description, parameters=<its JSON Schema>,
entrypoint=..., skip_entrypoint_processing=True)`` — Agno's own tool type with the schema
given, not rebuilt from a Python signature. A tool's exception is caught by Agno and told
to the model as the tool's result (its default), so the run goes on.

Limits: Agno has no LLM-call limit; its nearest knob, ``tool_call_limit=max_steps``, caps
the tool calls of the run. The LLM timeout goes to the openai client; no per-tool timeout.
Retries are the openai client's default (2) and Agno's model ``retries=0`` unless
normalised (``OpenAILike(max_retries=N)``, see ``peers``). The conversation so far goes in
as the input's earlier messages. With ``RunContext.stream_tokens`` it consumes
``agent.arun(user, stream=True)``: the first ``RunContent`` event with content after the
last tool call is the first token of the answer.

The openai client gets the recording ``httpx`` client even under openai 3.x: Agno only
passes on an ``httpx.AsyncClient`` (it ignores any other), and openai 3.x still accepts one.
"""

from __future__ import annotations

import time
from typing import Any

from agno.agent import Agent
from agno.models.message import Message
from agno.models.openai.like import OpenAILike
from agno.run.base import RunStatus
from agno.tools.function import Function

from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peers import API_KEY, PeerEngine, PeerPrepared, answered, mock_base_url
from bench.engines.peers import model_name as scenario_model


def function(tool: ScenarioTool) -> Function:
    async def call(**args: Any) -> str:
        return await tool.acall(**args)

    return Function(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        entrypoint=call,
        skip_entrypoint_processing=True,
    )


def ended(run: Any) -> Outcome:
    """A finished ``RunOutput``: its status decides, not its content."""
    status = getattr(run, "status", None)
    if status == RunStatus.error:
        return Outcome("failed", None, "llm_error", error=str(run.content)[:2000])
    if status == RunStatus.cancelled:
        return Outcome("aborted", None, "cancelled", error=str(run.content)[:2000])
    return answered(run.content)


class AgnoEngine(PeerEngine):
    name = "agno"
    description = "Agno: Agent(model=OpenAILike(...), telemetry=False), arun"

    def build(self, ctx: Any) -> Agent:
        scenario, limits = ctx.scenario, ctx.scenario.limits
        model = OpenAILike(
            id=scenario_model(ctx),
            base_url=mock_base_url(ctx),
            api_key=API_KEY,
            timeout=limits.llm_timeout_s,
            http_client=self.http_client(ctx, "httpx"),
            **self.retry_options(ctx),
        )
        return Agent(
            model=model,
            instructions=scenario.system_prompt,
            tools=[function(t) for t in build_tools(scenario)],
            tool_call_limit=limits.max_steps,
            telemetry=False,
        )

    def _input(self, p: PeerPrepared) -> Any:
        if not p.history:
            return p.user
        return [Message(role=m["role"], content=m["content"]) for m in p.history] + [
            Message(role="user", content=p.user)
        ]

    async def invoke(self, p: PeerPrepared) -> Outcome:
        return ended(await p.agent.arun(self._input(p)))

    async def stream(self, p: PeerPrepared) -> Outcome:
        started = time.perf_counter()
        first = None
        final = None
        async for event in p.agent.arun(self._input(p), stream=True, yield_run_output=True):
            kind = getattr(event, "event", "")
            if kind in ("ToolCallStarted", "ToolCallCompleted"):
                first = None  # the answer comes after the last tool call
            elif kind == "RunContent" and getattr(event, "content", None) and first is None:
                first = time.perf_counter()
            elif hasattr(event, "status") and hasattr(event, "run_id") and kind == "":
                final = event
        if final is None:
            raise RuntimeError("agno's stream ended without its RunOutput")
        outcome = ended(final)
        if outcome.status == "completed" and first is not None:
            outcome.ttft_ms = (first - started) * 1000
        return outcome


class AgnoRetriesEngine(AgnoEngine):
    name = "agno-retries"
    description = "the same Agno engine with retries normalised (limits.max_retries)"
    retries_normalised = True
