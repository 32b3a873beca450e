"""``agno`` (+ ``-retries``, ``-prod``): an Agno ``Agent``, the way its docs write it.

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

``agno-prod`` is Agno configured for production: its built-ins first —
``requires_confirmation=True`` on the gated tools (the run pauses; the approver's
``requirement.confirm()`` / ``reject(note)`` and ``acontinue_run`` resume it), the model's
``max_retries=limits.max_retries`` — then one short custom ``tool_hooks`` entry
(``guard_hook``, Agno's documented hook around every tool call): the per-call timeout, the
circuit breaker and the loop guard, and a step limit Agno lacks (it has no LLM-call limit:
the hook stops the run with Agno's ``StopAgentRun`` at the tool call after ``max_steps``).
Agno has no hook before a model request, so the token budget is a lower bound checked in
the same hook: a tool result that alone is over the budget stops the run before the
request that would carry it (a conversation that grows past the budget is not caught).
``StopAgentRun`` ends the run quietly (an empty answer), so the guard notes why
(``ToolGuards.stop``) and the adapter reports it.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from agno.agent import Agent
from agno.exceptions import StopAgentRun
from agno.models.message import Message
from agno.models.openai.like import OpenAILike
from agno.run.base import RunStatus
from agno.tools.function import Function

from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peer_guards import GuardError, ToolGuards, rejection
from bench.engines.peers import API_KEY, PeerEngine, PeerPrepared, answered, mock_base_url
from bench.engines.peers import model_name as scenario_model


def function(tool: ScenarioTool, **options: Any) -> Function:
    async def call(**args: Any) -> str:
        return await tool.acall(**args)

    return Function(
        name=tool.name,
        description=tool.description,
        parameters=tool.parameters,
        entrypoint=call,
        skip_entrypoint_processing=True,
        **options,
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
    def model(self, ctx: Any) -> OpenAILike:
        return OpenAILike(
            id=scenario_model(ctx),
            base_url=mock_base_url(ctx),
            api_key=API_KEY,
            timeout=ctx.scenario.limits.llm_timeout_s,
            http_client=self.http_client(ctx, "httpx"),
            **self.retry_options(ctx),
        )

    def build(self, ctx: Any) -> Agent:
        scenario, limits = ctx.scenario, ctx.scenario.limits
        return Agent(
            model=self.model(ctx),
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
    retries_normalised = True


class StepLimitReached(GuardError):
    """The custom step limit: the model asked for a tool call after ``max_steps`` of them."""

    termination: ClassVar[str] = "max_steps"


def guard_hook(guards: ToolGuards, max_steps: int) -> Any:
    """The custom ``tool_hooks`` entry: timeout, breaker, loop guard and step limit around
    every tool call; a guard that ends the run raises Agno's ``StopAgentRun``."""

    async def hook(function_name: str, function_call: Any, arguments: dict[str, Any]) -> Any:
        try:
            if guards.calls["tool calls"] >= max_steps:  # the run's own counts
                raise StepLimitReached(f"tool call {max_steps + 1} after max_steps {max_steps}")
            guards.check_repeat(function_name, arguments)
        except GuardError as exc:
            raise StopAgentRun(guards.stop(exc)) from exc
        guards.calls["tool calls"] += 1
        result = await guards.call(function_name, lambda: function_call(**arguments), approve=False)
        try:  # the next request carries this result: over the budget alone, it cannot be sent
            guards.check_budget(result)
        except GuardError as exc:
            raise StopAgentRun(guards.stop(exc)) from exc
        return result

    return hook


class AgnoProdEngine(AgnoEngine):
    retries_normalised = True  # the model's max_retries is limits.max_retries (built-in)

    def build(self, ctx: Any) -> Agent:
        scenario, limits = ctx.scenario, ctx.scenario.limits
        return Agent(
            model=self.model(ctx),
            instructions=scenario.system_prompt,
            tools=[
                function(t, requires_confirmation=t.definition.require_confirmation or None)
                for t in build_tools(scenario)
            ],
            tool_hooks=[guard_hook(self.guards, limits.max_steps)],
            telemetry=False,
        )

    async def invoke(self, p: PeerPrepared) -> Outcome:
        run = await p.agent.arun(self._input(p))
        while run.is_paused:  # a gated tool: the approver decides, the run goes on
            for requirement in run.active_requirements:
                name = requirement.tool_execution.tool_name if requirement.tool_execution else ""
                if p.guards.approvals.get(name, False):
                    requirement.confirm()
                else:
                    requirement.reject(rejection(name))
            run = await p.agent.acontinue_run(
                run_response=run, requirements=run.active_requirements
            )
        if (stopped := p.guards.stopped) is not None:  # StopAgentRun ends the run quietly
            return Outcome(stopped.status, None, stopped.termination, error=str(stopped))
        return ended(run)
