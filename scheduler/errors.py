"""Exceptions raised by the scheduler. One root, typed subclasses that carry their data.

    SchedulerError                      root: ``except SchedulerError`` catches them all
    ├── ConfigError                     bad configuration or API misuse (raised to the caller)
    ├── InvalidTransition               a status change the state machine forbids (a bug)
    ├── LimitExceeded                   a budget stopped the run: status ABORTED
    │   ├── MaxStepsExceeded                max_steps reached without a final answer
    │   ├── TokenBudgetExceeded             the next request would exceed token_budget
    │   ├── TotalTokensExceeded             tokens spent in the run exceeded max_total_tokens
    │   ├── RepeatedCallsExceeded           the LLM kept repeating calls it was told to stop
    │   └── RequestBudgetExceeded           the request's shared Budget ran out (any agent)
    │       ├── RequestStepsExceeded            LLM steps of all the request's agents
    │       ├── RequestTokensExceeded           tokens of all the request's agents
    │       ├── RequestTimeExceeded             the request's wall time
    │       └── MaxDepthExceeded                handoffs / agents-as-tools nested too deep
    ├── LLMError                        the model could not answer: status FAILED
    │   ├── LLMStatusError                  an HTTP error status (after retries, if retryable)
    │   ├── LLMTimeout                      no answer within the timeout, idle timeout or deadline
    │   ├── LLMConnectionError              the transport failed (DNS, refused, reset...)
    │   ├── LLMResponseError                a body or SSE stream that is not a chat completion
    │   └── LLMStreamInterrupted            a stream broke after text reached a consumer
    ├── ToolError                       a tool call went wrong: reported to the LLM, run goes on
    │   ├── ToolNotFound                    the LLM named a tool that is not registered
    │   ├── ToolArgumentsError              malformed JSON or arguments violating the schema
    │   ├── ToolTimeout                     the handler did not finish within its timeout
    │   ├── ToolExecutionError              the handler raised (the LLM sees only the type)
    │   ├── ToolInputError                  the handler blamed its input (raised by your tool)
    │   ├── CircuitOpen                     the tool's circuit breaker refuses calls for now
    │   ├── RepeatedToolCall                same tool, same arguments, too many times
    │   ├── ToolVetoed                      a before_tool hook refused the call
    │   └── ConfirmationDenied              the approver said no (or there is no approver)
    └── HookError                       a hook raised (recorded; fatal only if configured)

Raise ``ToolInputError("order ZZ1 not found")`` from a tool when the caller's input is at
fault: the LLM reads the message as is and the tool's circuit breaker does not count it.

``ToolError`` instances never escape ``run()``: they become the tool message the LLM reads
and are kept on the ``ToolResult`` and in the trace. ``LimitExceeded`` and ``LLMError`` end
the run; ``RunResult.error`` holds them and ``RunResult.reason`` says which it was.
"""

from __future__ import annotations

from typing import ClassVar


def safe_str(value: object) -> str:
    """``str(value)`` that cannot raise (a tool's objects may have a broken ``__str__``)."""
    try:
        return str(value)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return f"<{type(value).__name__} object (str() failed)>"


class SchedulerError(Exception):
    """Root of every exception the scheduler raises."""


class ConfigError(SchedulerError):
    """A configuration value or an API call that cannot work."""


class InvalidTransition(SchedulerError):
    """The state machine refused a status change."""

    def __init__(self, current: str, target: str, allowed: frozenset[str] | set[str]):
        self.current, self.target = current, target
        self.allowed = frozenset(allowed)
        choices = ", ".join(sorted(self.allowed)) or "none (terminal status)"
        super().__init__(
            f"invalid transition {current} -> {target}; allowed from {current}: {choices}"
        )


# -- budgets -------------------------------------------------------------------------------


class LimitExceeded(SchedulerError):
    """A budget stopped the run. ``reason`` is the run's termination reason."""

    reason = "limit"

    def __init__(self, message: str, *, limit: int, value: int):
        self.limit, self.value = limit, value
        super().__init__(message)


class MaxStepsExceeded(LimitExceeded):
    reason = "max_steps"

    def __init__(self, max_steps: int):
        self.max_steps = max_steps
        super().__init__(
            f"max_steps {max_steps} reached without a final answer",
            limit=max_steps,
            value=max_steps,
        )


class TokenBudgetExceeded(LimitExceeded):
    reason = "token_budget"

    def __init__(self, budget: int, input_tokens: int, *, counted: str = "exact"):
        self.budget, self.input_tokens, self.counted = budget, input_tokens, counted
        super().__init__(
            f"token budget {budget} exceeded (input_tokens={input_tokens}, {counted})",
            limit=budget,
            value=input_tokens,
        )


class TotalTokensExceeded(LimitExceeded):
    reason = "token_budget"

    def __init__(self, limit: int, total_tokens: int):
        self.total_tokens = total_tokens
        super().__init__(
            f"total token limit {limit} exceeded (total_tokens={total_tokens})",
            limit=limit,
            value=total_tokens,
        )


class RepeatedCallsExceeded(LimitExceeded):
    reason = "repeated_calls"

    def __init__(self, tool_name: str, blocked: int, limit: int):
        self.tool_name, self.blocked = tool_name, blocked
        super().__init__(
            f"the LLM repeated blocked tool calls {blocked} times (limit {limit}; last: {tool_name})",
            limit=limit,
            value=blocked,
        )


class RequestBudgetExceeded(LimitExceeded):
    """A limit of the request's shared ``Budget``: every agent of the request stops."""


class RequestStepsExceeded(RequestBudgetExceeded):
    reason = "max_steps"

    def __init__(self, max_steps: int):
        super().__init__(
            f"request step budget {max_steps} spent across agents", limit=max_steps, value=max_steps
        )


class RequestTokensExceeded(RequestBudgetExceeded):
    reason = "token_budget"

    def __init__(self, limit: int, total_tokens: int):
        self.total_tokens = total_tokens
        super().__init__(
            f"request token budget {limit} exceeded across agents (total_tokens={total_tokens})",
            limit=limit,
            value=total_tokens,
        )


class RequestTimeExceeded(RequestBudgetExceeded):
    reason = "time_limit"

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        super().__init__(f"request time budget {timeout_s:g}s spent", limit=0, value=0)


class MaxDepthExceeded(RequestBudgetExceeded):
    reason = "max_depth"

    def __init__(self, max_depth: int, depth: int):
        super().__init__(
            f"agents nested {depth} deep, more than the request's max_depth {max_depth}",
            limit=max_depth,
            value=depth,
        )


# -- the LLM -------------------------------------------------------------------------------


class LLMError(SchedulerError):
    """The LLM could not produce an answer. ``attempts`` counts the HTTP requests made;
    ``note`` says why the client stopped retrying, when that is not obvious."""

    def __init__(self, message: str, *, attempts: int = 1, note: str | None = None):
        self.attempts = attempts
        self.note = note
        super().__init__(message)

    def __str__(self) -> str:
        message = super().__str__()
        if self.note:
            message = f"{message} ({self.note})"
        return f"{message} (after {self.attempts} attempts)" if self.attempts > 1 else message


class LLMStatusError(LLMError):
    def __init__(
        self, status_code: int, message: str, *, attempts: int = 1, retry_after: float | None = None
    ):
        self.status_code, self.message, self.retry_after = status_code, message, retry_after
        super().__init__(f"HTTP {status_code}: {message}", attempts=attempts)


class LLMTimeout(LLMError):
    """``kind``: ``attempt`` (a plain answer took longer than the timeout), ``idle`` (a stream
    sent nothing for that long) or ``deadline`` (the call's overall deadline passed)."""

    _MESSAGES: ClassVar[dict[str, str]] = {
        "attempt": "LLM call timed out after {}s",
        "idle": "the stream sent no data for {}s",
        "deadline": "LLM call exceeded its deadline of {}s",
    }

    def __init__(self, timeout_s: float | None, *, attempts: int = 1, kind: str = "attempt"):
        self.timeout_s, self.kind = timeout_s, kind
        super().__init__(self._MESSAGES[kind].format(timeout_s), attempts=attempts)


class LLMConnectionError(LLMError):
    pass


class LLMResponseError(LLMError):
    pass


class LLMStreamInterrupted(LLMError):
    """A stream failed after ``delivered_chars`` characters had reached the consumer. It is
    not retried (a retry would show them twice, or splice two answers); ``cause`` is the
    failure that would otherwise have been retried."""

    def __init__(self, delivered_chars: int, cause: LLMError, *, attempts: int = 1):
        self.delivered_chars, self.cause = delivered_chars, cause
        super().__init__(
            f"the stream broke after {delivered_chars} characters had been delivered "
            f"({cause}); not retried: a retry would repeat them",
            attempts=attempts,
        )


# -- tools ---------------------------------------------------------------------------------


class ToolError(SchedulerError):
    """A tool call that did not produce a result; its message is what the LLM is told."""

    status = "error"

    def __init__(self, tool_name: str, message: str):
        self.tool_name = tool_name
        super().__init__(message)

    def for_llm(self, expose: bool) -> str:
        """The text of the tool message (``expose``: the tool's own exception text may go)."""
        return str(self)


class ToolNotFound(ToolError):
    status = "not_found"

    def __init__(self, tool_name: str, available: list[str]):
        self.available = available
        names = ", ".join(available) or "none"
        super().__init__(tool_name, f"unknown tool {tool_name!r}; available tools: {names}")


class ToolArgumentsError(ToolError):
    status = "invalid_arguments"

    def __init__(self, tool_name: str, errors: list[str]):
        self.errors = errors
        super().__init__(tool_name, f"invalid arguments for {tool_name!r}: " + "; ".join(errors))


class ToolTimeout(ToolError):
    status = "timeout"

    def __init__(self, tool_name: str, timeout_s: float):
        self.timeout_s = timeout_s
        super().__init__(tool_name, f"tool {tool_name!r} timed out after {timeout_s:g}s")


class ToolExecutionError(ToolError):
    """The handler raised ``cause``. ``str()`` has the full text (for logs and the trace);
    the LLM is told only the exception type unless the tool sets ``expose_errors``."""

    def __init__(self, tool_name: str, cause: BaseException):
        self.cause = cause
        self.safe_message = f"tool {tool_name!r} failed: {type(cause).__name__}"
        super().__init__(tool_name, f"{self.safe_message}: {safe_str(cause)}")

    def for_llm(self, expose: bool) -> str:
        return str(self) if expose else self.safe_message


class ToolInputError(ToolError):
    """Raise it from a tool when the *caller's input* is at fault ("order ZZ1 not found").
    The message is what the LLM reads; the tool's circuit breaker does not count it."""

    status = "input_error"

    def __init__(self, message: str, *, tool_name: str = ""):
        super().__init__(tool_name, message)


class CircuitOpen(ToolError):
    status = "circuit_open"

    def __init__(self, tool_name: str, failures: int, retry_in_s: float):
        self.failures, self.retry_in_s = failures, retry_in_s
        super().__init__(
            tool_name,
            f"tool {tool_name!r} is temporarily unavailable (circuit open after {failures} "
            f"consecutive failures; retry in {retry_in_s:.0f}s). Do not call it again now.",
        )


class RepeatedToolCall(ToolError):
    status = "blocked"

    def __init__(self, tool_name: str, count: int, limit: int):
        self.count, self.limit = count, limit
        super().__init__(
            tool_name,
            f"{tool_name!r} was already called {count} times with these same arguments "
            f"(limit {limit}); its results are above. Do not repeat this call: use what you "
            "have or try different arguments.",
        )


class ToolVetoed(ToolError):
    status = "vetoed"

    def __init__(self, tool_name: str, reason: str):
        self.reason = reason
        super().__init__(tool_name, f"the call to {tool_name!r} was refused: {reason}")


class ConfirmationDenied(ToolError):
    status = "denied"

    def __init__(self, tool_name: str, reason: str):
        self.reason = reason
        super().__init__(tool_name, f"the user did not approve the call to {tool_name!r}: {reason}")


# -- hooks ---------------------------------------------------------------------------------


class HookError(SchedulerError):
    """A hook raised. Recorded in the trace and on the result; fatal only if configured."""

    def __init__(self, event: str, hook_name: str, cause: BaseException):
        self.event, self.hook_name, self.cause = event, hook_name, cause
        super().__init__(
            f"hook {hook_name!r} on {event} raised {type(cause).__name__}: {safe_str(cause)}"
        )
