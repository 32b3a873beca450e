"""The custom middleware a LangChain user writes for ``create_agent`` where no built-in exists.

Each piece is the short ``@wrap_tool_call`` / ``@wrap_model_call`` / ``@after_model``
function (or an ``AgentMiddleware`` subclass, where it keeps state) of LangChain's middleware
guide, for one scenario limit:

======================  ==================================================================
``tool_timeout``        ``tool_timeout_s``: cuts a tool call; the ``TimeoutError`` goes on
                        to ``ToolErrorMiddleware``, which tells the model
``CircuitBreaker-``     ``breaker_threshold``: after N consecutive failures of a tool, its
``Middleware``          calls are answered "unavailable" without running it (60 s cooldown)
``token_budget``        ``token_budget``: raises ``TokenBudgetExceededError`` before a request
                        over the budget is sent (after ``ContextEditingMiddleware`` shrank it)
``loop_guard``          ``max_same_tool_calls``: raises ``RepeatedToolCallError`` when the
                        model asks again for a call it already made N times
``report_invalid_``     a model turn whose tool calls did not parse: answer each with an
``tool_calls``          error ``ToolMessage`` and call the model again (create_agent would end
                        the run there, as if the empty turn were the answer)
======================  ==================================================================

``make_custom_middleware(settings, tools)`` returns them in the order they must follow the
built-ins (``production_agent``): the tool wrappers inside the retry and error middleware,
the budget inside context editing, the ``after_model`` hooks first (LangChain runs
``after_model`` hooks in reverse order). They are written for ``ainvoke`` / ``astream``
(async hooks, as the agents here run), which is what a service runs.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

from langchain.agents.middleware import (
    AgentMiddleware,
    after_model,
    wrap_model_call,
    wrap_tool_call,
)
from langchain_core.messages import AIMessage, ToolMessage, convert_to_openai_messages
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_baseline.common import AgentSettings
from langchain_baseline.guards import (
    CircuitBreaker,
    RepeatedToolCallError,
    TokenBudgetExceededError,
    call_key,
    json_tokens,
)


def tool_timeout(seconds: float) -> AgentMiddleware:
    """Cut every tool call at ``seconds``."""

    @wrap_tool_call
    async def tool_timeout(request: Any, handler: Any) -> Any:
        try:
            return await asyncio.wait_for(handler(request), seconds)
        except TimeoutError:
            name = request.tool_call["name"]
            raise TimeoutError(f"{name} timed out after {seconds:g}s") from None

    return tool_timeout


class CircuitBreakerMiddleware(AgentMiddleware):
    """Stop calling a tool that keeps failing (its exceptions, timeouts included)."""

    def __init__(self, threshold: int):
        super().__init__()
        self.breaker = CircuitBreaker(threshold)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        name = request.tool_call["name"]
        if self.breaker.is_open(name):
            refusal = self.breaker.refusal(name)
            return ToolMessage(refusal, tool_call_id=request.tool_call["id"], status="error")
        try:
            result = await handler(request)
        except Exception:
            self.breaker.record(name, ok=False)
            raise
        self.breaker.record(name, ok=True)
        return result

    def reset(self) -> None:
        """Close every breaker (a fresh service)."""
        self.breaker.reset()


def token_budget(budget: int, tools: Sequence[BaseTool]) -> AgentMiddleware:
    """Refuse to send a request of more than ``budget`` prompt tokens."""
    tool_tokens = json_tokens([convert_to_openai_tool(t) for t in tools])  # static: once

    @wrap_model_call
    async def token_budget(request: Any, handler: Any) -> Any:
        system = [request.system_message] if request.system_message else []
        tokens = json_tokens(convert_to_openai_messages([*system, *request.messages]))
        if tokens + tool_tokens > budget:
            raise TokenBudgetExceededError(tokens + tool_tokens, budget)
        return await handler(request)

    return token_budget


def loop_guard(max_same_calls: int) -> AgentMiddleware:
    """End the run when the model repeats a call (same tool, same arguments) too often."""

    @after_model
    async def loop_guard(state: Any, runtime: Any) -> None:
        *earlier, last = state["messages"]
        made = Counter(
            call_key(c["name"], c["args"])
            for m in earlier
            if isinstance(m, AIMessage)
            for c in m.tool_calls
        )
        for call in getattr(last, "tool_calls", None) or ():
            if made[call_key(call["name"], call["args"])] >= max_same_calls:
                raise RepeatedToolCallError(call["name"], call["args"], max_same_calls)

    return loop_guard


@after_model(can_jump_to=["model"])
async def report_invalid_tool_calls(state: Any, runtime: Any) -> dict[str, Any] | None:
    """Tell the model its tool call did not parse, and let it try again."""
    last = state["messages"][-1]
    if not isinstance(last, AIMessage) or last.tool_calls or not last.invalid_tool_calls:
        return None
    errors = [
        ToolMessage(
            f"Error: the arguments of {call['name']} are not valid JSON ({call.get('error')}). "
            "Send the call again with valid JSON arguments.",
            tool_call_id=call["id"],
            status="error",
        )
        for call in last.invalid_tool_calls
    ]
    return {"messages": errors, "jump_to": "model"}


def make_custom_middleware(
    settings: AgentSettings, tools: Sequence[BaseTool]
) -> list[AgentMiddleware]:
    """The custom middleware for one scenario's limits, in its place after the built-ins."""
    middleware = [
        CircuitBreakerMiddleware(settings.breaker_threshold),
        tool_timeout(settings.tool_timeout_s),
        loop_guard(settings.max_same_tool_calls),
        report_invalid_tool_calls,
    ]
    if settings.token_budget is not None:
        middleware.append(token_budget(settings.token_budget, tools))
    return middleware
