"""``create_agent`` configured for production: LangChain's built-in middleware, configured.

What each built-in does here, and the scenario limit it maps to:

==============================  ===========================================================
``recursion_limit``             ``max_steps``: LangGraph's own step limit, in the run config
(``agent_config``)              (``GraphRecursionError`` past it). A step is a model
                                superstep, a tools superstep and one per ``before_model`` /
                                ``after_model`` node, so the limit is N times that: N model
                                calls, as ``AgentExecutor``'s ``max_iterations=N``. No
                                ``ModelCallLimitMiddleware``: its two hooks would add two
                                graph nodes to every step for the same limit
``HumanInTheLoopMiddleware``    ``require_confirmation``: the run pauses (an interrupt)
+ ``InMemorySaver``             before a gated call; the caller resumes it with
                                ``Command(resume={"decisions": [...]})``; a rejected call
                                never runs and the model is told. Only agents with a gated
                                tool get it (it needs the checkpointer, which costs per step)
``ModelCallLimitMiddleware``    ``max_steps`` across the resumes of a reviewed run: each
(``thread_limit``, gated        resume is a new invocation with a fresh recursion limit, so
agents only)                    the thread (one per request) counts the model calls;
                                ``exit_behavior="error"`` (an exception says "cut off",
                                where ``"end"`` would make it look like an answer)
``ContextEditingMiddleware``    ``token_budget``: once the messages pass the budget less the
(``ClearToolUsesEdit``)         system prompt and tool schemas, every tool result so far is
                                replaced by a placeholder (``keep=0``: a single oversized
                                result must go too); LangChain's approximate count (chars/4)
``ToolErrorMiddleware``         a tool's exception becomes an error ``ToolMessage`` the model
                                can react to, instead of ending the run (outermost tool
                                wrapper, as LangChain's docs compose it with retries)
``ToolRetryMiddleware``         transient tool errors: 2 retries inside the tool node (0.1 s,
                                then 0.2 s, ±25 % jitter), ``on_failure="error"`` so the last
                                error reaches ``ToolErrorMiddleware``; a timeout is not
                                retried (it has already cost the full tool timeout)
``ModelRetryMiddleware``        what the openai SDK does not retry: a 200 whose body does not
                                parse (a cut or corrupt answer raises a bare
                                ``JSONDecodeError``) and an answer the custom guard finds cut
                                (``TruncatedResponseError``); only those (``retry_on``), since
                                ``ChatOpenAI(max_retries=...)`` already retries 408/409/429/
                                5xx, timeouts and connection errors with ``Retry-After`` and a
                                second layer would multiply those attempts. A streaming agent
                                (``streaming=True``) also retries a connection error or
                                timeout: the SDK retries only until the response headers, and
                                a stream can break after them
==============================  ===========================================================

Not used, and why: ``ToolCallLimitMiddleware`` — it caps the calls
per tool (or all tools) whatever their arguments, and no scenario limit is such a cap: as a
loop guard it would also stop legitimate paging (``max_steps``) and retries (``tool_flaky``).
``SummarizationMiddleware`` — it summarises with a model call, which would itself carry the
oversized context. The run deadline: LangGraph has none; the caller wraps ``ainvoke`` in
``asyncio.timeout`` (the engine does, as for every engine).

``build_create_agent_prod(..., custom=make_custom_middleware(settings, tools))`` appends the
custom middleware (``custom_middleware``) after the built-ins; without it, the built-ins
alone (the ``lc-create-agent-builtins`` variant).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import Any

import openai
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelRetryMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import SystemMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_baseline.common import AgentSettings
from langchain_baseline.guards import TruncatedResponseError


def report_tool_error(exc: Exception, request: Any) -> str:
    """What the model reads when a tool raised (after the retries)."""
    return f"Error: {request.tool_call['name']} failed ({type(exc).__name__}: {exc})."


def builtin_middleware(
    settings: AgentSettings,
    tools: Sequence[StructuredTool],
    system_prompt: str,
    confirm: Collection[str] = (),
    *,
    streaming: bool = False,
) -> list[AgentMiddleware]:
    """LangChain's built-in middleware, configured from one scenario's limits."""
    retry_on: tuple[type[Exception], ...] = (json.JSONDecodeError, TruncatedResponseError)
    if streaming:
        retry_on += (openai.APIConnectionError,)  # a stream broken after its headers
    middleware: list[AgentMiddleware] = [
        ModelRetryMiddleware(
            max_retries=2, retry_on=retry_on, on_failure="error", initial_delay=0.1
        ),
    ]
    if confirm:
        gated = {"allowed_decisions": ["approve", "reject"]}
        middleware += [
            # each resume is a new invocation with a fresh recursion limit; the thread (one
            # per request) keeps this count across them
            ModelCallLimitMiddleware(thread_limit=settings.max_iterations, exit_behavior="error"),
            HumanInTheLoopMiddleware(interrupt_on=dict.fromkeys(confirm, gated)),
        ]
    if settings.token_budget is not None:
        fixed = count_tokens_approximately([SystemMessage(system_prompt)], tools=list(tools))
        clear = ClearToolUsesEdit(trigger=settings.token_budget - fixed, keep=0)
        middleware.append(ContextEditingMiddleware(edits=[clear]))
    middleware += [
        ToolErrorMiddleware(report_tool_error),
        ToolRetryMiddleware(
            max_retries=2,
            retry_on=lambda exc: not isinstance(exc, TimeoutError),
            on_failure="error",
            initial_delay=0.1,
        ),
    ]
    return middleware


def build_create_agent_prod(
    llm: ChatOpenAI,
    tools: list[StructuredTool],
    system_prompt: str,
    settings: AgentSettings,
    *,
    confirm: Collection[str] = (),
    custom: Sequence[AgentMiddleware] = (),
    streaming: bool = False,
) -> Any:
    """``create_agent`` with the built-in middleware, then the ``custom`` middleware; the
    tools named in ``confirm`` need a human's approval."""
    builtins = builtin_middleware(settings, tools, system_prompt, confirm, streaming=streaming)
    middleware = [*builtins, *custom]
    return create_agent(
        llm,
        tools=tools,
        system_prompt=system_prompt,
        middleware=middleware,
        checkpointer=InMemorySaver() if confirm else None,
    )


def agent_config(agent: Any, settings: AgentSettings) -> dict[str, Any]:
    """The run config: ``max_steps`` as LangGraph's recursion limit (see the module
    docstring; a model-hook node adds a superstep to every step)."""
    hooks = sum(name.endswith((".before_model", ".after_model")) for name in agent.nodes)
    return {"recursion_limit": settings.max_iterations * (2 + hooks)}


def review(interrupts: Sequence[Any], approve: Callable[[str, dict[str, Any]], bool]) -> Command:
    """The ``Command`` resuming a run paused by ``HumanInTheLoopMiddleware``: one decision
    per gated call of the paused model turn."""
    (interrupt,) = interrupts  # batched mode: one interrupt per model turn
    decisions = [
        {"type": "approve"} if approve(action["name"], action["args"]) else {"type": "reject"}
        for action in interrupt.value["action_requests"]
    ]
    return Command(resume={"decisions": decisions})


async def ainvoke_reviewed(
    agent: Any,
    inputs: Any,
    config: dict[str, Any] | None,
    approve: Callable[[str, dict[str, Any]], bool],
) -> dict[str, Any]:
    """``agent.ainvoke``, answering every human-review interrupt with ``approve``."""
    result = await agent.ainvoke(inputs, config=config)
    while interrupts := result.get("__interrupt__"):
        result = await agent.ainvoke(review(interrupts, approve), config=config)
    return result
