"""Exceptions raised by the scheduler. One root, typed subclasses that carry their data.

    SchedulerError                      root: ``except SchedulerError`` catches them all
    ├── ConfigError                     bad configuration or API misuse (raised to the caller)
    ├── InvalidTransition               a status change the state machine forbids (a bug)
    ├── LimitExceeded                   a budget stopped the run: status ABORTED
    │   ├── MaxStepsExceeded                max_steps reached without a final answer
    │   ├── TokenBudgetExceeded             the next request would exceed token_budget
    │   ├── TotalTokensExceeded             tokens spent in the run exceeded max_total_tokens
    │   └── RepeatedCallsExceeded           the LLM kept repeating calls it was told to stop
    ├── LLMError                        the model could not answer: status FAILED
    │   ├── LLMStatusError                  an HTTP error status (after retries, if retryable)
    │   ├── LLMTimeout                      no complete answer within the timeout
    │   ├── LLMConnectionError              the transport failed (DNS, refused, reset...)
    │   └── LLMResponseError                a body or SSE stream that is not a chat completion
    ├── ToolError                       a tool call went wrong: reported to the LLM, run goes on
    │   ├── ToolNotFound                    the LLM named a tool that is not registered
    │   ├── ToolArgumentsError              malformed JSON or arguments violating the schema
    │   ├── ToolTimeout                     the handler did not finish within its timeout
    │   ├── ToolExecutionError              the handler raised
    │   ├── CircuitOpen                     the tool's circuit breaker refuses calls for now
    │   ├── RepeatedToolCall                same tool, same arguments, too many times
    │   ├── ToolVetoed                      a before_tool hook refused the call
    │   └── ConfirmationDenied              the approver said no (or there is no approver)
    └── HookError                       a hook raised (recorded; fatal only if configured)

``ToolError`` instances never escape ``run()``: they become the tool message the LLM reads
and are kept on the ``ToolResult`` and in the trace. ``LimitExceeded`` and ``LLMError`` end
the run; ``RunResult.error`` holds them and ``RunResult.reason`` says which it was.
"""

from __future__ import annotations


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


# -- the LLM -------------------------------------------------------------------------------


class LLMError(SchedulerError):
    """The LLM could not produce an answer. ``attempts`` counts the HTTP requests made."""

    def __init__(self, message: str, *, attempts: int = 1):
        self.attempts = attempts
        super().__init__(message)

    def __str__(self) -> str:
        message = super().__str__()
        return f"{message} (after {self.attempts} attempts)" if self.attempts > 1 else message


class LLMStatusError(LLMError):
    def __init__(
        self, status_code: int, message: str, *, attempts: int = 1, retry_after: float | None = None
    ):
        self.status_code, self.message, self.retry_after = status_code, message, retry_after
        super().__init__(f"HTTP {status_code}: {message}", attempts=attempts)


class LLMTimeout(LLMError):
    def __init__(self, timeout_s: float | None, *, attempts: int = 1):
        self.timeout_s = timeout_s
        super().__init__(f"LLM call timed out after {timeout_s}s", attempts=attempts)


class LLMConnectionError(LLMError):
    pass


class LLMResponseError(LLMError):
    pass


# -- tools ---------------------------------------------------------------------------------


class ToolError(SchedulerError):
    """A tool call that did not produce a result; its message is what the LLM is told."""

    status = "error"

    def __init__(self, tool_name: str, message: str):
        self.tool_name = tool_name
        super().__init__(message)


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
    def __init__(self, tool_name: str, cause: BaseException):
        self.cause = cause
        super().__init__(tool_name, f"tool {tool_name!r} failed: {type(cause).__name__}: {cause}")


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
        super().__init__(f"hook {hook_name!r} on {event} raised {type(cause).__name__}: {cause}")
