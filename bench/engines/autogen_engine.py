"""``autogen`` (+ ``-retries``, ``-prod``): an AutoGen AgentChat ``AssistantAgent``, the way
its docs write it.

As its model-clients guide does for an OpenAI-compatible server:
``OpenAIChatCompletionClient(model=..., base_url=<the mock>, api_key=..., model_info=
ModelInfo(function_calling=True, ...))`` (a model name it does not know needs its
``model_info``), in an ``AssistantAgent(name, model_client, tools, system_message,
max_tool_iterations=N, reflect_on_tool_use=True)`` — the docs' multi-step tool agent: by
default an ``AssistantAgent`` makes one model call, runs the tools it asked for and returns
their results as its answer (``ToolCallSummaryMessage``); ``max_tool_iterations`` lets it call
the model again after each round of tools and ``reflect_on_tool_use`` makes the last round's
answer a model reply — and ``await agent.run(task=user)``; the answer is the last message's
text. An ``AssistantAgent`` keeps its conversation (``model_context``) across runs, so a
service builds one per request: this engine does so in every run, from the prepared client
and tools, with the conversation so far as the context's ``initial_messages``.
``include_name_in_message=False``: the client otherwise sends each message's ``source`` as
its ``name`` (nothing else does). Runtime tracing is off (``AUTOGEN_DISABLE_RUNTIME_TRACING``;
its OpenTelemetry spans export nothing without a configured provider anyway).

The scenario's tools are ``SchemaTool``\\s: an ``autogen_core.tools.BaseTool`` subclass (its
documented way to write a tool by hand) whose ``schema`` is the scenario's JSON Schema as is
and whose ``run_json`` awaits the tool with the model's arguments. A tool's exception is
caught by AutoGen and told to the model as an error result (its default), so the run goes on.

Limits: ``max_tool_iterations=max_steps`` (after that many tool rounds AutoGen makes one
more model call to reflect; a model that still asks for tools then ends the run with
``RuntimeError("Reflect on tool use produced no valid text response")`` → ``aborted`` /
``max_steps``, and a run whose every step called tools is reported the same way); the LLM timeout and retries on the client
(``OpenAIChatCompletionClient(timeout=..., max_retries=...)``: the openai client's default
of 2 unless normalised). The run deadline is the harness's ``asyncio.timeout``.

``autogen-prod`` is AutoGen configured for production: its built-ins first —
``max_tool_iterations``, tool errors told to the model, the client's
``max_retries=limits.max_retries`` — then short custom code where it has none
(``GuardedContext``, ``GuardedTool``): a ``ChatCompletionContext`` subclass (the documented
way to customise what the agent keeps and sends) that checks the token budget in
``get_messages`` before every model call and the loop guard in ``add_message`` when the model
asks for calls (raising ``peer_guards.GuardError``, which ends the run), and a tool that
adds the approver (AssistantAgent has no tool approval), the per-call timeout, the breaker
and a check of the arguments against the schema; and a client subclass that retries a reply
whose body does not parse (``RetryingClient``), up to ``limits.max_retries`` times.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("AUTOGEN_DISABLE_RUNTIME_TRACING", "true")

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import ToolCallExecutionEvent
from autogen_core import CancellationToken
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import AssistantMessage, LLMMessage, ModelInfo, UserMessage
from autogen_core.tools import BaseTool, ToolSchema
from autogen_ext.models.openai import OpenAIChatCompletionClient
from pydantic import BaseModel, ConfigDict

from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peer_guards import ToolGuards
from bench.engines.peers import (
    API_KEY,
    PeerEngine,
    PeerPrepared,
    answered,
    mock_base_url,
    model_name,
    openai_http_lib,
)

# what AutoGen must be told about a model it does not know (ours is "scenario/<name>")
MODEL_INFO = ModelInfo(
    vision=False,
    function_calling=True,
    json_output=False,
    family="unknown",
    structured_output=False,
)


class _AnyArguments(BaseModel):
    model_config = ConfigDict(extra="allow")


class SchemaTool(BaseTool[_AnyArguments, str]):
    """A scenario tool with its JSON Schema as is."""

    def __init__(self, tool: ScenarioTool):
        super().__init__(_AnyArguments, str, tool.name, tool.description)
        self.tool = tool

    @property
    def schema(self) -> ToolSchema:
        return ToolSchema(
            name=self.tool.name,
            description=self.tool.description,
            parameters=self.tool.parameters,  # type: ignore[typeddict-item]
        )

    async def run(self, args: _AnyArguments, cancellation_token: CancellationToken) -> str:
        return await self.call(dict(args.model_extra or {}))

    async def run_json(
        self,
        args: Mapping[str, Any],
        cancellation_token: CancellationToken,
        call_id: str | None = None,
    ) -> Any:
        return await self.call(dict(args))

    async def call(self, args: dict[str, Any]) -> str:
        return await self.tool.acall(**args)


@dataclass
class AutoGenParts:
    """What every run's ``AssistantAgent`` is built from (prepared once)."""

    client: OpenAIChatCompletionClient
    tools: list[BaseTool[Any, Any]]
    system_prompt: str
    max_steps: int
    options: dict[str, Any] = field(default_factory=dict)


def history_messages(history: list[dict[str, str]]) -> list[LLMMessage]:
    return [
        UserMessage(content=m["content"], source="user")
        if m["role"] == "user"
        else AssistantMessage(content=m["content"], source="assistant")
        for m in history
    ]


class AutoGenEngine(PeerEngine):
    client_class: type[OpenAIChatCompletionClient] = OpenAIChatCompletionClient

    def client(self, ctx: Any) -> OpenAIChatCompletionClient:
        client = self.client_class(
            model=model_name(ctx),
            base_url=mock_base_url(ctx),
            api_key=API_KEY,
            model_info=MODEL_INFO,
            timeout=ctx.scenario.limits.llm_timeout_s,
            include_name_in_message=False,
            http_client=self.http_client(ctx, openai_http_lib()),
            **self.retry_options(ctx),
        )
        if isinstance(client, RetryingClient):
            client.unparsed_retries = ctx.scenario.limits.max_retries
        return client

    def tools(self, ctx: Any) -> list[BaseTool[Any, Any]]:
        return [SchemaTool(t) for t in build_tools(ctx.scenario)]

    def build(self, ctx: Any) -> AutoGenParts:
        scenario = ctx.scenario
        return AutoGenParts(
            self.client(ctx), self.tools(ctx), scenario.system_prompt, scenario.limits.max_steps
        )

    def agent(self, p: PeerPrepared) -> AssistantAgent:
        parts: AutoGenParts = p.agent
        return AssistantAgent(
            "assistant",
            model_client=parts.client,
            tools=parts.tools,
            system_message=parts.system_prompt,
            model_context=self.context(p),
            max_tool_iterations=parts.max_steps,
            reflect_on_tool_use=True,
            **parts.options,
        )

    def context(self, p: PeerPrepared) -> UnboundedChatCompletionContext:
        return UnboundedChatCompletionContext(initial_messages=history_messages(p.history))

    async def invoke(self, p: PeerPrepared) -> Outcome:
        result = await self.agent(p).run(task=p.user)
        return self.ended(result, p)

    def ended(self, result: Any, p: PeerPrepared) -> Outcome:
        """The run's last message is the answer, unless every step called tools (AutoGen's
        ``max_tool_iterations`` cut it)."""
        rounds = sum(isinstance(m, ToolCallExecutionEvent) for m in result.messages)
        if rounds >= p.scenario.limits.max_steps:
            return Outcome(
                "aborted", None, "max_steps", error=f"max_tool_iterations {rounds} reached"
            )
        last = result.messages[-1] if result.messages else None
        return answered(getattr(last, "content", None))

    def classify(self, exc: BaseException, p: PeerPrepared) -> Outcome:
        if isinstance(exc, RuntimeError) and "Reflect on tool use produced no valid" in str(exc):
            return Outcome("aborted", None, "max_steps", error=f"{type(exc).__name__}: {exc}")
        return super().classify(exc, p)


class AutoGenRetriesEngine(AutoGenEngine):
    retries_normalised = True


class GuardedContext(UnboundedChatCompletionContext):
    """The conversation, with the token budget checked before every model call and the
    loop guard when the model asks for calls."""

    def __init__(self, guards: ToolGuards, fixed: list[Any], initial: list[LLMMessage]):
        super().__init__(initial_messages=initial)
        self.guards, self.fixed = guards, fixed  # the system prompt and the tool schemas

    async def add_message(self, message: LLMMessage) -> None:
        if isinstance(message, AssistantMessage) and isinstance(message.content, list):
            for call in message.content:
                try:
                    args = json.loads(call.arguments or "{}")
                except ValueError:
                    continue  # arguments that do not parse: the tool reports them
                self.guards.check_repeat(call.name, args)
        await super().add_message(message)

    async def get_messages(self) -> list[LLMMessage]:
        messages = await super().get_messages()
        self.guards.check_budget([self.fixed, [m.content for m in messages]])
        return messages


class GuardedTool(SchemaTool):
    """The scenario tool through the custom guards."""

    def __init__(self, tool: ScenarioTool, guards: ToolGuards):
        super().__init__(tool)
        self.guards = guards

    async def call(self, args: dict[str, Any]) -> str:
        return await self.guards.call(
            self.tool.name, lambda: self.tool.acall(**args), schema=self.tool.parameters, args=args
        )


class RetryingClient(OpenAIChatCompletionClient):
    """The client, retrying a reply whose body does not parse (the openai client retries
    everything else; AutoGen has no retry of its own)."""

    unparsed_retries = 0

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        for attempt in range(self.unparsed_retries + 1):
            try:
                return await super().create(*args, **kwargs)
            except json.JSONDecodeError:
                if attempt == self.unparsed_retries:
                    raise
        raise AssertionError("unreachable")


class AutoGenProdEngine(AutoGenEngine):
    retries_normalised = True  # the client retries limits.max_retries times (built-in)
    client_class = RetryingClient

    def tools(self, ctx: Any) -> list[BaseTool[Any, Any]]:
        return [GuardedTool(t, self.guards) for t in build_tools(ctx.scenario)]

    def context(self, p: PeerPrepared) -> UnboundedChatCompletionContext:
        parts: AutoGenParts = p.agent
        fixed = [parts.system_prompt, [t.schema for t in parts.tools]]
        return GuardedContext(p.guards, fixed, history_messages(p.history))
