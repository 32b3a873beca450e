"""Conversation memory across run() calls, bounded by a token budget.

After each run the new messages (user input, tool calls, tool results, answer) are added;
then whole turns — a user message and everything up to the next one — are dropped, oldest
first, until the memory fits ``max_tokens``. The latest turn is always kept. Tool calls are
never separated from their results (an assistant message whose calls lack results, as after
a cancellation, is dropped) so the next request is always a valid conversation.

Trimming runs on the caller's event loop, so it counts newest first and no further than the
room left (``count_within``): a 5 MB tool output costs what ``max_tokens`` tokens cost to
count (it stalled the loop 3.6 s when every message was counted in full).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

Message = dict[str, Any]


def _approx_tokens(message: Message) -> int:  # used only when tiktoken is unavailable
    return 3 + len(json.dumps(message, ensure_ascii=False, default=str)) // 4


class Counter(Protocol):
    """An exact counter (``scheduler.tokens.AgentCounter``)."""

    def message(self, message: Message) -> int: ...
    def within(self, message: Message, limit: int) -> int: ...


class ConversationMemory:
    """The messages of past runs (system prompt excluded: the agent adds its own).
    ``count_tokens(message)`` counts a message; ``count_within(message, limit)`` may stop
    early and return any number above ``limit`` once the message is known not to fit."""

    def __init__(
        self, max_tokens: int | None = None, count_tokens: Callable[[Message], int] | None = None
    ):
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens or _approx_tokens
        self.count_within: Callable[[Message, int], int] | None = None
        self.messages: list[Message] = []

    def __len__(self) -> int:
        return len(self.messages)

    def tokens(self) -> int:
        return sum(self.count_tokens(m) for m in self.messages)

    def clear(self) -> None:
        self.messages.clear()

    def save(self, new_messages: list[Message], counter: Counter | None = None) -> None:
        """Append one run's new messages, then trim to the budget (counting with ``counter``
        from now on, if given: the agent passes its exact counter)."""
        if counter is not None:
            self.count_tokens, self.count_within = counter.message, counter.within
        self.messages.extend(m for m in _complete_pairs(new_messages) if m.get("role") != "system")
        self.trim()

    def trim(self) -> None:
        if self.max_tokens is None:
            return
        turns = _turns(self.messages)
        room, kept = self.max_tokens, 0
        for turn in reversed(turns):  # the longest run of latest turns that fits
            room -= self._tokens(turn, room)
            if room < 0 and kept:
                break
            kept += 1
            if room < 0:  # the latest turn alone is over: it stays, nothing older fits
                break
        self.messages = [m for turn in turns[len(turns) - kept :] for m in turn]

    def _tokens(self, turn: list[Message], room: int) -> int:
        """The turn's tokens, or a number above ``room`` as soon as it is clearly over."""
        total = 0
        for message in turn:
            within = self.count_within
            total += self.count_tokens(message) if within is None else within(message, room - total)
            if total > room:
                break
        return total


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
