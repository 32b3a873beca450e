"""``llamaindex`` (+ ``-retries``, ``-nostream``, ``-prod``): LlamaIndex's ``FunctionAgent``,
the way its docs write it.

As its agent guide does: ``FunctionAgent(tools=[...], llm=OpenAILike(model, api_base=<the
mock>, api_key, is_chat_model=True, is_function_calling_model=True, context_window=...),
system_prompt=...)``, then ``handler = agent.run(user_msg=..., chat_history=...,
max_iterations=N)`` and ``await handler``; the answer is ``str(result)``. ``FunctionAgent``
streams every LLM call by default (``streaming=True``), so this engine ``streams``;
``llamaindex-nostream`` passes the documented ``FunctionAgent(streaming=False)`` (one
``achat`` per step). It is a variant, not the default: without streaming, ``OpenAILike``'s
tenacity retry decorator wraps each call *and* the openai client retries inside it, so the
attempts multiply (``llm_down``: the retries stack up past the run deadline).
LlamaIndex sends no telemetry; its instrumentation dispatcher has no handler unless one is
added.

The scenario's tools are ``FunctionTool.from_defaults(async_fn, name, description,
fn_schema)`` whose ``fn_schema`` reports the scenario's JSON Schema unchanged (LlamaIndex
keeps ``type``, ``properties`` and ``required`` of it). A tool's exception becomes an error
``ToolOutput`` the model sees (its default), so the run goes on.

Limits: ``max_iterations=max_steps`` (``WorkflowRuntimeError`` "Max iterations of N
reached" → ``aborted`` / ``max_steps``), the LLM timeout on the client
(``OpenAILike(timeout=...)``); no per-tool timeout. Retries: ``OpenAILike``'s default
``max_retries=3`` goes to the openai client (its tenacity decorator does not wrap a
streamed call), and the ``-retries`` variant passes ``limits.max_retries`` instead. The run
deadline is the harness's ``asyncio.timeout``; the workflow is then cancelled
(``handler.cancel_run()``) so a hung tool does not outlive the run. With
``RunContext.stream_tokens`` it reads ``handler.stream_events()``: the first non-empty
``AgentStream.delta`` after the last ``AgentInput`` is the first token of the answer.

``llamaindex-prod`` is LlamaIndex configured for production: its built-ins first — tool
errors told to the model (its default), ``max_iterations``, ``OpenAILike(max_retries=
limits.max_retries)``, and its human-in-the-loop events for the gated tools (the tool takes
the workflow ``Context`` and waits for a ``HumanResponseEvent``; the engine answers each
``InputRequiredEvent`` with the approver's decision, as LlamaIndex's HITL guide does) — then
short custom code where it has none (``GuardedFunctionAgent``, ``prod_tool``): the
documented way to customise an agent's step, a ``FunctionAgent`` subclass whose
``take_step`` checks the token budget before the LLM call, retries a reply it cannot read
(a body that does not parse, a stream cut before its finish reason: LlamaIndex would answer
with the part received) up to ``limits.max_retries`` times, and checks the loop guard on the
calls it asks for (raising ``peer_guards.GuardError``, which ends the workflow), and a tool wrapper
with the per-call timeout, the breaker and a check of the arguments against the schema
(its streaming parser repairs cut-off JSON and would run the tool outside it). It streams,
as its default does.
"""

from __future__ import annotations

import json
import time
from typing import Any

from llama_index.core.agent.workflow import AgentInput, AgentStream, FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent
from llama_index.llms.openai_like import OpenAILike
from pydantic import BaseModel, ConfigDict, Field
from workflows.errors import WorkflowRuntimeError

from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peer_guards import ToolGuards, UnreadableReply, rejection
from bench.engines.peers import (
    API_KEY,
    PeerEngine,
    PeerPrepared,
    answered,
    mock_base_url,
    model_name,
    openai_http_lib,
)

# the window a user declares for a gpt-4o-class model (LlamaIndex's default 3,900 would
# make its chat memory drop messages that every other engine sends)
CONTEXT_WINDOW = 128_000


def schema_of(tool: ScenarioTool) -> type[BaseModel]:
    """A pydantic model whose JSON Schema is the scenario tool's, as LlamaIndex reads it."""

    class Arguments(BaseModel):
        model_config = ConfigDict(extra="allow")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return tool.parameters

    Arguments.__name__ = Arguments.__qualname__ = f"{tool.name}_arguments"
    return Arguments


def function_tool(tool: ScenarioTool) -> FunctionTool:
    async def call(**args: Any) -> str:
        return await tool.acall(**args)

    return FunctionTool.from_defaults(
        async_fn=call, name=tool.name, description=tool.description, fn_schema=schema_of(tool)
    )


class LlamaIndexEngine(PeerEngine):
    def llm(self, ctx: Any) -> OpenAILike:
        limits = ctx.scenario.limits
        return OpenAILike(
            model=model_name(ctx),
            api_base=mock_base_url(ctx),
            api_key=API_KEY,
            is_chat_model=True,
            is_function_calling_model=True,
            context_window=CONTEXT_WINDOW,
            timeout=limits.llm_timeout_s,
            async_http_client=self.http_client(ctx, openai_http_lib()),
            **self.retry_options(ctx),
        )

    def build(self, ctx: Any) -> FunctionAgent:
        scenario = ctx.scenario
        return FunctionAgent(
            tools=[function_tool(t) for t in build_tools(scenario)],
            llm=self.llm(ctx),
            system_prompt=scenario.system_prompt,
            **({} if self.streams else {"streaming": False}),
        )

    def _run(self, p: PeerPrepared) -> Any:
        history = [ChatMessage(role=m["role"], content=m["content"]) for m in p.history]
        return p.agent.run(
            user_msg=p.user,
            chat_history=history or None,
            max_iterations=p.scenario.limits.max_steps,
        )

    async def invoke(self, p: PeerPrepared) -> Outcome:
        handler = self._run(p)
        try:
            return answered(str(await handler))
        finally:
            if not handler.done():
                await handler.cancel_run()

    async def stream(self, p: PeerPrepared) -> Outcome:
        started = time.perf_counter()
        first = None
        handler = self._run(p)
        try:
            async for event in handler.stream_events():
                if isinstance(event, AgentInput):
                    first = None  # a new LLM call: only the last one's answer counts
                elif isinstance(event, AgentStream) and event.delta and first is None:
                    first = time.perf_counter()
            outcome = answered(str(await handler))
        finally:
            if not handler.done():
                await handler.cancel_run()
        if outcome.status == "completed" and first is not None:
            outcome.ttft_ms = (first - started) * 1000
        return outcome

    def classify(self, exc: BaseException, p: PeerPrepared) -> Outcome:
        if isinstance(exc, WorkflowRuntimeError) and "Max iterations" in str(exc):
            return Outcome("aborted", None, "max_steps", error=f"{type(exc).__name__}: {exc}")
        return super().classify(exc, p)


class LlamaIndexRetriesEngine(LlamaIndexEngine):
    retries_normalised = True


class LlamaIndexNoStreamEngine(LlamaIndexEngine):
    """LlamaIndex's default agent, its LLM calls not streaming (the registry's ``streams``)."""


class GuardedFunctionAgent(FunctionAgent):
    """``FunctionAgent`` with the custom guards in its step: the token budget before the
    LLM call, a retry of a reply it could not read, the loop guard on the tool calls it
    asks for."""

    guards: Any = None  # ToolGuards (pydantic fields: the agent is a pydantic model)
    tool_schemas: list[Any] = Field(default_factory=list)
    max_retries: int = 0

    async def take_step(self, ctx: Any, llm_input: Any, tools: Any, memory: Any) -> Any:
        scratchpad = list(await ctx.store.get(self.scratchpad_key, default=[]))
        messages = [m.content for m in [*llm_input, *scratchpad]]
        self.guards.check_budget([self.system_prompt, messages, self.tool_schemas])
        for _attempt in range(self.max_retries + 1):
            try:
                output = await super().take_step(ctx, llm_input, tools, memory)
            except json.JSONDecodeError as exc:
                problem: Exception = exc
            else:
                choices = (output.raw or {}).get("choices") or [{}]
                if choices[0].get("finish_reason") is not None:
                    break
                problem = ValueError("the stream ended before its finish reason")
            await ctx.store.set(self.scratchpad_key, scratchpad)  # drop the broken reply
        else:
            raise UnreadableReply(f"{type(problem).__name__}: {problem}") from problem
        for call in output.tool_calls:
            self.guards.check_repeat(call.tool_name, call.tool_kwargs)
        return output


def prod_tool(tool: ScenarioTool, guards: ToolGuards) -> FunctionTool:
    """The scenario tool with the custom guards; a gated tool first waits for a human's
    answer (LlamaIndex's HITL events)."""

    async def call(ctx: Context, **args: Any) -> str:
        if tool.definition.require_confirmation:
            answer = await ctx.wait_for_event(
                HumanResponseEvent,
                waiter_event=InputRequiredEvent(prefix=f"Run {tool.name}?", tool=tool.name),
                requirements={"tool": tool.name},
            )
            if answer.response != "yes":
                return rejection(tool.name)
        return await guards.call(
            tool.name, lambda: tool.acall(**args), approve=False, schema=tool.parameters, args=args
        )

    # LlamaIndex finds the context parameter by its annotation object (this module's
    # annotations are strings: ``from __future__ import annotations``)
    call.__annotations__["ctx"] = Context
    return FunctionTool.from_defaults(
        async_fn=call, name=tool.name, description=tool.description, fn_schema=schema_of(tool)
    )


class LlamaIndexProdEngine(LlamaIndexEngine):
    retries_normalised = True  # OpenAILike(max_retries=limits.max_retries) (built-in)

    def build(self, ctx: Any) -> FunctionAgent:
        scenario = ctx.scenario
        tools = build_tools(scenario)
        return GuardedFunctionAgent(
            tools=[prod_tool(t, self.guards) for t in tools],
            llm=self.llm(ctx),
            system_prompt=scenario.system_prompt,
            guards=self.guards,
            tool_schemas=[t.openai_schema() for t in tools],
            max_retries=scenario.limits.max_retries,
        )

    async def invoke(self, p: PeerPrepared) -> Outcome:
        if not p.guards.approvals:
            return await super().invoke(p)
        handler = self._run(p)
        try:
            async for event in handler.stream_events():
                if isinstance(event, InputRequiredEvent):  # the approver answers
                    approved = p.guards.approvals.get(event.tool, False)
                    answer = HumanResponseEvent(
                        response="yes" if approved else "no", tool=event.tool
                    )
                    handler.ctx.send_event(answer)
            return answered(str(await handler))
        finally:
            if not handler.done():
                await handler.cancel_run()
