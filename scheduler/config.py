"""AgentConfig: every knob of the loop, with the article's defaults. ``None`` disables a limit."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from scheduler.errors import ConfigError
from scheduler.types import Budget

Redact = Callable[[str, Any], Any]  # (attribute key, value) -> the value to export


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """How a LightweightAgent behaves. LLM retries (429 / 5xx / timeouts) are the client's
    business (``OpenAIChatClient(max_retries=...)``): they are not steps."""

    name: str = "agent"
    system_prompt: str | None = None
    model: str | None = None  # overrides the client's model for this agent's requests
    temperature: float | None = 0.1
    model_params: dict[str, Any] = field(default_factory=dict)  # extra request fields

    # budgets, checked at fixed points (before a request, after a response, before a tool)
    max_steps: int | None = 15  # LLM steps; then ABORTED, reason max_steps
    token_budget: int | None = 12_000  # input tokens of any one request (exact count)
    max_total_tokens: int | None = None  # input + output tokens over the run (server usage)
    # how token_budget is checked: "bounded" tokenizes (tiktoken) only when the request's
    # UTF-8 size does not already prove it fits; "exact" counts every request; "server"
    # trusts the server's usage only (no tokenizer)
    token_counting: Literal["bounded", "exact", "server"] = "bounded"
    max_same_tool_calls: int | None = 2  # same tool + same arguments executed at most N times
    max_blocked_calls: int | None = 2  # repeated calls refused before ABORTED (repeated_calls)

    # the whole request (this agent, its handoffs, the agents it runs as tools): the Budget
    # of a request this agent is asked first; run(..., budget=) overrides it per request
    budget: Budget = field(default_factory=Budget)

    # time
    tool_timeout: float | None = 30.0  # per call, unless the ToolSpec sets its own
    llm_timeout: float | None = 20.0  # per attempt: a plain answer; a stream's start and idle gaps
    llm_deadline: float | None = 300.0  # per LLM call, retries and backoff included

    # tools
    parallel_tool_calls: bool = True  # run the calls of one answer concurrently
    breaker_threshold: int | None = 3  # consecutive failures that open a tool's circuit
    breaker_cooldown_s: float = 60.0
    clock: Callable[[], float] = time.monotonic  # the breakers' clock (inject in tests)

    # behaviour
    summarize_on_max_steps: bool = True  # one last LLM call (tools disabled) for a summary
    stream: bool = False  # run() uses streamed LLM calls (stream() always does)
    raise_hook_errors: bool = False  # a raising hook fails the run (reason hook_error)
    memory: bool = False  # keep the conversation across run() calls
    memory_max_tokens: int | None = None  # default: half the token_budget
    trace_last_messages: int | None = None  # messages kept on each chat span (None: all)
    trace_clock: Callable[[], float] = time.perf_counter
    trace_max_attribute_chars: int | None = 16_384  # per attribute when exported (None: all)
    trace_redact: Redact | None = None  # applied to every attribute rendered or exported

    def __post_init__(self) -> None:
        positive = (
            "max_steps",
            "token_budget",
            "max_total_tokens",
            "max_same_tool_calls",
            "breaker_threshold",
            "memory_max_tokens",
        )
        for name in positive:
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 1):
                raise ConfigError(
                    f"AgentConfig.{name} must be a positive integer or None, not {value!r}"
                )
        if self.max_blocked_calls is not None and self.max_blocked_calls < 0:
            raise ConfigError(
                f"AgentConfig.max_blocked_calls must be >= 0 or None, not {self.max_blocked_calls!r}"
            )
        if self.trace_max_attribute_chars is not None and self.trace_max_attribute_chars < 64:
            raise ConfigError("AgentConfig.trace_max_attribute_chars must be >= 64 or None")
        for name in ("tool_timeout", "llm_timeout", "llm_deadline"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise ConfigError(f"AgentConfig.{name} must be > 0 or None, not {value!r}")
        if self.breaker_cooldown_s < 0:
            raise ConfigError("AgentConfig.breaker_cooldown_s must be >= 0")
        if self.token_counting not in ("bounded", "exact", "server"):
            raise ConfigError(
                "AgentConfig.token_counting must be 'bounded', 'exact' or 'server', "
                f"not {self.token_counting!r}"
            )

    def request_params(self) -> dict[str, Any]:
        """The fields added to every chat request."""
        params: dict[str, Any] = {}
        if self.model is not None:
            params["model"] = self.model
        if self.temperature is not None:
            params["temperature"] = self.temperature
        params.update(self.model_params)
        return params
