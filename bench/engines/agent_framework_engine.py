"""``agent-framework`` (+ ``-retries``, ``-prod``): a Microsoft Agent Framework ``Agent``, the
way its docs write it.

As its OpenAI provider page does for an OpenAI-compatible server (Chat Completions):
``OpenAIChatCompletionClient(model=..., async_client=AsyncOpenAI(base_url=<the mock>, ...))``
in an ``Agent(client, instructions=system_prompt, tools=[...])`` and ``await agent.run(
messages)``; the answer is ``response.text``. Telemetry: the user-agent telemetry it adds to
every request is switched off (``AGENT_FRAMEWORK_USER_AGENT_DISABLED``) and its OpenTelemetry
instrumentation stays off (it is opt-in).

The scenario's tools are ``FunctionTool(name, description, func, input_model=<the JSON
Schema>)`` — a mapping as ``input_model`` is its documented way to give a schema as is. A
tool's exception is caught by the framework's function-invocation loop and told to the model
(its default), so the run goes on.

Limits: the client's ``function_invocation_configuration["max_iterations"] = max_steps`` (LLM
round trips; past it the framework asks the model once more with ``tool_choice="none"`` and
returns that reply as the answer — the engine reports such a run as ``aborted`` /
``max_steps``, as AgentExecutor's sentinel answer is); the LLM timeout and retries
on the openai client (``AsyncOpenAI(timeout=..., max_retries=...)``: 2 retries unless
normalised). The run deadline is the harness's ``asyncio.timeout``.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("AGENT_FRAMEWORK_USER_AGENT_DISABLED", "true")

from agent_framework import Agent, FunctionTool, Message
from agent_framework.openai import OpenAIChatCompletionClient

from bench.engines.common import Outcome
from bench.engines.peers import PeerEngine, PeerPrepared, answered, model_name
from bench.tools import ScenarioTool, build_tools


def function_tool(tool: ScenarioTool) -> FunctionTool:
    async def call(**args: Any) -> str:
        return await tool.acall(**args)

    return FunctionTool(
        name=tool.name, description=tool.description, func=call, input_model=tool.parameters
    )


class AgentFrameworkEngine(PeerEngine):
    name = "agent-framework"
    description = "Microsoft Agent Framework: Agent on OpenAIChatCompletionClient, telemetry off"

    def client(self, ctx: Any) -> OpenAIChatCompletionClient:
        client = OpenAIChatCompletionClient(
            model=model_name(ctx),
            async_client=self.openai_client(ctx, timeout=ctx.scenario.limits.llm_timeout_s),
        )
        client.function_invocation_configuration["max_iterations"] = ctx.scenario.limits.max_steps
        return client

    def tools(self, ctx: Any) -> list[Any]:
        return [function_tool(t) for t in build_tools(ctx.scenario)]

    def build(self, ctx: Any) -> Agent:
        return Agent(
            self.client(ctx), instructions=ctx.scenario.system_prompt, tools=self.tools(ctx)
        )

    def messages(self, p: PeerPrepared) -> list[Message]:
        return [
            Message(m["role"], [m["content"]])
            for m in [*p.history, {"role": "user", "content": p.user}]
        ]

    async def invoke(self, p: PeerPrepared) -> Outcome:
        return self.ended(await p.agent.run(self.messages(p)), p)

    def ended(self, response: Any, p: PeerPrepared) -> Outcome:
        """The answer, unless ``max_iterations`` ended the tool loop: the framework then asks
        once more with ``tool_choice="none"`` and returns that reply, which is reported as
        the step limit it is (the reply goes to ``error``)."""
        rounds = sum(
            any(getattr(c, "type", None) == "function_call" for c in m.contents)
            for m in response.messages
        )
        if rounds >= p.scenario.limits.max_steps:
            text = f"max_iterations {rounds} reached; the reply without tools: {response.text}"
            return Outcome("aborted", None, "max_steps", error=text[:2000])
        return answered(response.text)


class AgentFrameworkRetriesEngine(AgentFrameworkEngine):
    name = "agent-framework-retries"
    description = "the same Agent Framework engine with retries normalised (limits.max_retries)"
    retries_normalised = True
