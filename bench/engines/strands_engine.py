"""``strands`` (+ ``-retries``, ``-nostream``, ``-prod``): a Strands Agents ``Agent``, the way its
docs write it.

As its OpenAI model provider page does: ``OpenAIModel(client=AsyncOpenAI(base_url=<the
mock>), model_id=...)`` in an ``Agent(model, system_prompt, tools, callback_handler=None)``
and ``await agent.invoke_async(prompt)``; the answer is ``str(result)``.
``callback_handler=None`` turns off the default ``PrintingCallbackHandler`` (which prints
every streamed token to stdout); Strands' OpenTelemetry tracing exports nothing unless a
tracer provider is configured. The OpenAI model streams every call by default
(``stream=True``), so this engine ``streams``; ``strands-nostream`` sets the model's
documented ``stream=False`` (one JSON reply per call, nothing else changed).

A Strands ``Agent`` holds its conversation (``agent.messages``) and refuses concurrent
invocations, so a service builds one per request: this engine does so in every run (its
construction is part of the run), from the prepared model and tools.

The scenario's tools are ``PythonAgentTool(name, tool_spec, function)`` — Strands'
module-tool form, whose ``inputSchema`` is the scenario's JSON Schema as is; the function
returns a ``ToolResult``. A tool's exception becomes an error result the model sees (Strands'
default), so the run goes on.

Limits: ``invoke_async(prompt, limits={"turns": max_steps})`` — Strands' per-invocation cap
(1.62: one turn is one model call plus the tools it asked for; checked at the top of each
cycle, so the last turn's tools run) ends the run *without raising*, with the result's
``stop_reason`` ``"limit_turns"`` → ``aborted`` / ``max_steps`` (``STOP_REASONS`` maps every
stop reason a result can carry). The LLM timeout goes to the openai client; no per-tool
timeout. Retries: Strands' own
``ModelRetryStrategy`` (6 attempts, 4 s initial delay, on throttling) on top of the openai
client's default 2, unless normalised (``retry_strategy=None`` — one attempt — and the
client's ``max_retries=N``, see ``peers``). With ``RunContext.stream_tokens`` it iterates
``agent.stream_async(prompt)``: the first ``data`` event after the last tool use is the first
token of the answer.

``strands-prod`` is Strands configured for production: its built-ins first — the turn
limit, the retries (the client's ``max_retries=limits.max_retries`` under Strands' own
``ModelRetryStrategy``), and its interrupts for the gated tools (a ``BeforeToolCallEvent``
hook calls ``event.interrupt("approval")``; the run stops with ``stop_reason`` ``"interrupt"``,
the engine answers with ``interruptResponse`` and the hook cancels a refused call with
``event.cancel_tool``) — then short custom code (``prod_hooks``, ``prod_agent_tool``): a
``BeforeModelCallEvent`` hook for the token budget and a ``BeforeToolCallEvent`` hook for the
loop guard (both raise a ``peer_guards.GuardError``, which ends the run), an
``AfterModelCallEvent`` hook that sets ``event.retry`` for a reply that did not parse or came
back empty (up to ``limits.max_retries``), and a tool wrapper
with the per-call timeout, the breaker and a check of the arguments against the schema (its
stream parser repairs cut-off JSON). It streams, as its default does.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from strands import Agent
from strands.hooks import AfterModelCallEvent, BeforeModelCallEvent, BeforeToolCallEvent
from strands.models.openai import OpenAIModel
from strands.tools.tools import PythonAgentTool

from bench.engines.base import RunStatus
from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peer_guards import ToolGuards, rejection
from bench.engines.peers import PeerEngine, PeerPrepared, answered, exception_chain, model_name

# a finished AgentResult's stop_reason that is not an answer, in the harness's words
# (strands.types.event_loop.StopReason; "end_turn" and "stop_sequence" are answers)
STOP_REASONS: dict[str, tuple[RunStatus, str]] = {
    "limit_turns": ("aborted", "max_steps"),
    "limit_total_tokens": ("aborted", "token_budget"),
    "limit_output_tokens": ("aborted", "token_budget"),
    "max_tokens": ("failed", "length"),
    "content_filtered": ("failed", "content_filter"),
    "guardrail_intervened": ("failed", "content_filter"),
    "cancelled": ("aborted", "cancelled"),
}


def agent_tool(tool: ScenarioTool, guards: ToolGuards | None = None) -> PythonAgentTool:
    """The scenario tool as Strands' module tool; with ``guards``, through the custom ones
    (timeout, breaker, a check of the arguments against the schema)."""
    spec = {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": {"json": tool.parameters},
    }

    async def run(tool_use: Any, **_state: Any) -> dict[str, Any]:
        args = tool_use.get("input") or {}
        if guards is None:
            text = await tool.acall(**args)
        else:
            text = await guards.call(
                tool.name,
                lambda: tool.acall(**args),
                approve=False,
                schema=tool.parameters,
                args=args,
            )
        return {
            "toolUseId": tool_use["toolUseId"],
            "status": "success",
            "content": [{"text": text}],
        }

    return PythonAgentTool(tool.name, spec, run)


def ended(result: Any) -> Outcome:
    """A finished ``AgentResult``: its ``stop_reason`` decides, then its text."""
    reason = str(getattr(result, "stop_reason", "") or "")
    if reason in STOP_REASONS:
        status, termination = STOP_REASONS[reason]
        return Outcome(status, None, termination, error=f"Strands stop_reason {reason!r}")
    return answered(str(result).strip())


@dataclass
class StrandsParts:
    """What every run's ``Agent`` is built from (prepared once)."""

    model: OpenAIModel
    tools: list[PythonAgentTool]
    system_prompt: str
    retry_options: dict[str, Any]
    limits: dict[str, int]
    hooks: list[Any] = field(default_factory=list)  # (callback, event type), production only


class StrandsEngine(PeerEngine):
    def build(self, ctx: Any) -> StrandsParts:
        scenario = ctx.scenario
        client = self.openai_client(ctx, timeout=scenario.limits.llm_timeout_s)
        return StrandsParts(
            model=OpenAIModel(client=client, model_id=model_name(ctx), **self.stream_option()),
            tools=[agent_tool(t) for t in build_tools(scenario)],
            system_prompt=scenario.system_prompt,
            retry_options={"retry_strategy": None} if self.retries_normalised else {},
            limits={"turns": scenario.limits.max_steps},
        )

    def stream_option(self) -> dict[str, Any]:
        """``stream=False`` for the non-streaming variant (the model's default is True)."""
        return {} if self.streams else {"stream": False}

    def agent(self, p: PeerPrepared) -> Agent:
        parts: StrandsParts = p.agent
        history = [{"role": m["role"], "content": [{"text": m["content"]}]} for m in p.history]
        agent = Agent(
            model=parts.model,
            system_prompt=parts.system_prompt,
            tools=list(parts.tools),
            messages=history or None,
            callback_handler=None,
            **parts.retry_options,
        )
        for callback, event_type in parts.hooks:
            agent.add_hook(callback, event_type)
        return agent

    async def invoke(self, p: PeerPrepared) -> Outcome:
        result = await self.agent(p).invoke_async(p.user, limits=p.agent.limits)
        return ended(result)

    async def stream(self, p: PeerPrepared) -> Outcome:
        started = time.perf_counter()
        first = None
        result = None
        async for event in self.agent(p).stream_async(p.user, limits=p.agent.limits):
            if "current_tool_use" in event:
                first = None  # the answer comes after the last tool use
            elif event.get("data") and first is None:
                first = time.perf_counter()
            if "result" in event:
                result = event["result"]
        if result is None:
            raise RuntimeError("stream_async ended without its result")
        outcome = ended(result)
        if outcome.status == "completed" and first is not None:
            outcome.ttft_ms = (first - started) * 1000
        return outcome


class StrandsRetriesEngine(StrandsEngine):
    retries_normalised = True


class StrandsNoStreamEngine(StrandsEngine):
    """Strands' default agent, its model not streaming (the registry's ``streams``)."""


def prod_hooks(
    guards: ToolGuards, system_prompt: str, schemas: list[Any], max_retries: int
) -> list[Any]:
    """The production hooks: approval by interrupt (built-in), then the loop guard, the
    token budget and a retry of an unreadable reply (custom)."""

    def approval(event: BeforeToolCallEvent) -> None:
        name = event.tool_use["name"]
        if name in guards.approvals and event.interrupt("approval", reason=name) != "yes":
            event.cancel_tool = rejection(name)

    def loop_guard(event: BeforeToolCallEvent) -> None:
        guards.check_repeat(event.tool_use["name"], event.tool_use.get("input") or {})

    def token_budget(event: BeforeModelCallEvent) -> None:
        guards.check_budget([system_prompt, event.agent.messages, schemas])

    def retry_unreadable(event: AfterModelCallEvent) -> None:
        # a reply whose body did not parse, or a stream that ended with nothing in it:
        # Strands' retry strategy retries throttling only; its hook can ask for a retry
        unparsed = event.exception is not None and any(
            isinstance(e, json.JSONDecodeError) for e in exception_chain(event.exception)
        )
        empty = event.stop_response is not None and not event.stop_response.message["content"]
        if (unparsed or empty) and guards.calls["model retries"] < max_retries:
            guards.calls["model retries"] += 1
            event.retry = True

    return [
        (approval, BeforeToolCallEvent),
        (loop_guard, BeforeToolCallEvent),
        (token_budget, BeforeModelCallEvent),
        (retry_unreadable, AfterModelCallEvent),
    ]


class StrandsProdEngine(StrandsEngine):
    retries_normalised = True  # the client retries limits.max_retries times (built-in)

    def build(self, ctx: Any) -> StrandsParts:
        scenario = ctx.scenario
        client = self.openai_client(ctx, timeout=scenario.limits.llm_timeout_s)
        tools = build_tools(scenario)
        return StrandsParts(
            model=OpenAIModel(client=client, model_id=model_name(ctx)),
            tools=[agent_tool(t, self.guards) for t in tools],
            system_prompt=scenario.system_prompt,
            retry_options={},  # Strands' ModelRetryStrategy stays on, as it ships
            limits={"turns": scenario.limits.max_steps},
            hooks=prod_hooks(
                self.guards,
                scenario.system_prompt,
                [t.openai_schema() for t in tools],
                scenario.limits.max_retries,
            ),
        )

    async def invoke(self, p: PeerPrepared) -> Outcome:
        agent = self.agent(p)
        result = await agent.invoke_async(p.user, limits=p.agent.limits)
        while result.stop_reason == "interrupt":  # a gated tool: the approver answers
            responses = [
                {
                    "interruptResponse": {
                        "interruptId": interrupt.id,
                        "response": "yes" if p.guards.approvals.get(interrupt.reason) else "no",
                    }
                }
                for interrupt in result.interrupts
            ]
            result = await agent.invoke_async(responses, limits=p.agent.limits)
        return ended(result)
