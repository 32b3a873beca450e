"""``pydantic-ai`` (+ ``-retries``, ``-prod``): PydanticAI, the way its docs write it.

As its "OpenAI-compatible models" guide does: ``OpenAIChatModel(model_name,
provider=OpenAIProvider(base_url=<the mock>, api_key=..., http_client=...))`` in an
``Agent(model, instructions=system_prompt, tools=[...])`` and ``await agent.run(user,
message_history=..., usage_limits=UsageLimits(request_limit=N))``; the answer is
``result.output``. Instrumentation (Logfire / OpenTelemetry) is off by default
(``Agent._instrument_default = False``) and nothing here turns it on.

The scenario's tools are ``Tool.from_schema(function, name, description, json_schema)``:
PydanticAI's documented way to give a JSON Schema, which it sends unchanged. A tool's own
exception propagates (only ``ModelRetry`` goes back to the model); an unknown tool name or
arguments that fail to parse go back to the model as a retry prompt (its default: 1 retry).

Limits: ``UsageLimits(request_limit=max_steps)`` (``UsageLimitExceeded`` → ``aborted`` /
``max_steps``), the LLM timeout as ``model_settings={"timeout": ...}`` (per attempt), the
tool timeout as ``Agent(tool_timeout=...)`` (a slow call becomes a retry prompt). Retries are the openai client's default (2) unless normalised (then
``OpenAIProvider(openai_client=AsyncOpenAI(..., max_retries=N))``, see ``peers``). With
``RunContext.stream_tokens`` it runs ``agent.run_stream(...)`` and reads
``stream_text(delta=True)``: the first non-empty delta is the first token of the answer
(``run_stream`` streams the response that ends the run).

``pydantic-ai-prod`` is PydanticAI configured for production: its built-ins first — a tool's
failure raised as ``ModelRetry`` (the documented way to let the model try again) with
``Agent(retries=limits.max_retries)``, ``requires_approval`` on the gated tools (the run ends
with ``DeferredToolRequests``; the approver's ``ToolDenied`` / ``True`` goes back as
``DeferredToolResults`` and the run continues), ``tool_timeout``, ``UsageLimits``, the
client's retries set to ``limits.max_retries`` — then short custom code where it has none
(``prod_tool``, ``token_budget``): a loop guard and a circuit breaker in the tool function
and the token budget as a ``ProcessHistory`` capability (a history processor: it runs
before every request), both
raising a ``peer_guards.GuardError`` that ends the run.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic_ai import (
    Agent,
    DeferredToolRequests,
    DeferredToolResults,
    ModelRetry,
    Tool,
    ToolDenied,
)
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.exceptions import ModelAPIError, UsageLimitExceeded
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import UsageLimits

from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peer_guards import ToolGuards, rejection
from bench.engines.peers import (
    API_KEY,
    PeerEngine,
    PeerPrepared,
    answered,
    mock_base_url,
    model_name,
    openai_http_lib,
)


def schema_tool(tool: ScenarioTool) -> Tool:
    """The scenario tool with its JSON Schema as is (``Tool.from_schema``)."""

    async def call(**args: Any) -> str:
        return await tool.acall(**args)

    return Tool.from_schema(call, tool.name, tool.description, tool.parameters)


def message_history(history: list[dict[str, str]]) -> list[Any]:
    """The conversation so far as PydanticAI messages."""
    return [
        ModelRequest(parts=[UserPromptPart(m["content"])])
        if m["role"] == "user"
        else ModelResponse(parts=[TextPart(m["content"])])
        for m in history
    ]


class PydanticAIEngine(PeerEngine):
    def provider(self, ctx: Any) -> OpenAIProvider:
        if self.retries_normalised:
            return OpenAIProvider(openai_client=self.openai_client(ctx))
        http_client = self.http_client(ctx, openai_http_lib())
        return OpenAIProvider(base_url=mock_base_url(ctx), api_key=API_KEY, http_client=http_client)

    def build(self, ctx: Any) -> Agent:
        scenario = ctx.scenario
        return Agent(
            OpenAIChatModel(model_name(ctx), provider=self.provider(ctx)),
            instructions=scenario.system_prompt,
            tools=[schema_tool(t) for t in build_tools(scenario)],
            model_settings={"timeout": scenario.limits.llm_timeout_s},
            tool_timeout=scenario.limits.tool_timeout_s,
        )

    def _options(self, p: PeerPrepared) -> dict[str, Any]:
        return {
            "message_history": message_history(p.history) or None,
            "usage_limits": UsageLimits(request_limit=p.scenario.limits.max_steps),
        }

    async def invoke(self, p: PeerPrepared) -> Outcome:
        result = await p.agent.run(p.user, **self._options(p))
        return answered(result.output)

    async def stream(self, p: PeerPrepared) -> Outcome:
        started = time.perf_counter()
        first = None
        async with p.agent.run_stream(p.user, **self._options(p)) as result:
            async for delta in result.stream_text(delta=True):
                if first is None and delta:
                    first = time.perf_counter()
            output = await result.get_output()
        outcome = answered(output)
        if outcome.status == "completed" and first is not None:
            outcome.ttft_ms = (first - started) * 1000
        return outcome

    def classify(self, exc: BaseException, p: PeerPrepared) -> Outcome:
        text = f"{type(exc).__name__}: {exc}"[:2000]
        if isinstance(exc, UsageLimitExceeded):
            return Outcome("aborted", None, "max_steps", error=text)
        if isinstance(exc, ModelAPIError):
            return Outcome("failed", None, "llm_error", error=text)
        if isinstance(exc, json.JSONDecodeError):
            return Outcome("failed", None, "invalid_tool_call", error=text)
        return super().classify(exc, p)


class PydanticAIRetriesEngine(PydanticAIEngine):
    retries_normalised = True


def prod_tool(tool: ScenarioTool, guards: ToolGuards) -> Tool:
    """The scenario tool for production: the loop guard and the breaker (custom) around it,
    its failure raised as ``ModelRetry`` and its approval deferred (built-in)."""

    async def call(**args: Any) -> str:
        guards.check_repeat(tool.name, args)
        if guards.breaker.is_open(tool.name):
            return guards.breaker.refusal(tool.name)
        try:
            result = await tool.acall(**args)
        except Exception as exc:
            guards.breaker.record(tool.name, ok=False)
            raise ModelRetry(f"{tool.name} failed ({type(exc).__name__}: {exc})") from exc
        guards.breaker.record(tool.name, ok=True)
        return result

    schema_tool = Tool.from_schema(call, tool.name, tool.description, tool.parameters)
    schema_tool.requires_approval = tool.definition.require_confirmation
    return schema_tool


def token_budget(guards: ToolGuards, instructions: str, schemas: list[Any]) -> Any:
    """A history processor that checks the request about to be sent against the budget."""

    def check(messages: list[Any]) -> list[Any]:
        parts = [
            getattr(p, "content", None) or getattr(p, "args", None)
            for m in messages
            for p in m.parts
        ]
        guards.check_budget([instructions, parts, schemas])
        return messages

    return check


class PydanticAIProdEngine(PydanticAIEngine):
    retries_normalised = True  # the client retries limits.max_retries times (built-in)

    def build(self, ctx: Any) -> Agent:
        scenario, limits = ctx.scenario, ctx.scenario.limits
        guards = self.guards
        schemas = [t.openai_schema() for t in build_tools(scenario)]
        return Agent(
            OpenAIChatModel(model_name(ctx), provider=self.provider(ctx)),
            instructions=scenario.system_prompt,
            tools=[prod_tool(t, guards) for t in build_tools(scenario)],
            output_type=[str, DeferredToolRequests],
            retries=limits.max_retries,
            model_settings={"timeout": limits.llm_timeout_s},
            tool_timeout=limits.tool_timeout_s,
            capabilities=[ProcessHistory(token_budget(guards, scenario.system_prompt, schemas))],
        )

    async def invoke(self, p: PeerPrepared) -> Outcome:
        result = await p.agent.run(p.user, **self._options(p))
        while isinstance(result.output, DeferredToolRequests):  # the approver decides
            approvals = {
                call.tool_call_id: p.guards.approvals.get(call.tool_name, False)
                or ToolDenied(rejection(call.tool_name))
                for call in result.output.approvals
            }
            result = await p.agent.run(
                message_history=result.all_messages(),
                deferred_tool_results=DeferredToolResults(approvals=approvals),
                usage_limits=UsageLimits(request_limit=p.scenario.limits.max_steps),
            )
        return answered(result.output)
