"""Reading an Anthropic Messages request (``POST /v1/messages``): its check, its
conversation, and what the mock bills for it.

- ``request_problem`` — the first field the mock cannot read, named with Anthropic's dotted
  paths (``messages.1.content.0.input: Input should be a valid dictionary``), so that the
  request is answered with a 400 in Anthropic's error format, never with an exception. Only
  the fields the mock reads are checked (``model``, ``max_tokens``, ``system``,
  ``messages``, ``tools``, ``tool_choice``, ``stream``); block types it does not read
  (images, documents, thinking) pass unchecked.
- ``conversation`` — the same conversation in the OpenAI chat shape the scripts are played
  from (``protocols.script_position``): ``system`` becomes a system message, ``tool_use``
  blocks an assistant's ``tool_calls``, ``tool_result`` blocks ``tool`` messages. A user
  message that carries tool results continues the current question (its results answer
  the previous turn); only a user message without them starts a new one. Text beside tool
  results is kept only with ``complete=True`` (for billing): it must not start a new
  question.
- ``prompt_tokens`` — the mock's own counter (``bench.referee.tokens``: ``cl100k_base``
  and OpenAI's framing rules) applied to that conversation, so one conversation costs the
  same in both protocols. It **approximates** what Anthropic bills: Anthropic's tokenizer
  is not ``cl100k_base`` and its tool use adds a system prompt of its own.
"""

from __future__ import annotations

import json
from typing import Any

from bench.referee.tokens import REPLY_PRIMING, message_tokens, tools_tokens
from bench.referee.validation import Problem

_KINDS = {
    str: "a valid string",
    int: "a valid integer",
    bool: "a valid boolean",
    list: "a valid list",
    dict: "a valid dictionary",
}
TOOL_CHOICES = ("auto", "any", "tool", "none")


def _wrong(path: str, kind: type, code: str = "invalid_type") -> Problem:
    return Problem(f"{path}: Input should be {_KINDS[kind]}", path, code)


def _missing(path: str) -> Problem:
    return Problem(f"{path}: Field required", path, "missing")


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _text_blocks_problem(blocks: Any, path: str) -> Problem | None:
    """A string, or a list of ``{"type": "text", "text": ...}`` blocks."""
    if isinstance(blocks, str):
        return None
    if not isinstance(blocks, list):
        return _wrong(path, str)
    for i, block in enumerate(blocks):
        where = f"{path}.{i}"
        if not isinstance(block, dict):
            return _wrong(where, dict)
        if block.get("type") == "text" and not _is(block.get("text"), str):
            return _wrong(f"{where}.text", str)
    return None


def _block_problem(block: Any, path: str) -> Problem | None:
    if not isinstance(block, dict):
        return _wrong(path, dict)
    kind = block.get("type")
    if not _is(kind, str):
        return _missing(f"{path}.type") if kind is None else _wrong(f"{path}.type", str)
    if kind == "text" and not _is(block.get("text"), str):
        return _wrong(f"{path}.text", str)
    if kind == "tool_use":
        for key, want in (("id", str), ("name", str), ("input", dict)):
            if not _is(block.get(key), want):
                return _wrong(f"{path}.{key}", want)
    if kind == "tool_result":
        if not _is(block.get("tool_use_id"), str):
            return _wrong(f"{path}.tool_use_id", str)
        if block.get("content") is not None:
            return _text_blocks_problem(block["content"], f"{path}.content")
    return None


def _message_problem(message: Any, path: str) -> Problem | None:
    if not isinstance(message, dict):
        return _wrong(path, dict)
    if message.get("role") not in ("user", "assistant"):
        return Problem(
            f"{path}.role: Input should be 'user' or 'assistant'", f"{path}.role", "invalid_role"
        )
    content = message.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return _missing(f"{path}.content") if content is None else _wrong(f"{path}.content", list)
    for i, block in enumerate(content):
        problem = _block_problem(block, f"{path}.content.{i}")
        if problem is not None:
            return problem
    return None


def _tool_problem(tool: Any, path: str) -> Problem | None:
    if not isinstance(tool, dict):
        return _wrong(path, dict)
    if not _is(tool.get("name"), str):
        return _wrong(f"{path}.name", str)
    if tool.get("description") is not None and not _is(tool["description"], str):
        return _wrong(f"{path}.description", str)
    schema = tool.get("input_schema")
    if schema is None:
        # a server tool (web search, code execution …) has a type and no input_schema
        return (
            None if tool.get("type") not in (None, "custom") else _missing(f"{path}.input_schema")
        )
    if not isinstance(schema, dict):
        return _wrong(f"{path}.input_schema", dict)
    properties = schema.get("properties")
    if properties is not None and not isinstance(properties, dict):
        return _wrong(f"{path}.input_schema.properties", dict)
    for key, spec in (properties or {}).items():
        if not isinstance(spec, dict):
            continue
        where = f"{path}.input_schema.properties.{key}"
        if spec.get("description") is not None and not _is(spec["description"], str):
            return _wrong(f"{where}.description", str)
        if spec.get("enum") is not None and not _is(spec["enum"], list):
            return _wrong(f"{where}.enum", list)
    return None


def request_problem(body: dict[str, Any]) -> Problem | None:
    """The first field of a Messages request the mock cannot read, or None."""
    if not _is(body.get("model"), str):
        return _missing("model") if body.get("model") is None else _wrong("model", str)
    max_tokens = body.get("max_tokens")
    if not _is(max_tokens, int):
        return _missing("max_tokens") if max_tokens is None else _wrong("max_tokens", int)
    assert isinstance(max_tokens, int)  # checked above
    if max_tokens < 1:
        return Problem("max_tokens: Input should be greater than or equal to 1", "max_tokens")
    messages = body.get("messages")
    if not isinstance(messages, list):
        return _missing("messages") if messages is None else _wrong("messages", list)
    if not messages:
        return Problem("messages: at least one message is required", "messages", "empty")
    for i, message in enumerate(messages):
        problem = _message_problem(message, f"messages.{i}")
        if problem is not None:
            return problem
    if body.get("system") is not None:
        problem = _text_blocks_problem(body["system"], "system")
        if problem is not None:
            return problem
    tools = body.get("tools")
    if tools is not None:
        if not isinstance(tools, list):
            return _wrong("tools", list)
        for i, tool in enumerate(tools):
            problem = _tool_problem(tool, f"tools.{i}")
            if problem is not None:
                return problem
    if body.get("stream") is not None and not _is(body["stream"], bool):
        return _wrong("stream", bool)
    choice = body.get("tool_choice")
    if choice is not None:
        if not isinstance(choice, dict):
            return _wrong("tool_choice", dict)
        if choice.get("type") not in TOOL_CHOICES:
            allowed = ", ".join(f"'{c}'" for c in TOOL_CHOICES)
            return Problem(
                f"tool_choice.type: Input should be {allowed}", "tool_choice.type", "invalid_value"
            )
        if choice["type"] == "tool" and not _is(choice.get("name"), str):
            return _wrong("tool_choice.name", str)
    return None


def text_of(content: Any) -> str:
    """The text of a string or of a list of blocks (their ``text`` fields, joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _arguments(value: Any) -> str:
    # how the mock's scripts serialise arguments (protocols.call_arguments)
    return json.dumps(value, ensure_ascii=False)


def conversation(body: dict[str, Any], *, complete: bool = False) -> list[dict[str, Any]]:
    """The request's conversation in the OpenAI chat shape (see the module docstring)."""
    out: list[dict[str, Any]] = []
    if body.get("system"):
        out.append({"role": "system", "content": text_of(body["system"])})
    for message in body["messages"]:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        text = text_of(blocks)
        if message["role"] == "assistant":
            calls = [
                {
                    "id": b["id"],
                    "type": "function",
                    "function": {"name": b["name"], "arguments": _arguments(b["input"])},
                }
                for b in blocks
                if b.get("type") == "tool_use"
            ]
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if not results:
            out.append({"role": "user", "content": text})
            continue
        out += [
            {"role": "tool", "tool_call_id": r["tool_use_id"], "content": text_of(r.get("content"))}
            for r in results
        ]
        if complete and text:
            out.append({"role": "user", "content": text})
    return out


def openai_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Anthropic tool definitions as the OpenAI ``tools`` array the counter reads."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": tool.get("description"),
                "parameters": tool.get("input_schema"),
            },
        }
        for tool in tools or ()
    ]


def prompt_tokens(body: dict[str, Any]) -> int:
    """What the mock bills for a Messages request (an approximation, see the module doc)."""
    messages = conversation(body, complete=True)
    return (
        sum(message_tokens(m) for m in messages)
        + tools_tokens(openai_tools(body.get("tools")))
        + REPLY_PRIMING
    )
