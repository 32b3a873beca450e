"""An Anthropic Messages client for the agent, on httpx alone (no SDK).

    llm = AnthropicChatClient(model="claude-sonnet-4-5", api_key=KEY)
    agent = LightweightAgent(llm, AgentConfig(system_prompt="You are a support agent."))

``AnthropicChatClient`` is an ``HTTPChatClient`` (``scheduler.llm``): the same connection
reuse, timeouts, retries (plus 529, Anthropic's "overloaded") and streaming contract as
``OpenAIChatClient``. It calls ``POST {base_url}/v1/messages`` (``base_url`` as the
official SDK takes it: ``https://api.anthropic.com``) and translates between the agent's
conversation (OpenAI chat messages and tool schemas, ``ChatResponse``) and the Messages API:

=========================  ============================================================
the agent's                the Messages API's
=========================  ============================================================
leading system messages    ``system`` (joined); a later one (the loop's summary
                           request) becomes user text at its place
assistant ``tool_calls``   ``tool_use`` blocks; arguments that are not a JSON object
                           (a malformed call the loop answered with an error) go as ``{}``
``tool`` messages          ``tool_result`` blocks, in one user message with any user text
                           that follows them (consecutive user messages are merged)
tool schemas               ``{name, description, input_schema}``
``tool_choice``            ``"none"`` / ``"auto"`` / ``"required"`` / a function →
                           ``{"type": "none" | "auto" | "any" | "tool"}``
``max_tokens``             required by the API: ``max_tokens`` of the constructor unless
                           the params carry one (``max_completion_tokens`` too)
``stop``                   ``stop_sequences``
``finish_reason``          from ``stop_reason``: tool_use → tool_calls, end_turn,
                           stop_sequence, pause_turn → stop, max_tokens and
                           model_context_window_exceeded → length, refusal → content_filter
usage                      input_tokens (+ cache creation and cache reads) → prompt;
                           output_tokens → completion
=========================  ============================================================

Streamed, the events are read as the API sends them: ``text_delta`` pieces go to
``on_delta``, ``input_json_delta`` fragments are joined per block, ``message_delta`` says why
the answer stopped, ``message_stop`` ends it; an ``error`` event fails the attempt (retried
when it is transient and nothing was delivered yet). The agent's token budget still counts
with its own tokenizer (``scheduler.tokens``), an approximation for Claude models.
"""

from __future__ import annotations

import json
import time
from typing import Any

from scheduler.errors import LLMError, LLMResponseError
from scheduler.llm import RETRY_STATUSES, HTTPChatClient, StreamDecoder, _Retryable
from scheduler.types import ChatResponse, OnDelta, TokenUsage, ToolCall

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
OVERLOADED = 529

FINISH_REASONS = {
    "tool_use": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
# error events in a stream that a new attempt may not meet again
TRANSIENT_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"})


class AnthropicChatClient(HTTPChatClient):
    """Calls ``POST {base_url}/v1/messages``. ``max_tokens``: the answer limit sent when the
    request params carry none; ``anthropic_version``: the ``anthropic-version`` header. The
    other arguments are ``HTTPChatClient``'s (timeouts, retries, ``http_client`` …)."""

    provider = "anthropic"
    path = "/v1/messages"
    default_base_url = "https://api.anthropic.com"
    default_model = "claude-sonnet-4-5"
    retry_statuses = RETRY_STATUSES | {OVERLOADED}

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        *,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        anthropic_version: str = API_VERSION,
        **options: Any,
    ):
        self.max_tokens = max_tokens
        self.anthropic_version = anthropic_version  # read by _provider_headers
        super().__init__(base_url, model, api_key, **options)

    def _provider_headers(self, api_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": self.anthropic_version}
        if api_key:
            headers["x-api-key"] = api_key
        return headers

    def _body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        params: dict[str, Any] | None,
        stream: bool,
    ) -> dict[str, Any]:
        return request_body(self.model, self.max_tokens, messages, tools, params, stream)

    def _parse(self, data: Any) -> ChatResponse:
        return parse_message(data)

    def _decoder(self, started: float, on_delta: OnDelta | None) -> StreamDecoder:
        return _MessageStream(started, on_delta)


# -- the request ---------------------------------------------------------------------------


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _text_block(text: Any) -> list[dict[str, Any]]:
    # the API refuses empty text blocks
    return [{"type": "text", "text": text}] if isinstance(text, str) and text else []


def _content_text(content: Any) -> str:
    """The text of an OpenAI message's content: a string, or content parts."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def conversation(
    messages: list[dict[str, Any]],
) -> tuple[str | None, list[dict[str, Any]]]:
    """The agent's messages as (``system``, Messages ``messages``); see the module doc."""
    system: list[str] = []
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        role = message.get("role")
        text = _content_text(message.get("content"))
        if role == "system":
            if not out:
                system.append(text)
            else:
                add("user", _text_block(text))
        elif role == "assistant":
            calls = [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": _tool_input(call["function"].get("arguments") or ""),
                }
                for call in message.get("tool_calls") or ()
            ]
            add("assistant", _text_block(text) + calls)
        elif role == "tool":
            result = {"type": "tool_result", "tool_use_id": message.get("tool_call_id") or ""}
            add("user", [{**result, "content": text}])
        else:
            add("user", _text_block(text))
    joined = "\n\n".join(t for t in system if t)
    return joined or None, out


def tool_definitions(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI tool schemas as Messages tool definitions."""
    out = []
    for tool in tools:
        function = tool.get("function", tool)
        definition = {
            "name": function["name"],
            "input_schema": function.get("parameters") or {"type": "object", "properties": {}},
        }
        if function.get("description"):
            definition["description"] = function["description"]
        out.append(definition)
    return out


def _tool_choice(choice: Any) -> Any:
    if choice in ("none", "auto"):
        return {"type": choice}
    if choice == "required":
        return {"type": "any"}
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "tool", "name": choice["function"]["name"]}
    return choice  # already in the Messages shape


def request_body(
    model: str,
    max_tokens: int,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any] | None,
    stream: bool,
) -> dict[str, Any]:
    """A Messages request for the agent's conversation, tools and request params."""
    system, converted = conversation(messages)
    extra = dict(params or {})
    limit = extra.pop("max_tokens", None) or extra.pop("max_completion_tokens", None)
    body: dict[str, Any] = {
        "model": extra.pop("model", model),
        "max_tokens": limit or max_tokens,
        "messages": converted,
    }
    if system is not None:
        body["system"] = system
    if tools:
        body["tools"] = tool_definitions(tools)
    if "stop" in extra:
        stop = extra.pop("stop")
        body["stop_sequences"] = [stop] if isinstance(stop, str) else stop
    if "tool_choice" in extra:
        body["tool_choice"] = _tool_choice(extra.pop("tool_choice"))
    extra.pop("stream_options", None)
    body.update(extra)
    if stream:
        body["stream"] = True
    return body


# -- the answer ----------------------------------------------------------------------------


def _usage(usage: Any) -> TokenUsage | None:
    if not isinstance(usage, dict):
        return None
    prompt = sum(
        usage.get(key) or 0
        for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    )
    return TokenUsage(prompt, usage.get("output_tokens") or 0)


def finish_reason(stop_reason: str | None) -> str | None:
    """A ``stop_reason`` in the agent's vocabulary (unknown ones pass through)."""
    if stop_reason is None:
        return None
    return FINISH_REASONS.get(stop_reason, stop_reason)


def parse_message(data: dict[str, Any]) -> ChatResponse:
    """A ``message`` JSON object -> ChatResponse."""
    if data.get("type") != "message":
        raise ValueError(f"not a message object (type {data.get('type')!r})")
    parts: list[str] = []
    calls: list[ToolCall] = []
    for block in data["content"]:
        if block["type"] == "text":
            parts.append(block["text"])
        elif block["type"] == "tool_use":
            arguments = json.dumps(block["input"], ensure_ascii=False)
            calls.append(ToolCall(block["id"], block["name"], arguments))
    return ChatResponse(
        "".join(parts) if parts else None,
        calls,
        finish_reason(data.get("stop_reason")),
        _usage(data.get("usage")),
        data.get("model"),
        data.get("id"),
    )


class _MessageStream:
    """Joins the events of one streamed message (a ``StreamDecoder``)."""

    def __init__(self, started: float, on_delta: OnDelta | None):
        self.started, self.on_delta = started, on_delta
        self.parts: list[str] = []
        self.calls: dict[int, tuple[str, str, list[str]]] = {}  # index -> id, name, json
        self.finish_reason: str | None = None
        self.input_tokens: dict[str, Any] = {}
        self.output_tokens = 0
        self.model: str | None = None
        self.id: str | None = None
        self.ttft_s: float | None = None
        self.delivered = 0  # characters passed to on_delta

    def feed(self, line: str) -> bool:
        """One line of the body (``event:`` lines and blanks are skipped: each ``data:``
        names its own type); True at ``message_stop``."""
        if not line.startswith("data:"):
            return False
        event = json.loads(line[5:])
        kind = event["type"]
        if kind == "content_block_delta":
            self._delta(event["index"], event["delta"])
        elif kind == "content_block_start":
            block = event["content_block"]
            if block["type"] == "tool_use":
                self._first()
                self.calls[event["index"]] = (block["id"], block["name"], [])
            elif block["type"] == "text" and block.get("text"):
                self._text(block["text"])
        elif kind == "message_start":
            message = event["message"]
            self.id, self.model = message.get("id"), message.get("model")
            self.input_tokens = message.get("usage") or {}
        elif kind == "message_delta":
            self.finish_reason = finish_reason(event["delta"].get("stop_reason"))
            usage = event.get("usage") or {}
            self.output_tokens = usage.get("output_tokens") or self.output_tokens
        elif kind == "message_stop":
            return True
        elif kind == "error":
            raise _stream_error(event.get("error") or {})
        return False  # ping, content_block_stop, event types added later

    def _delta(self, index: int, delta: dict[str, Any]) -> None:
        if delta["type"] == "text_delta":
            self._text(delta["text"])
        elif delta["type"] == "input_json_delta":
            self.calls[index][2].append(delta["partial_json"])

    def _text(self, text: str) -> None:
        if not text:
            return
        self._first()
        self.parts.append(text)
        if self.on_delta is not None:
            self.delivered += len(text)
            self.on_delta(text)

    def _first(self) -> None:
        if self.ttft_s is None:
            self.ttft_s = time.perf_counter() - self.started

    def result(self) -> ChatResponse:
        calls = [
            ToolCall(call_id, name, "".join(pieces) or "{}")
            for _, (call_id, name, pieces) in sorted(self.calls.items())
        ]
        usage = _usage({**self.input_tokens, "output_tokens": self.output_tokens})
        content = "".join(self.parts) if self.parts else None
        return ChatResponse(
            content, calls, self.finish_reason, usage, self.model, self.id, ttft_s=self.ttft_s
        )


def _stream_error(error: dict[str, Any]) -> _Retryable | LLMError:
    kind = str(error.get("type") or "error")
    failure = LLMResponseError(f"the stream sent an error: {kind}: {error.get('message') or ''}")
    return _Retryable(failure) if kind in TRANSIENT_ERRORS else failure
