"""What the mocked LLM says, in each protocol a client may speak.

``tools`` requests get ``tool_calls``; legacy ``functions`` requests get one
``function_call`` per turn; a ReAct prompt (neither, and the prompt asks for ``Question:`` and
``Action Input:`` lines) gets ReAct text (``Thought / Action / Action Input / Final Answer``).
Any other request is a tool-calling client that has no tools to send (a scenario without
tools): it gets plain assistant messages, as a real model would answer it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from scenarios.schema import ScriptToolCall, Turn

Protocol = Literal["tools", "functions", "react"]

_QUESTION = "Question:"
_OBSERVATION = "Observation:"
_ACTION_INPUT = "Action Input:"


def detect_protocol(body: dict[str, Any]) -> Protocol:
    """The protocol a request speaks: by its ``tools`` / ``functions``, else by its prompt."""
    if body.get("tools"):
        return "tools"
    if body.get("functions"):
        return "functions"
    text = "\n".join(_text(m.get("content")) for m in body.get("messages") or ())
    return "react" if _QUESTION in text and _ACTION_INPUT in text else "tools"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def turn_index(messages: list[dict[str, Any]], protocol: Protocol) -> int:
    """How many answers the conversation already holds, from its messages alone (stateless).

    Tool-calling protocols: assistant messages after the last user message. ReAct: the
    ``Observation:`` markers after the last ``Question:`` of the conversation's text.
    """
    if protocol == "react":
        text = "\n".join(_text(m.get("content")) for m in messages)
        start = text.rfind(_QUESTION)
        return text.count(_OBSERVATION, start if start >= 0 else 0)
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return sum(1 for m in messages[last_user + 1 :] if m.get("role") == "assistant")


def _results_per_answer(messages: list[dict[str, Any]], protocol: Protocol) -> list[list[str]]:
    """For each answer already in the conversation, the texts of the tool results that
    followed it (tool messages; ReAct: the text after each ``Observation:``)."""
    if protocol == "react":
        text = "\n".join(_text(m.get("content")) for m in messages)
        start = text.rfind(_QUESTION)
        segments = text[start if start >= 0 else 0 :].split(_OBSERVATION)[1:]
        return [[segment] for segment in segments]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    answers: list[list[str]] = []
    for message in messages[last_user + 1 :]:
        role = message.get("role")
        if role == "assistant":
            answers.append([])
        elif role in ("tool", "function") and answers:
            answers[-1].append(_text(message.get("content")))
    return answers


def script_position(
    messages: list[dict[str, Any]], protocol: Protocol, script: list[Turn], results: dict[str, str]
) -> tuple[int, int]:
    """Which scripted turn a request asks for, and how many answers precede it.

    Each answer in the conversation consumed one turn. A turn marked ``retry`` (the model
    repeating calls that failed) is skipped when every result of the turn before it is the
    tool's scripted result (``results``: tool name -> its fixed result text): a client that
    already retried inside the tool (a retry middleware) got the answer, and the model moves
    on. The index may run past the script; the caller applies ``repeat``.
    """
    answered = turn_index(messages, protocol)
    if not any(turn.retry for turn in script):
        return answered, answered
    position = 0
    for texts in _results_per_answer(messages, protocol)[:answered]:
        played = script[min(position, len(script) - 1)]
        position += 1
        names = [call.name for call in played.tool_calls]
        succeeded = len(texts) >= len(names) and all(
            results.get(name) is not None and results[name] in text
            for name, text in zip(names, texts, strict=False)
        )
        while position < len(script) and script[position].retry and succeeded:
            position += 1
    return position, answered


def call_arguments(call: ScriptToolCall) -> str:
    if call.raw_arguments is not None:
        return call.raw_arguments
    if call.recorded_arguments is not None:
        return call.recorded_arguments
    return json.dumps(call.args, ensure_ascii=False)


def call_id(answered: int, index: int, call: ScriptToolCall) -> str:
    """A tool-call id unique within a conversation: the i-th call of the n-th answer (a
    repeating turn gets new ids each time, as a real model's calls would)."""
    return call.id or f"call_t{answered}_{index}"


@dataclass(frozen=True)
class Completion:
    """One scripted answer rendered for a protocol: an assistant message and its finish reason."""

    message: dict[str, Any]
    finish_reason: str
    text_for_usage: str


def react_text(turn: Turn) -> str:
    if turn.tool_calls:
        call = turn.tool_calls[0]
        thought = turn.content or f"I should use the {call.name} tool."
        return f"Thought: {thought}\nAction: {call.name}\nAction Input: {call_arguments(call)}"
    return f"Thought: I now know the final answer.\nFinal Answer: {turn.content}"


def render(turn: Turn, answered: int, protocol: Protocol) -> Completion:
    """The assistant message for one turn in the given protocol (``answered``: answers
    before this one in the conversation, which makes the tool-call ids unique)."""
    if protocol == "react":
        text = react_text(turn)
        return Completion({"role": "assistant", "content": text}, "stop", text)
    if not turn.tool_calls:
        text_only = {"role": "assistant", "content": turn.content}
        return Completion(text_only, "stop", turn.content or "")
    if protocol == "functions":
        call = turn.tool_calls[0]
        arguments = call_arguments(call)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": turn.content,
            "function_call": {"name": call.name, "arguments": arguments},
        }
        return Completion(message, "function_call", (turn.content or "") + call.name + arguments)
    calls: list[dict[str, Any]] = [
        {
            "id": call_id(answered, i, call),
            "type": "function",
            "function": {"name": call.name, "arguments": call_arguments(call)},
        }
        for i, call in enumerate(turn.tool_calls)
    ]
    usage_text = (turn.content or "") + "".join(
        c["function"]["name"] + c["function"]["arguments"] for c in calls
    )
    reply: dict[str, Any] = {"role": "assistant", "content": turn.content, "tool_calls": calls}
    return Completion(reply, "tool_calls", usage_text)


_WORD = re.compile(r"\s*\S+|\s+")


def content_pieces(text: str) -> list[str]:
    """Split text the way a model streams it: roughly a word (a token or two) per chunk."""
    return _WORD.findall(text) or [text]


def argument_pieces(arguments: str, size: int = 8) -> list[str]:
    return [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]
