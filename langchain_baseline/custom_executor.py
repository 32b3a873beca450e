"""The custom code an ``AgentExecutor`` user writes around the executor's own options.

``AgentExecutor`` has no per-tool timeout, loop guard, circuit breaker, confirmation step or
token budget, and ``handle_tool_error`` only catches ``ToolException``. What its users write
instead, one piece per scenario limit:

=====================  ====================================================================
``ExecutorGuards.``    each scenario tool as a validated tool (``common.validated_tool``: its
``tools``              arguments checked by pydantic; ``handle_validation_error=True`` tells
                       the model) whose coroutine raises
                       ``ToolException`` (the executor's ``handle_tool_error=True`` then hands
                       the message to the model), cut at ``tool_timeout_s``, behind a
                       per-tool circuit breaker (``breaker_threshold``) and, for gated tools,
                       an approver (``require_confirmation``: a "no" never runs the tool and
                       the model is told)
``ExecutorGuards.``    an ``AsyncCallbackHandler`` with ``raise_error=True`` — LangChain's
``callbacks``          classic way to veto a step — given at call time, so it sees every LLM
                       and tool start: ``on_tool_start`` raises ``RepeatedToolCallError`` when
                       a call (same tool, same arguments) was already made
                       ``max_same_tool_calls`` times in this run; ``on_chat_model_start``
                       raises ``TokenBudgetExceededError`` before a request over
                       ``token_budget`` is sent
``ExecutorGuards.``    the tool-calling agent with a parser that raises
``agent``              ``OutputParserException`` on a turn whose tool calls did not parse
                       (the stock parser ignores ``invalid_tool_calls`` and returns the empty
                       content as the answer); ``handle_parsing_errors=True`` reports it
=====================  ====================================================================
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from typing import Any
from uuid import UUID

from langchain_classic.agents import create_tool_calling_agent
from langchain_classic.agents.output_parsers.tools import ToolsAgentOutputParser
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.exceptions import OutputParserException
from langchain_core.messages import convert_to_openai_messages
from langchain_core.runnables import RunnableSequence
from langchain_core.tools import StructuredTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_baseline.common import AgentSettings, ToolLike, validated_tool
from langchain_baseline.guards import (
    CircuitBreaker,
    RepeatedToolCallError,
    TokenBudgetExceededError,
    call_key,
    json_tokens,
)


class InvalidToolCallsParser(ToolsAgentOutputParser):
    """The stock parser, but a turn with only unparseable tool calls is an error."""

    def parse_result(self, result: list[Any], *, partial: bool = False) -> Any:
        message = result[0].message
        if message.invalid_tool_calls and not message.tool_calls:
            call = message.invalid_tool_calls[0]
            raise OutputParserException(
                f"The arguments of {call['name']} are not valid JSON ({call.get('error')}). "
                "Send the call again with valid JSON arguments."
            )
        return super().parse_result(result, partial=partial)


class RunGuards(AsyncCallbackHandler):
    """Vetoes a repeated tool call or an oversized request (see the module docstring)."""

    raise_error = True  # an exception here ends the run instead of being logged

    def __init__(self, max_same_calls: int, budget: int | None, tool_tokens: int):
        self.max_same_calls, self.budget, self.tool_tokens = max_same_calls, budget, tool_tokens
        self.calls: dict[UUID | None, Counter[str]] = {}  # per executor run

    async def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        parent_run_id: UUID | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        made = self.calls.setdefault(parent_run_id, Counter())
        key = call_key(serialized["name"], inputs or {})
        if made[key] >= self.max_same_calls:
            raise RepeatedToolCallError(serialized["name"], inputs or {}, self.max_same_calls)
        made[key] += 1

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], **kwargs: Any
    ) -> None:
        if self.budget is None:
            return
        tokens = json_tokens(convert_to_openai_messages(messages[0])) + self.tool_tokens
        if tokens > self.budget:
            raise TokenBudgetExceededError(tokens, self.budget)

    async def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.calls.pop(run_id, None)

    async def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.calls.pop(run_id, None)


class ExecutorGuards:
    """The custom code for one executor: its guarded tools, its callbacks, its agent."""

    def __init__(
        self,
        settings: AgentSettings,
        approve: Callable[[str, dict[str, Any]], bool],
        confirm: Collection[str] = (),
    ):
        self.settings, self.approve, self.confirm = settings, approve, frozenset(confirm)
        self.breaker = CircuitBreaker(settings.breaker_threshold)
        self.callbacks: list[RunGuards] = []  # for the call's config, made by ``tools()``

    def _guarded(self, tool: ToolLike) -> Callable[..., Any]:
        name, timeout_s, breaker = tool.name, self.settings.tool_timeout_s, self.breaker

        async def run(**args: Any) -> Any:
            if name in self.confirm and not self.approve(name, args):
                return f"The user rejected {name}; it was not executed. Do not retry it."
            if breaker.is_open(name):
                return breaker.refusal(name)
            try:
                result = await asyncio.wait_for(tool.acall(**args), timeout_s)
            except Exception as exc:
                breaker.record(name, ok=False)
                if isinstance(exc, TimeoutError):
                    raise ToolException(f"{name} timed out after {timeout_s:g}s") from None
                raise ToolException(f"{name} failed ({type(exc).__name__}: {exc})") from exc
            breaker.record(name, ok=True)
            return result

        return run

    def tools(self, tools: Sequence[ToolLike]) -> list[StructuredTool]:
        """The scenario tools, guarded; the loop guard and the budget become callbacks."""
        structured = [validated_tool(tool, self._guarded(tool)) for tool in tools]
        tool_tokens = json_tokens([convert_to_openai_tool(t) for t in structured])  # static
        self.callbacks = [
            RunGuards(self.settings.max_same_tool_calls, self.settings.token_budget, tool_tokens)
        ]
        return structured

    def agent(self, llm: Any, tools: Sequence[StructuredTool], prompt: Any) -> RunnableSequence:
        """``create_tool_calling_agent`` with ``InvalidToolCallsParser`` as its last step."""
        stock = create_tool_calling_agent(llm, tools, prompt)
        return RunnableSequence(*stock.steps[:-1], InvalidToolCallsParser())

    def reset(self) -> None:
        """Close every breaker (a fresh service)."""
        self.breaker.reset()
