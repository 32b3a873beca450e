"""The mock's second protocol: Anthropic's Messages API (``POST /v1/messages``).

The same scenario scripts answer it, the same way as the OpenAI protocol (``core``): the
scenario by ``model="scenario/<name>"``, the turn derived statelessly from the request
(the answers after the last user question; ``anthropic_request.conversation`` maps the
request onto the chat shape the scripts are played from), ``tool_choice: {"type": "none"}``
forcing text, the scripted faults (an HTTP status in Anthropic's error format, a delay, a
broken body), the latency profile (the same delays for the same turn as over OpenAI) and
the recording of every request. Tools (``tools`` with ``input_schema``) get ``tool_use``
blocks; a request without tools whose prompt is ReAct gets ReAct text.

Bodies and events: ``anthropic_wire``; reading the request and billing it:
``anthropic_request`` (an approximation of Anthropic's token counts, with the mock's own
``cl100k_base`` counter). Every request gets an answer; one the mock cannot read gets a
400 in Anthropic's error format naming the field, a failure of the mock itself a 500.
Every answer carries a ``request-id`` header, as Anthropic's do.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from typing import Any, Protocol

from bench.referee import anthropic_request as request
from bench.referee import anthropic_wire as wire
from bench.referee.faults import break_reply
from bench.referee.latency import LatencyProfile, recorded_schedule
from bench.referee.protocols import detect_protocol, script_position
from bench.referee.reply import FORCED_TEXT, MODEL_PREFIX, MockReply
from bench.referee.tokens import text_tokens
from scenarios import Fault, Scenario, Turn

API = "anthropic"
MESSAGES_PATH = "/v1/messages"


class MockLLM(Protocol):
    """What this handler needs of the mock (``core.MockLLM``): its scripts, latency model,
    fault counter and recorder."""

    scenarios: Mapping[str, Scenario] | None
    latency: LatencyProfile

    def fixed_results(self, scenario: Scenario) -> dict[str, str]: ...

    def count_fault(self, scenario: str, raw: bytes) -> int: ...

    def as_received(self, turn: Turn, messages: list[dict[str, Any]]) -> tuple[Turn, bool]: ...

    def finish(
        self,
        where: tuple[str, int, str, bool] | None,
        body: Any,
        reply: MockReply,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        *,
        api: str = "openai",
    ) -> MockReply: ...


def error_reply(status: int, message: str, headers: dict[str, str] | None = None) -> MockReply:
    """A reply with an error in Anthropic's format."""
    head = {"content-type": "application/json", "request-id": wire.new_id("req")}
    return MockReply(status, {**head, **(headers or {})}, wire.error_body(status, message))


def handle(mock: MockLLM, raw: bytes) -> MockReply:
    """Answer one ``POST /v1/messages`` body; never raises."""
    try:
        return _answer(mock, raw)
    except Exception as exc:
        try:
            body = json.loads(raw)
        except Exception:
            body = None
        reason = f"{type(exc).__name__}: {exc}"[:500]
        reply = error_reply(500, f"the mock failed on this request ({reason})")
        return mock.finish(None, body, reply, api=API)


def _refuse(mock: MockLLM, body: Any, status: int, message: str) -> MockReply:
    return mock.finish(None, body, error_reply(status, message), api=API)


def _answer(mock: MockLLM, raw: bytes) -> MockReply:
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _refuse(mock, raw, 400, "There was an error parsing the body: not valid JSON")
    if not isinstance(body, dict):
        return _refuse(mock, body, 400, "The request body must be a JSON object")
    problem = request.request_problem(body)
    if problem is not None:
        return _refuse(mock, body, 400, problem.message)
    model = body["model"]
    name = model.removeprefix(MODEL_PREFIX)
    scenarios = mock.scenarios or {}
    scenario = scenarios.get(name) if model.startswith(MODEL_PREFIX) else None
    if scenario is None:
        known = ", ".join(sorted(scenarios))
        message = f"model: {model!r} is not a scenario; use 'scenario/<name>' with one of: {known}"
        return _refuse(mock, body, 404, message)
    messages = request.conversation(body)
    protocol = detect_protocol({"tools": body.get("tools"), "messages": messages})
    script = scenario.script if protocol == "tools" else scenario.react_script()
    index, answered = script_position(messages, protocol, script, mock.fixed_results(scenario))
    if index >= len(script):
        if not script[-1].repeat:
            message = (
                f"scenario {name!r}: turn {index} is past the end of its script "
                f"({len(script)} turns for the {protocol} protocol)"
            )
            return _refuse(mock, body, 400, message)
        index = len(script) - 1
    turn, _ = mock.as_received(script[index], messages)
    forced_text = (body.get("tool_choice") or {}).get("type") == "none" and bool(turn.tool_calls)
    if forced_text:
        turn = Turn(
            content=turn.content or FORCED_TEXT, latency_ms=turn.latency_ms, timing=turn.timing
        )
    input_tokens = request.prompt_tokens(body)
    where = (name, index, protocol, bool(body.get("stream")))
    fault_delay = 0.0
    struck: Fault | None = None
    if turn.fault is not None:
        hits = mock.count_fault(name, raw)
        if turn.fault.strikes(hits):
            if turn.fault.status is not None:
                headers = {}
                if turn.fault.retry_after_s is not None:
                    headers["retry-after"] = f"{turn.fault.retry_after_s:g}"
                message = turn.fault.message or f"scripted fault: HTTP {turn.fault.status}"
                reply = error_reply(turn.fault.status, message, headers)
                return mock.finish(
                    (name, index, protocol, False), body, reply, input_tokens, api=API
                )
            fault_delay = turn.fault.delay_s or 0.0
            struck = turn.fault
    content = wire.answer(turn, answered, protocol)
    output_tokens = text_tokens(content.text_for_usage)
    ttft, rest = mock.latency.delays(
        zlib.crc32(f"{name}/{protocol}/{index}".encode()), output_tokens
    )
    extra = (turn.latency_ms or 0.0) / 1000 + fault_delay
    recorded = turn.timing if mock.latency.plays_recorded else None
    request_id = {"request-id": wire.new_id("req")}
    payload = None
    if body.get("stream"):
        chunks, payload = wire.events(content, model, input_tokens, output_tokens)
        reply = MockReply(
            200,
            {"content-type": "text/event-stream", "cache-control": "no-cache", **request_id},
            chunks=chunks,
            delay_s=ttft + extra,
            chunk_delay_s=rest / max(len(chunks) - 1, 1),
        )
        if recorded is not None:
            first, offsets = recorded_schedule(recorded, len(chunks), payload)
            reply.delay_s, reply.chunk_offsets_s = first + extra, offsets
    else:
        reply = MockReply(
            200,
            {"content-type": "application/json", **request_id},
            wire.message_body(content, model, input_tokens, output_tokens),
            delay_s=(recorded.total_ms / 1000 if recorded else ttft + rest) + extra,
        )
    if struck is not None:
        reply = break_reply(reply, struck, payload)
    return mock.finish(where, body, reply, input_tokens, output_tokens, api=API)
