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

``agent-framework-prod`` is the framework configured for production: its built-ins first —
``approval_mode="always_require"`` on the gated tools (the run returns with
``user_input_requests``; the approver's ``to_function_approval_response(approved)`` goes back
in the same ``AgentSession`` and the run resumes), ``max_iterations``, the consecutive-error
cut-off of its function loop, the client's retries set to ``limits.max_retries`` — then short
custom code in its middleware (``prod_middleware``): a chat middleware that checks the
token budget before every model call, retries a reply whose body does not parse (up to
``limits.max_retries`` times) and checks the loop guard on the calls the model asks for
(raising ``peer_guards.GuardError``, which ends the run), and a function middleware with the
per-call timeout, the breaker and a check of the arguments against the schema.
"""

from __future__ import annotations

import json
import os
from typing import Any

os.environ.setdefault("AGENT_FRAMEWORK_USER_AGENT_DISABLED", "true")

from agent_framework import (
    Agent,
    FunctionTool,
    Message,
    chat_middleware,
    function_middleware,
)
from agent_framework.openai import OpenAIChatCompletionClient

from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peer_guards import ToolGuards
from bench.engines.peers import (
    PeerEngine,
    PeerPrepared,
    answered,
    exception_chain,
    model_name,
)


def function_tool(tool: ScenarioTool, **options: Any) -> FunctionTool:
    async def call(**args: Any) -> str:
        return await tool.acall(**args)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        func=call,
        input_model=tool.parameters,
        **options,
    )


class AgentFrameworkEngine(PeerEngine):
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
    retries_normalised = True


def content_text(content: Any) -> Any:
    """What a message's content item carries: its text, a call's arguments, or a function
    result (itself a list of contents)."""
    result = getattr(content, "result", None)
    if isinstance(result, list):
        return [content_text(c) for c in result]
    return getattr(content, "text", None) or result or getattr(content, "arguments", None)


def prod_middleware(guards: ToolGuards, scenario: Any) -> list[Any]:
    """The custom middleware: the budget and the loop guard around each model call, the
    timeout, the breaker and the schema check around each tool call."""
    schemas = [t.openai_schema() for t in build_tools(scenario)]
    parameters = {t.name: t.parameters for t in scenario.tools}

    @chat_middleware
    async def guard_model_call(context: Any, call_next: Any) -> None:
        parts = [content_text(c) for m in context.messages for c in m.contents]
        guards.check_budget([scenario.system_prompt, parts, schemas])
        for attempt in range(scenario.limits.max_retries + 1):
            try:  # a reply whose body does not parse is retried (the client retries the rest)
                await call_next()
                break
            except Exception as exc:
                unparsed = any(isinstance(e, json.JSONDecodeError) for e in exception_chain(exc))
                if not unparsed or attempt == scenario.limits.max_retries:
                    raise
        for message in getattr(context.result, "messages", []):
            for content in message.contents:
                if getattr(content, "type", None) == "function_call":
                    guards.check_repeat(content.name, content.parse_arguments() or {})

    @function_middleware
    async def guard_tool_call(context: Any, call_next: Any) -> None:
        name = context.function.name
        args = dict(context.arguments) if context.arguments else {}

        async def run() -> Any:  # the function's result, as the framework parsed it
            await call_next()
            return context.result

        context.result = await guards.call(
            name, run, approve=False, schema=parameters.get(name), args=args
        )

    return [guard_model_call, guard_tool_call]


class AgentFrameworkProdEngine(AgentFrameworkEngine):
    retries_normalised = True  # the client retries limits.max_retries times (built-in)

    def tools(self, ctx: Any) -> list[Any]:
        return [
            function_tool(
                t,
                approval_mode="always_require" if t.definition.require_confirmation else None,
            )
            for t in build_tools(ctx.scenario)
        ]

    def build(self, ctx: Any) -> Agent:
        return Agent(
            self.client(ctx),
            instructions=ctx.scenario.system_prompt,
            tools=self.tools(ctx),
            middleware=prod_middleware(self.guards, ctx.scenario),
        )

    async def invoke(self, p: PeerPrepared) -> Outcome:
        session = p.agent.create_session()
        response = await p.agent.run(self.messages(p), session=session)
        while requests := response.user_input_requests:  # the approver decides
            answers = [
                r.to_function_approval_response(p.guards.approvals.get(r.function_call.name, False))
                for r in requests
            ]
            response = await p.agent.run([Message("user", answers)], session=session)
        return self.ended(response, p)
