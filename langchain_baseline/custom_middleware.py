"""The custom middleware a LangChain user writes for ``create_agent`` where no built-in exists.

Two ``AgentMiddleware`` classes, one per hook, written the way an expert keeps a graph lean:
each ``wrap_*`` layer costs a ``langsmith.traceable`` span per call and each
``before_model`` / ``after_model`` hook a graph node per step, so the guards share one layer
per hook and add no node.

=====================  ===================================================================
``ModelCallGuards``    one ``wrap_model_call``, inside ``ContextEditingMiddleware``:
                       ``token_budget`` — raises ``TokenBudgetExceededError`` before a request
                       over the budget is sent, counting each message once per run (the
                       counts live in the run's state, ``UntrackedValue``: never
                       checkpointed); ``max_same_tool_calls`` — raises
                       ``RepeatedToolCallError`` when the answer repeats a call (same tool,
                       same arguments) already made N times; an answer without a finish reason
                       (a stream cut short: the openai SDK raises nothing) — raises
                       ``TruncatedResponseError``, which ``ModelRetryMiddleware`` retries; a turn
                       whose only tool calls did not parse — jumps back to the model. LangChain itself answers such
                       calls with an error ``ToolMessage`` before the next model call
                       (``_patch_invalid_tool_calls``); only the jump is missing, since
                       ``create_agent`` would end the run as if the empty turn were the answer
``ToolCallGuards``     one ``wrap_tool_call``, inside the retries: ``breaker_threshold`` — after
                       N consecutive failures of a tool its calls are answered "unavailable"
                       without running it (60 s cooldown); ``tool_timeout_s`` — cuts a call,
                       the ``TimeoutError`` going on to ``ToolErrorMiddleware``
=====================  ===================================================================

Both are written for ``ainvoke`` / ``astream`` (async hooks), which is what a service runs.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, ExtendedModelResponse
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, ToolMessage, convert_to_openai_messages
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.types import Command

from langchain_baseline.common import AgentSettings
from langchain_baseline.guards import (
    CircuitBreaker,
    RepeatedToolCallError,
    TokenBudgetExceededError,
    TruncatedResponseError,
    call_key,
    json_tokens,
)

# a message's tokens, by (id, content): context editing keeps the id and replaces the content
TokenCounts = dict[tuple[str | None, str], int]


class GuardState(AgentState):
    """The run's token counts, kept out of the checkpoint and of the agent's output."""

    token_counts: NotRequired[Annotated[TokenCounts, UntrackedValue, PrivateStateAttr]]


class ModelCallGuards(AgentMiddleware):
    """Token budget, loop guard, cut answers and the invalid-call jump, in one
    ``wrap_model_call``."""

    state_schema = GuardState

    def __init__(
        self,
        settings: AgentSettings,
        tools: Sequence[BaseTool],
        system_prompt: str | None = None,
    ):
        super().__init__()
        self.budget, self.max_same_calls = settings.token_budget, settings.max_same_tool_calls
        self.system_prompt = system_prompt
        # static per agent, counted once: the tool schemas, the system prompt, the list's "[]"
        self.fixed = json_tokens([convert_to_openai_tool(t) for t in tools]) + 2
        self.system_tokens = self._count(
            system_prompt and {"role": "system", "content": system_prompt}
        )

    @staticmethod
    def _count(message: Any) -> int:
        # the message as JSON, and its ", " in the list: never less than the API bills
        return json_tokens(message) + 1 if message else 0

    def _request_tokens(self, request: Any, counts: TokenCounts) -> tuple[int, TokenCounts]:
        system = request.system_message
        if system is None:
            total = self.fixed
        elif system.content == self.system_prompt:
            total = self.fixed + self.system_tokens
        else:
            total = self.fixed + self._count(convert_to_openai_messages(system))
        new: TokenCounts = {}
        for message in request.messages:
            content = message.content
            key = (message.id, content) if isinstance(content, str) else None
            tokens = counts.get(key) if key else None
            if tokens is None:
                tokens = self._count(convert_to_openai_messages(message))
                if key:
                    new[key] = tokens
            total += tokens
        return total, new

    def _check_repeats(self, earlier: Sequence[Any], answer: AIMessage) -> None:
        made = Counter(
            call_key(c["name"], c["args"])
            for m in earlier
            if isinstance(m, AIMessage)
            for c in m.tool_calls
        )
        for call in answer.tool_calls:
            if made[call_key(call["name"], call["args"])] >= self.max_same_calls:
                raise RepeatedToolCallError(call["name"], call["args"], self.max_same_calls)

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        update: dict[str, Any] = {}
        if self.budget is not None:
            counts = request.state.get("token_counts") or {}
            tokens, new = self._request_tokens(request, counts)
            if tokens > self.budget:
                raise TokenBudgetExceededError(tokens, self.budget)
            if new:
                update["token_counts"] = {**counts, **new}
        response = await handler(request)
        answer = next((m for m in response.result if isinstance(m, AIMessage)), None)
        if answer is not None:
            if answer.response_metadata.get("finish_reason") is None:
                raise TruncatedResponseError(answer.text)
            self._check_repeats(request.messages, answer)
            if answer.invalid_tool_calls and not answer.tool_calls:
                update["jump_to"] = "model"  # LangChain answers the invalid calls itself
        return ExtendedModelResponse(response, Command(update=update)) if update else response


class ToolCallGuards(AgentMiddleware):
    """A per-tool circuit breaker and a timeout, in one ``wrap_tool_call``."""

    def __init__(self, threshold: int, timeout_s: float):
        super().__init__()
        self.breaker, self.timeout_s = CircuitBreaker(threshold), timeout_s

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        name = request.tool_call["name"]
        if self.breaker.is_open(name):
            refusal = self.breaker.refusal(name)
            return ToolMessage(refusal, tool_call_id=request.tool_call["id"], status="error")
        try:
            result = await asyncio.wait_for(handler(request), self.timeout_s)
        except TimeoutError:
            self.breaker.record(name, ok=False)
            raise TimeoutError(f"{name} timed out after {self.timeout_s:g}s") from None
        except Exception:
            self.breaker.record(name, ok=False)
            raise
        self.breaker.record(name, ok=True)
        return result

    def reset(self) -> None:
        """Close every breaker (a fresh service)."""
        self.breaker.reset()


def make_custom_middleware(
    settings: AgentSettings, tools: Sequence[BaseTool], system_prompt: str | None = None
) -> list[AgentMiddleware]:
    """The custom middleware for one scenario's limits, in its place after the built-ins."""
    return [
        ModelCallGuards(settings, tools, system_prompt),
        ToolCallGuards(settings.breaker_threshold, settings.tool_timeout_s),
    ]
