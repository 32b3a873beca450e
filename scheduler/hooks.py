"""Typed hooks: named callables (sync or async) fired at fixed points with keyword arguments.

=============  ===========================================  ==============================
event          called with (keyword arguments)              may return
=============  ===========================================  ==============================
before_step    state, step: int                             -
after_step     state, step: StepRecord                      -
before_llm     state, messages: list[dict]                  -
after_llm      state, response: ChatResponse                -
before_tool    state, call: ToolCall, arguments: dict       Veto(reason) | Rewrite(args)
after_tool     state, result: ToolResult                    str: replaces the tool message
on_error       state, error: SchedulerError                 -
on_complete    state, result: RunResult                     -
=============  ===========================================  ==============================

A hook that raises — anything but a cancellation, ``SystemExit`` included — is recorded (on
``RunResult.hook_errors`` and as a ``hook_error`` event on the current span, with the event
and hook names) and the run goes on, unless the agent was built with
``AgentConfig(raise_hook_errors=True)``; then the run fails with reason ``hook_error``.
Errors in on_error and on_complete hooks are always only recorded.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, overload

from scheduler.errors import ConfigError, HookError, safe_str
from scheduler.types import Rewrite, ToolDecision, Veto

if TYPE_CHECKING:
    from scheduler.errors import SchedulerError
    from scheduler.state import RunState
    from scheduler.trace import Span
    from scheduler.types import ChatResponse, RunResult, StepRecord, ToolCall, ToolResult

HookEvent = Literal[
    "before_step",
    "after_step",
    "before_llm",
    "after_llm",
    "before_tool",
    "after_tool",
    "on_error",
    "on_complete",
]
EVENTS: tuple[str, ...] = HookEvent.__args__  # type: ignore[attr-defined]


_R = Awaitable[None] | None


class BeforeStep(Protocol):
    def __call__(self, *, state: RunState, step: int) -> _R: ...


class AfterStep(Protocol):
    def __call__(self, *, state: RunState, step: StepRecord) -> _R: ...


class BeforeLLM(Protocol):
    def __call__(self, *, state: RunState, messages: list[dict[str, Any]]) -> _R: ...


class AfterLLM(Protocol):
    def __call__(self, *, state: RunState, response: ChatResponse) -> _R: ...


class BeforeTool(Protocol):
    def __call__(
        self, *, state: RunState, call: ToolCall, arguments: dict[str, Any]
    ) -> Awaitable[ToolDecision | None] | ToolDecision | None: ...


class AfterTool(Protocol):
    def __call__(
        self, *, state: RunState, result: ToolResult
    ) -> Awaitable[str | None] | str | None: ...


class OnError(Protocol):
    def __call__(self, *, state: RunState, error: SchedulerError) -> _R: ...


class OnComplete(Protocol):
    def __call__(self, *, state: RunState, result: RunResult) -> _R: ...


Hook = (
    BeforeStep
    | AfterStep
    | BeforeLLM
    | AfterLLM
    | BeforeTool
    | AfterTool
    | OnError
    | OnComplete
    | Callable[..., Any]
)


_Entry = tuple[Callable[..., Any], bool, str]  # (hook, is a coroutine function, its name)


class Hooks:
    """The registered hooks, one list per event (empty lists cost one attribute read)."""

    __slots__ = (*EVENTS, "raise_errors")
    before_step: list[_Entry]
    after_step: list[_Entry]
    before_llm: list[_Entry]
    after_llm: list[_Entry]
    before_tool: list[_Entry]
    after_tool: list[_Entry]
    on_error: list[_Entry]
    on_complete: list[_Entry]

    def __init__(self, raise_errors: bool = False):
        for event in EVENTS:
            setattr(self, event, [])
        self.raise_errors = raise_errors

    def add(self, event: str, fn: Callable[..., Any]) -> None:
        if event not in EVENTS:
            raise ConfigError(f"unknown hook event {event!r}; valid events: {', '.join(EVENTS)}")
        if not callable(fn):
            raise ConfigError(f"hook for {event} is not callable: {fn!r}")
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        getattr(self, event).append((fn, inspect.iscoroutinefunction(fn), name))

    def remove(self, event: str, fn: Callable[..., Any]) -> None:
        entries = getattr(self, event)
        entries[:] = [entry for entry in entries if entry[0] is not fn]

    async def fire(self, event: str, state: RunState, span: Span | None, **kwargs: Any) -> Any:
        """Call the hooks of ``event`` in order. Returns the before_tool decision (a Veto
        stops at once; Rewrites chain) or the last non-None value for other events."""
        outcome = None
        for fn, is_async, name in getattr(self, event):
            try:
                value = fn(state=state, **kwargs)
                if is_async or inspect.isawaitable(value):
                    value = await value
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # SystemExit too: a hook never stops the service
                error = HookError(event, name, exc)
                state.hook_errors.append(error)
                if span is not None:
                    state.trace.event(
                        span,
                        "hook_error",
                        {
                            "hook.event": event,
                            "hook.name": name,
                            "exception.type": type(exc).__name__,
                            "exception.message": safe_str(exc),
                        },
                    )
                if self.raise_errors and event not in ("on_error", "on_complete"):
                    raise error from exc
                continue
            if value is None:
                continue
            if event == "before_tool":
                if isinstance(value, Veto):
                    return value
                if isinstance(value, Rewrite):
                    kwargs["arguments"] = value.arguments
            outcome = value
        return outcome


class HookRegistry:
    """``on(event, hook)``, typed per event: ``on("before_tool", fn)`` checks ``fn`` against
    ``BeforeTool`` (keyword arguments, what it may return). Chainable."""

    hooks: Hooks

    @overload
    def on(self, event: Literal["before_step"], callback: BeforeStep) -> Self: ...
    @overload
    def on(self, event: Literal["after_step"], callback: AfterStep) -> Self: ...
    @overload
    def on(self, event: Literal["before_llm"], callback: BeforeLLM) -> Self: ...
    @overload
    def on(self, event: Literal["after_llm"], callback: AfterLLM) -> Self: ...
    @overload
    def on(self, event: Literal["before_tool"], callback: BeforeTool) -> Self: ...
    @overload
    def on(self, event: Literal["after_tool"], callback: AfterTool) -> Self: ...
    @overload
    def on(self, event: Literal["on_error"], callback: OnError) -> Self: ...
    @overload
    def on(self, event: Literal["on_complete"], callback: OnComplete) -> Self: ...
    def on(self, event: HookEvent, callback: Hook) -> Self:
        """Register a hook (see the table above for the events and their arguments)."""
        self.hooks.add(event, callback)
        return self
