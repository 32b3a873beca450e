"""Whether a recorded chat completion has the shape the builder reads, and where it does not.

Traffic and logs come from anywhere: a field of the wrong type (``text: null`` in a content
part, ``tool_calls`` as a string) must be one line naming the field, never a traceback deep
in the builder. ``problem`` checks exactly the fields the builder reads; others may hold
anything.
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def kind(value: Any) -> str:
    """A JSON value's kind, as a reader says it: ``null``, ``a string``, ``an object``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _content(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return None
    if not isinstance(content, list):
        return f"{where}: expected text or a list of content parts, not {kind(content)}"
    for index, part in enumerate(content):
        if not isinstance(part, dict):
            return f"{where}[{index}]: expected a content part (an object), not {kind(part)}"
        if part.get("type", "text") == "text" and not isinstance(part.get("text"), str):
            return f"{where}[{index}].text: expected text, not {kind(part.get('text'))}"
    return None


def _tool_calls(calls: Any, where: str) -> str | None:
    if calls is None:
        return None
    if not isinstance(calls, list):
        return f"{where}: expected a list of tool calls, not {kind(calls)}"
    for index, call in enumerate(calls):
        at = f"{where}[{index}]"
        if not isinstance(call, dict):
            return f"{at}: expected a tool call (an object), not {kind(call)}"
        if call.get("id") is not None and not isinstance(call["id"], str):
            return f"{at}.id: expected text, not {kind(call['id'])}"
        function = call.get("function")
        if not isinstance(function, dict):
            return f"{at}.function: expected an object, not {kind(function)}"
        if not isinstance(function.get("name"), str):
            return f"{at}.function.name: expected text, not {kind(function.get('name'))}"
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str | dict):
            return f"{at}.function.arguments: expected JSON text, not {kind(arguments)}"
    return None


def message_problem(message: Any, where: str) -> str | None:
    """What is wrong with one chat message (None: nothing the builder reads)."""
    if not isinstance(message, dict):
        return f"{where}: expected a message (an object), not {kind(message)}"
    if not isinstance(message.get("role"), str):
        return f"{where}.role: expected text, not {kind(message.get('role'))}"
    if message.get("tool_call_id") is not None and not isinstance(message["tool_call_id"], str):
        return f"{where}.tool_call_id: expected text, not {kind(message['tool_call_id'])}"
    return _content(message.get("content"), f"{where}.content") or _tool_calls(
        message.get("tool_calls"), f"{where}.tool_calls"
    )


def problem(request: Any, response: Any) -> str | None:
    """The first field of a request / response pair the builder cannot read, as
    ``request.messages[2].content: expected ..., not ...`` (None: it can read them all)."""
    if not isinstance(request, dict):
        return f"request: expected an object, not {kind(request)}"
    messages = request.get("messages")
    if not isinstance(messages, list):
        return f"request.messages: expected a list of messages, not {kind(messages)}"
    for index, message in enumerate(messages):
        found = message_problem(message, f"request.messages[{index}]")
        if found:
            return found
    tools = request.get("tools")
    if tools is not None and not isinstance(tools, list):
        return f"request.tools: expected a list of tools, not {kind(tools)}"
    if response is None:
        return None
    if not isinstance(response, dict):
        return f"response: expected an object, not {kind(response)}"
    choices = response.get("choices")
    if choices is None or choices == []:
        return None  # an error body: no answer to read
    if not isinstance(choices, list) or not isinstance(choices[0], dict):
        return "response.choices: expected a list of choices (objects)"
    message = choices[0].get("message")
    if message is None:
        return None
    return message_problem(message, "response.choices[0].message")


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def without_surrogates(value: Any, path: str, found: list[tuple[str, str]]) -> Any:
    """``value`` with each lone surrogate (``"\\ud800"`` in JSON: no character, and no
    UTF-8) replaced by U+FFFD; ``found`` gets (path, the first one escaped) per string."""
    if isinstance(value, str):
        if not _has_surrogate(value):
            return value
        first = next(c for c in value if 0xD800 <= ord(c) <= 0xDFFF)
        found.append((path, f"\\u{ord(first):04x}"))
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {
            without_surrogates(k, path, found): without_surrogates(
                v, f"{path}.{k}".lstrip("."), found
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [without_surrogates(v, f"{path}[{i}]", found) for i, v in enumerate(value)]
    return value
