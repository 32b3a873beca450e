"""The catalogue on the OpenAI Agents SDK (a peer, run in its own virtualenv), as its docs write it.

Each cell is one function ``build(kit) -> ask`` (see ``bench.catalogue.kit``); ``plain`` is
``Agent(name, instructions, tools, model)`` + ``Runner.run``. The SDK's documented knobs:
tool input guardrails (``@tool_input_guardrail`` → ``reject_content``), ``FunctionTool``'s
``timeout_seconds``, ``tool_use_behavior`` (a function deciding from the tool results that
the run is over), ``RunConfig(call_model_input_filter=...)`` (what each model call sends),
``ModelSettings(retry=ModelRetrySettings(policy=retry_policies.http_status([429])))``,
``RunHooks`` (``on_llm_start`` / ``on_llm_end``) with the user in the run ``context``, a
custom ``Model`` (its documented extension point) to choose the model per step, and a
``TracingProcessor`` (its documented way to export traces).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    Model,
    ModelRetryBackoffSettings,
    ModelRetrySettings,
    ModelSettings,
    RunConfig,
    RunHooks,
    Runner,
    ToolGuardrailFunctionOutput,
    ToolsToFinalOutputResult,
    TracingProcessor,
    add_trace_processor,
    retry_policies,
    tool_input_guardrail,
)
from agents.run import ModelInputData

from bench.catalogue.customisations import (
    KEYWORD,
    MAX_LIMIT,
    REDACTED,
    REFUND_LIMIT,
    REFUSAL,
    REMINDER,
    RETRY_DELAY_S,
    RETRY_MAX,
    RETRY_STATUS,
    SECRET_PATTERN,
    SWITCH_AFTER_STEPS,
    TOOL_TIMEOUTS_S,
    USER_BUDGET_TOKENS,
)
from bench.catalogue.kit import Ask, Kit


def plain(kit: Kit) -> Ask:
    agent = Agent(
        name="assistant", instructions=kit.system_prompt, tools=kit.tools, model=kit.chat_model()
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask


def veto_tool(kit: Kit) -> Ask:
    @tool_input_guardrail
    def refund_policy(data: Any) -> ToolGuardrailFunctionOutput:
        args = json.loads(data.context.tool_arguments or "{}")
        if data.context.tool_name == "issue_refund" and args["amount"] > REFUND_LIMIT:
            return ToolGuardrailFunctionOutput.reject_content(REFUSAL)
        return ToolGuardrailFunctionOutput.allow()

    tools = [dataclasses.replace(t, tool_input_guardrails=[refund_policy]) for t in kit.tools]
    agent = Agent(
        name="assistant", instructions=kit.system_prompt, tools=tools, model=kit.chat_model()
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask


def rewrite_args(kit: Kit) -> Ask:
    def with_capped_limit(tool: FunctionTool) -> FunctionTool:
        async def invoke(context: Any, arguments: str) -> Any:
            args = json.loads(arguments or "{}")
            if tool.name == "search_orders" and args["limit"] > MAX_LIMIT:
                arguments = json.dumps({**args, "limit": MAX_LIMIT})
            return await tool.on_invoke_tool(context, arguments)

        return dataclasses.replace(tool, on_invoke_tool=invoke)

    tools = [with_capped_limit(t) for t in kit.tools]
    agent = Agent(
        name="assistant", instructions=kit.system_prompt, tools=tools, model=kit.chat_model()
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask


def stop_on_keyword(kit: Kit) -> Ask:
    def stop_on_escalation(context: Any, results: list[Any]) -> ToolsToFinalOutputResult:
        escalated = [r.output for r in results if KEYWORD in str(r.output)]
        return ToolsToFinalOutputResult(is_final_output=bool(escalated), final_output=escalated)

    agent = Agent(
        name="assistant",
        instructions=kit.system_prompt,
        tools=kit.tools,
        model=kit.chat_model(),
        tool_use_behavior=stop_on_escalation,
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask


def tool_timeouts(kit: Kit) -> Ask:
    tools = [dataclasses.replace(t, timeout_seconds=TOOL_TIMEOUTS_S[t.name]) for t in kit.tools]
    agent = Agent(
        name="assistant", instructions=kit.system_prompt, tools=tools, model=kit.chat_model()
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask


def inject_message(kit: Kit) -> Ask:
    def remind(data: Any) -> ModelInputData:
        items = list(data.model_data.input)
        first = next((i for i, m in enumerate(items) if m.get("type") == "function_call_output"))
        items.insert(first + 1, {"role": "system", "content": REMINDER})
        return ModelInputData(input=items, instructions=data.model_data.instructions)

    def with_reminder(data: Any) -> ModelInputData:
        outputs = [m for m in data.model_data.input if m.get("type") == "function_call_output"]
        return remind(data) if outputs else data.model_data

    agent = Agent(
        name="assistant", instructions=kit.system_prompt, tools=kit.tools, model=kit.chat_model()
    )
    config = RunConfig(call_model_input_filter=with_reminder)

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question, run_config=config)

    return ask


def switch_model(kit: Kit) -> Ask:
    class SwitchAfterSteps(Model):
        """The first model for the first steps, the later one after."""

        def __init__(self, first: Model, later: Model):
            self.first, self.later = first, later

        def pick(self, items: Any) -> Model:
            calls = [m for m in items if isinstance(m, dict) and m.get("type") == "function_call"]
            return self.later if len(calls) >= SWITCH_AFTER_STEPS else self.first

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kw: Any):
            return await self.pick(input).get_response(system_instructions, input, *args, **kw)

        def stream_response(self, system_instructions: Any, input: Any, *args: Any, **kw: Any):
            return self.pick(input).stream_response(system_instructions, input, *args, **kw)

    model = SwitchAfterSteps(kit.chat_model(), kit.chat_model(kit.large_model))
    agent = Agent(name="assistant", instructions=kit.system_prompt, tools=kit.tools, model=model)

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask


def user_budget(kit: Kit) -> Ask:
    @dataclass
    class UserContext:
        user_id: str

    class UserTokenBudget(RunHooks):
        def __init__(self) -> None:
            self.spent: Counter[str] = Counter()

        async def on_llm_start(self, context: Any, agent: Any, *args: Any) -> None:
            if self.spent[context.context.user_id] >= USER_BUDGET_TOKENS:
                raise RuntimeError(f"{context.context.user_id} has spent the token budget")

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            self.spent[context.context.user_id] += response.usage.total_tokens

    budget = UserTokenBudget()
    agent = Agent(
        name="assistant", instructions=kit.system_prompt, tools=kit.tools, model=kit.chat_model()
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question, context=UserContext(user), hooks=budget)

    return ask


def retry_one_class(kit: Kit) -> Ask:
    retry = ModelRetrySettings(
        max_retries=RETRY_MAX,
        backoff=ModelRetryBackoffSettings(initial_delay=RETRY_DELAY_S, multiplier=1, jitter=False),
        policy=retry_policies.http_status([RETRY_STATUS]),
    )
    agent = Agent(
        name="assistant",
        instructions=kit.system_prompt,
        tools=kit.tools,
        model=kit.chat_model(max_retries=0),
        model_settings=ModelSettings(retry=retry),
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask


def redact_trace(kit: Kit) -> Ask:
    secret = re.compile(SECRET_PATTERN)

    class RedactingExporter(TracingProcessor):
        """Exports every finished span, secrets replaced."""

        def on_span_end(self, span: Any) -> None:
            exported = json.dumps(span.export(), default=str)
            kit.traces.append(secret.sub(REDACTED, exported))

        def on_trace_start(self, trace: Any) -> None:
            pass

        def on_trace_end(self, trace: Any) -> None:
            pass

        def on_span_start(self, span: Any) -> None:
            pass

        def shutdown(self) -> None:
            pass

        def force_flush(self) -> None:
            pass

    add_trace_processor(RedactingExporter())
    agent = Agent(
        name="assistant", instructions=kit.system_prompt, tools=kit.tools, model=kit.chat_model()
    )

    async def ask(user: str, question: str) -> Any:
        return await Runner.run(agent, question)

    return ask
