"""Is a chat-completion request well-formed enough to answer?

The mock reads ``model``, ``messages``, ``tools``, ``functions``, ``stream``,
``stream_options`` and ``tool_choice``; each must have the type the OpenAI API documents, or
the request is answered with a 400 in OpenAI's error format naming the field (as the API
does: ``Invalid type for 'tools': expected an array of objects, but got a string instead.``),
never with an exception. Fields the mock does not read are not checked.

Two depths, because the in-process mock's time is part of every engine's measured run: every
request gets the check of its top-level fields, its messages (one pass over each message's
keys) and its tools' names, a few microseconds; the tools' descriptions and JSON Schemas,
which only the token counting reads, are checked (``deep``) only when answering a request
failed, to name the field that made it fail. Everything the mock reads after a scripted
fault is counted is in the first check, so a refused request never spends a fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Problem:
    """Why a request is refused: the message, the offending field and an error code."""

    message: str
    param: str
    code: str = "invalid_type"


_TYPE_NAMES = {
    str: "a string",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    list: "an array",
    dict: "an object",
    type(None): "null",
}


def _kind(value: Any) -> str:
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _wrong(param: str, expected: str, value: Any) -> Problem:
    return Problem(
        f"Invalid type for '{param}': expected {expected}, but got {_kind(value)} instead.", param
    )


def _optional(value: Any, kind: type | tuple[type, ...]) -> bool:
    return value is None or isinstance(value, kind)


def _schema_problem(schema: Any, param: str) -> Problem | None:
    if not _optional(schema, dict):
        return _wrong(param, "an object (a JSON Schema)", schema)
    properties = (schema or {}).get("properties")
    if not _optional(properties, dict):
        return _wrong(f"{param}.properties", "an object", properties)
    for key, spec in (properties or {}).items():
        if not isinstance(spec, dict):
            continue
        where = f"{param}.properties.{key}"
        if not _optional(spec.get("description"), str):
            return _wrong(f"{where}.description", "a string", spec["description"])
        if not _optional(spec.get("enum"), list):
            return _wrong(f"{where}.enum", "an array", spec["enum"])
    return None


def _function_problem(function: Any, param: str, deep: bool) -> Problem | None:
    if not isinstance(function, dict):
        return _wrong(param, "an object", function)
    if not isinstance(function.get("name"), str):
        return _wrong(f"{param}.name", "a string", function.get("name"))
    if not deep:
        return None
    if not _optional(function.get("description"), str):
        return _wrong(f"{param}.description", "a string", function["description"])
    return _schema_problem(function.get("parameters"), f"{param}.parameters")


def _call_problem(call: Any, param: str) -> Problem | None:
    """An assistant message's tool call or function call: a name and arguments text."""
    if not isinstance(call, dict):
        return _wrong(param, "an object", call)
    if not _optional(call.get("name"), str):
        return _wrong(f"{param}.name", "a string", call["name"])
    if not _optional(call.get("arguments"), str):
        return _wrong(f"{param}.arguments", "a string", call["arguments"])
    return None


def _content_problem(content: Any, param: str) -> Problem | None:
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, dict) and not _optional(part.get("text"), str):
                return _wrong(f"{param}[{i}].text", "a string", part["text"])
        return None
    return _wrong(param, "a string or an array of content parts", content)


def _plain(message: Any) -> bool:
    """The common case, decided fast: ``{"role": text, "content": text}``."""
    return (
        type(message) is dict
        and len(message) == 2
        and type(message.get("role")) is str
        and type(message.get("content")) is str
    )


def _message_problem(message: Any, param: str) -> Problem | None:
    """One message: one pass over the keys it has (this runs for every message of every
    request)."""
    if not isinstance(message, dict):
        return _wrong(param, "an object", message)
    if not isinstance(message.get("role"), str):
        return _wrong(f"{param}.role", "a string", message.get("role"))
    for key, value in message.items():
        if value is None or key == "role":
            continue
        if key == "content":
            if not isinstance(value, str):
                problem = _content_problem(value, f"{param}.content")
                if problem is not None:
                    return problem
        elif key in ("name", "tool_call_id"):
            if not isinstance(value, str):
                return _wrong(f"{param}.{key}", "a string", value)
        elif key == "tool_calls":
            if not isinstance(value, list):
                return _wrong(f"{param}.tool_calls", "an array", value)
            for i, call in enumerate(value):
                where = f"{param}.tool_calls[{i}]"
                if not isinstance(call, dict):
                    return _wrong(where, "an object", call)
                problem = _call_problem(call.get("function"), f"{where}.function")
                if problem is not None:
                    return problem
        elif key == "function_call":
            problem = _call_problem(value, f"{param}.function_call")
            if problem is not None:
                return problem
    return None


def request_problem(body: dict[str, Any], *, deep: bool = False) -> Problem | None:
    """The first field of ``body`` the mock cannot read, or None (``deep``: the tools'
    descriptions and JSON Schemas too)."""
    model = body.get("model")
    if not isinstance(model, str):
        return Problem("'model' is required and must be a string", "model", "invalid_model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return Problem(
            "'messages' must be a non-empty list of message objects",
            "messages",
            "invalid_messages",
        )
    for i, message in enumerate(messages):
        if _plain(message):
            continue
        problem = _message_problem(message, f"messages[{i}]")
        if problem is not None:
            return problem
    for field in ("tools", "functions"):
        entries = body.get(field)
        if not _optional(entries, list):
            return _wrong(field, "an array of objects", entries)
        for i, entry in enumerate(entries or ()):
            where = f"{field}[{i}]"
            if field == "tools":
                if not isinstance(entry, dict):
                    return _wrong(where, "an object", entry)
                problem = _function_problem(entry.get("function"), f"{where}.function", deep)
            else:
                problem = _function_problem(entry, where, deep)
            if problem is not None:
                return problem
    if not _optional(body.get("stream"), bool):
        return _wrong("stream", "a boolean", body["stream"])
    options = body.get("stream_options")
    if not _optional(options, dict):
        return _wrong("stream_options", "an object", options)
    if not _optional((options or {}).get("include_usage"), bool):
        return _wrong(
            "stream_options.include_usage", "a boolean", (options or {}).get("include_usage")
        )
    if not _optional(body.get("tool_choice"), (str, dict)):
        return _wrong("tool_choice", "a string or an object", body["tool_choice"])
    return None
