"""``llamaindex`` (+ ``-retries``, ``-nostream``): LlamaIndex's ``FunctionAgent``, the way its
docs write it.

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
"""

from __future__ import annotations

import time
from typing import Any

from llama_index.core.agent.workflow import AgentInput, AgentStream, FunctionAgent
from llama_index.core.llms import ChatMessage
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai_like import OpenAILike
from pydantic import BaseModel, ConfigDict
from workflows.errors import WorkflowRuntimeError

from bench.engines.common import Outcome
from bench.engines.peers import (
    API_KEY,
    PeerEngine,
    PeerPrepared,
    answered,
    mock_base_url,
    model_name,
    openai_http_lib,
)
from bench.tools import ScenarioTool, build_tools

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
    name = "llamaindex"
    description = "LlamaIndex: FunctionAgent + OpenAILike (streams its LLM calls by default)"
    streams = True

    def build(self, ctx: Any) -> FunctionAgent:
        scenario, limits = ctx.scenario, ctx.scenario.limits
        llm = OpenAILike(
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
        return FunctionAgent(
            tools=[function_tool(t) for t in build_tools(scenario)],
            llm=llm,
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
    name = "llamaindex-retries"
    description = "the same LlamaIndex engine with retries normalised (limits.max_retries)"
    retries_normalised = True


class LlamaIndexNoStreamEngine(LlamaIndexEngine):
    name = "llamaindex-nostream"
    description = "the same LlamaIndex engine with FunctionAgent(streaming=False)"
    streams = False
