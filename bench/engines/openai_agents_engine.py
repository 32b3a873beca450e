"""``openai-agents`` (+ ``-retries``, ``-prod``): the OpenAI Agents SDK, the way its docs write it.

As its "Using other LLM providers" guide does: ``OpenAIChatCompletionsModel`` over
``AsyncOpenAI(base_url=<the mock>)``, ``set_tracing_disabled(True)`` (tracing is on by
default and would try to export to OpenAI), an ``Agent(name, instructions, tools, model)``
and ``await Runner.run(agent, input, max_turns=N)``; the answer is ``result.final_output``.

The scenario's tools are the SDK's custom ``FunctionTool``\\s (its documented way to give a
JSON Schema): ``params_json_schema`` is the scenario's schema, unchanged, with
``strict_json_schema=False`` (strict mode would rewrite it), ``timeout_seconds`` the
scenario's tool timeout (a timed-out call is told to the model: the SDK's default
``error_as_result``), and ``on_invoke_tool`` parses the arguments and awaits the tool.
Errors get what ``@function_tool`` gives every tool by default: the SDK's docs say a
hand-built ``FunctionTool`` "must handle errors inside the on_invoke_tool function", so it
answers a tool's exception, or arguments that do not parse, with the SDK's own
``default_tool_error_function`` ("An error occurred while running the tool. Please try
again.") and the run goes on, as the decorator's default ``failure_error_function`` does.
A call to a tool the agent does not have still ends the run with ``ModelBehaviorError``
(``unknown_tool``): ``RunConfig(tool_not_found_behavior="raise_error")`` is the default;
``openai-agents-prod`` sets ``"return_error_to_model"``.

Limits: ``max_turns=max_steps`` (``MaxTurnsExceeded`` → ``aborted`` / ``max_steps``), the
LLM timeout on the client (``AsyncOpenAI(timeout=...)``, per attempt); retries are the
client's default (2) unless normalised (``peers``). The run deadline is the harness's
``asyncio.timeout``. With ``RunContext.stream_tokens`` it runs ``Runner.run_streamed`` and
reads ``raw_response_event``\\s: the first ``response.output_text.delta`` after the last
``response.created`` is the first token of the final answer.

``openai-agents-prod`` is the SDK configured for production: its built-ins first —
``RunConfig(tool_not_found_behavior="return_error_to_model")``, ``needs_approval=True`` on the
gated tools (the run stops with ``interruptions``; the approver's answer goes into
``result.to_state()`` with ``approve`` / ``reject(rejection_message=...)`` and the run resumes),
``timeout_seconds`` per tool, ``max_turns``, the client's retries set to ``limits.max_retries``
``ModelSettings(retry=ModelRetrySettings(...))`` with a policy that retries a reply whose
body does not parse (the client retries everything else) — then short custom code where it
has none, hooked into its extension points
(``prod_tools``, ``ProdParts``): a loop guard as a ``tool_input_guardrail`` whose
``raise_exception()`` ends the run (``ToolInputGuardrailTripwireTriggered`` → ``aborted`` /
``tool_limit``), the token budget as ``RunConfig(call_model_input_filter=...)``, and a
circuit breaker inside ``on_invoke_tool`` (``bench.engines.peer_guards``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    MaxTurnsExceeded,
    ModelBehaviorError,
    ModelRetrySettings,
    ModelSettings,
    OpenAIChatCompletionsModel,
    RunConfig,
    RunContextWrapper,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrailData,
    ToolInputGuardrailTripwireTriggered,
    UserError,
    default_tool_error_function,
    set_tracing_disabled,
    tool_input_guardrail,
)
from agents.run_config import CallModelData, ModelInputData

from bench.engines.common import Outcome
from bench.engines.kit.tools import ScenarioTool, build_tools
from bench.engines.peer_guards import RepeatedToolCallError, ToolGuards, rejection
from bench.engines.peers import PeerEngine, PeerPrepared, answered, model_name

set_tracing_disabled(True)


def function_tool(tool: ScenarioTool, timeout_s: float) -> FunctionTool:
    """The scenario tool as the SDK's custom ``FunctionTool`` (its JSON Schema as is), its
    errors told to the model as ``@function_tool``'s default does."""

    async def on_invoke_tool(context: RunContextWrapper[Any], arguments: str) -> str:
        try:
            return await tool.acall(**json.loads(arguments or "{}"))
        except Exception as exc:
            return default_tool_error_function(context, exc)

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=tool.parameters,
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=False,
        timeout_seconds=timeout_s,
    )


class OpenAIAgentsEngine(PeerEngine):
    def build(self, ctx: Any) -> Agent:
        scenario, limits = ctx.scenario, ctx.scenario.limits
        client = self.openai_client(ctx, timeout=limits.llm_timeout_s)
        return Agent(
            name="assistant",
            instructions=scenario.system_prompt,
            tools=[function_tool(t, limits.tool_timeout_s) for t in build_tools(scenario)],
            model=OpenAIChatCompletionsModel(model=model_name(ctx), openai_client=client),
        )

    def _input(self, p: PeerPrepared) -> list[dict[str, str]]:
        return [*p.history, {"role": "user", "content": p.user}]

    def _agent(self, p: PeerPrepared) -> Agent:
        return p.agent

    def _options(self, p: PeerPrepared) -> dict[str, Any]:
        return {"max_turns": p.scenario.limits.max_steps}

    async def invoke(self, p: PeerPrepared) -> Outcome:
        result = await Runner.run(self._agent(p), self._input(p), **self._options(p))
        return answered(result.final_output)

    async def stream(self, p: PeerPrepared) -> Outcome:
        started = time.perf_counter()
        first = None  # the first text delta of the latest model response
        result = Runner.run_streamed(self._agent(p), self._input(p), **self._options(p))
        async for event in result.stream_events():
            if event.type != "raw_response_event":
                continue
            kind = getattr(event.data, "type", "")
            if kind == "response.created":
                first = None
            elif kind == "response.output_text.delta" and first is None and event.data.delta:
                first = time.perf_counter()
        outcome = answered(result.final_output)
        if outcome.status == "completed" and first is not None:
            outcome.ttft_ms = (first - started) * 1000
        return outcome

    def classify(self, exc: BaseException, p: PeerPrepared) -> Outcome:
        text = f"{type(exc).__name__}: {exc}"[:2000]
        if isinstance(exc, MaxTurnsExceeded):
            return Outcome("aborted", None, "max_steps", error=text)
        if isinstance(exc, UserError) and isinstance(exc.__cause__, json.JSONDecodeError):
            return Outcome("failed", None, "invalid_tool_call", error=text)
        if isinstance(exc, ModelBehaviorError) and "not found" in str(exc):
            return Outcome("failed", None, "unknown_tool", error=text)
        return super().classify(exc, p)


class OpenAIAgentsRetriesEngine(OpenAIAgentsEngine):
    retries_normalised = True


def prod_tools(scenario: Any, guards: ToolGuards) -> list[FunctionTool]:
    """The scenario tools for production: the SDK's ``timeout_seconds`` and
    ``needs_approval`` (built-in), a loop guard as a ``tool_input_guardrail`` and the breaker
    in ``on_invoke_tool`` (custom)."""

    @tool_input_guardrail
    def loop_guard(data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        try:
            guards.check_repeat(data.context.tool_name, json.loads(data.context.tool_arguments))
        except RepeatedToolCallError as exc:
            return ToolGuardrailFunctionOutput.raise_exception(output_info=str(exc))
        except ValueError:
            pass  # arguments that do not parse: on_invoke_tool reports them
        return ToolGuardrailFunctionOutput.allow()

    def guarded(tool: ScenarioTool) -> FunctionTool:
        async def on_invoke_tool(context: RunContextWrapper[Any], arguments: str) -> str:
            try:
                args = json.loads(arguments or "{}")
            except ValueError as exc:
                return default_tool_error_function(context, exc)
            return await guards.call(
                tool.name, lambda: tool.acall(**args), timeout=False, approve=False
            )

        return FunctionTool(
            name=tool.name,
            description=tool.description,
            params_json_schema=tool.parameters,
            on_invoke_tool=on_invoke_tool,
            strict_json_schema=False,
            timeout_seconds=scenario.limits.tool_timeout_s,
            needs_approval=tool.definition.require_confirmation,
            tool_input_guardrails=[loop_guard],
        )

    return [guarded(t) for t in build_tools(scenario)]


@dataclass
class ProdParts:
    """The production agent and its run configuration."""

    agent: Agent
    config: RunConfig


class OpenAIAgentsProdEngine(OpenAIAgentsEngine):
    retries_normalised = True  # the client retries limits.max_retries times (built-in)

    def build(self, ctx: Any) -> ProdParts:
        scenario, limits = ctx.scenario, ctx.scenario.limits
        guards = self.guards
        tools = prod_tools(scenario, guards)
        schemas = [t.openai_schema() for t in build_tools(scenario)]

        def token_budget(data: CallModelData[Any]) -> ModelInputData:
            guards.check_budget([data.model_data.instructions, data.model_data.input, schemas])
            return data.model_data

        client = self.openai_client(ctx, timeout=limits.llm_timeout_s)
        agent = Agent(
            name="assistant",
            instructions=scenario.system_prompt,
            tools=tools,
            model=OpenAIChatCompletionsModel(model=model_name(ctx), openai_client=client),
            # the runner's own retries, for what the client does not retry: a 200 whose body
            # does not parse (a cut or corrupt answer), as lc-create-agent-prod does
            model_settings=ModelSettings(
                retry=ModelRetrySettings(
                    max_retries=limits.max_retries,
                    policy=lambda context: isinstance(context.error, json.JSONDecodeError),
                )
            ),
        )
        config = RunConfig(
            tool_not_found_behavior="return_error_to_model",
            call_model_input_filter=token_budget,
        )
        return ProdParts(agent, config)

    def _agent(self, p: PeerPrepared) -> Agent:
        return p.agent.agent

    def _options(self, p: PeerPrepared) -> dict[str, Any]:
        return {**super()._options(p), "run_config": p.agent.config}

    async def invoke(self, p: PeerPrepared) -> Outcome:
        parts: ProdParts = p.agent
        result = await Runner.run(parts.agent, self._input(p), **self._options(p))
        while result.interruptions:  # a gated tool: the approver decides, the run resumes
            state = result.to_state()
            for item in result.interruptions:
                name = item.tool_name or ""
                if p.guards.approvals.get(name, False):
                    state.approve(item)
                else:
                    state.reject(item, rejection_message=rejection(name))
            result = await Runner.run(parts.agent, state, **self._options(p))
        return answered(result.final_output)

    def classify(self, exc: BaseException, p: PeerPrepared) -> Outcome:
        if isinstance(exc, ToolInputGuardrailTripwireTriggered):
            text = f"{type(exc).__name__}: {exc.output.output_info}"[:2000]
            return Outcome("aborted", None, "tool_limit", error=text)
        return super().classify(exc, p)
