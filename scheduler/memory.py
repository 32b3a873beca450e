"""Conversation memory across run() calls, bounded by a token budget.

After each run the new messages (user input, tool calls, tool results, answer) are added;
then whole turns — a user message and everything up to the next one — are dropped, oldest
first, until the memory fits ``max_tokens``. The latest turn is always kept. Tool calls are
never separated from their results (an assistant message whose calls lack results, as after
a cancellation, is dropped) so the next request is always a valid conversation.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Message = dict[str, Any]


def _approx_tokens(message: Message) -> int:  # used only when tiktoken is unavailable
    return 3 + len(json.dumps(message, ensure_ascii=False, default=str)) // 4


class ConversationMemory:
    """The messages of past runs (system prompt excluded: the agent adds its own)."""

    def __init__(
        self, max_tokens: int | None = None, count_tokens: Callable[[Message], int] | None = None
    ):
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens or _approx_tokens
        self.messages: list[Message] = []

    def __len__(self) -> int:
        return len(self.messages)

    def tokens(self) -> int:
        return sum(self.count_tokens(m) for m in self.messages)

    def clear(self) -> None:
        self.messages.clear()

    def save(self, new_messages: list[Message]) -> None:
        """Append one run's new messages, then trim to the budget."""
        self.messages.extend(m for m in _complete_pairs(new_messages) if m.get("role") != "system")
        self.trim()

    def trim(self) -> None:
        if self.max_tokens is None:
            return
        turns = _turns(self.messages)
        sizes = [sum(self.count_tokens(m) for m in turn) for turn in turns]
        total = sum(sizes)
        while len(turns) > 1 and total > self.max_tokens:
            total -= sizes.pop(0)
            turns.pop(0)
        self.messages = [m for turn in turns for m in turn]


def _turns(messages: list[Message]) -> list[list[Message]]:
    turns: list[list[Message]] = []
    for message in messages:
        if message.get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def _complete_pairs(messages: list[Message]) -> list[Message]:
    """Drop assistant tool-call messages whose results are missing (and orphan results)."""
    out: list[Message] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not calls:
            if message.get("role") != "tool":
                out.append(message)
            i += 1
            continue
        wanted = {c["id"] for c in calls}
        j = i + 1
        while j < len(messages) and messages[j].get("role") == "tool":
            j += 1
        results = messages[i + 1 : j]
        if {r.get("tool_call_id") for r in results} >= wanted:
            out.append(message)
            out.extend(results)
        i = j
    return out
