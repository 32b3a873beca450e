"""The scripted, OpenAI-compatible mock LLM: one request body in, one reply out.

It also speaks Anthropic's Messages API (``handle_messages``, in ``bench.referee.anthropic``)
from the same scripts.

Transport-free: the in-process transports and the loopback server both call
``MockLLM.handle`` and only deliver the ``MockReply`` it returns. Every request gets a reply:
one the mock cannot read is answered in OpenAI's error format (``validation``), and its
caches are bounded (``lru``) however many distinct bodies clients send.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.referee import anthropic, sse
from bench.referee.faults import break_reply
from bench.referee.latency import LatencyProfile, recorded_schedule
from bench.referee.lru import LRU
from bench.referee.protocols import (
    Completion,
    Protocol,
    detect_protocol,
    render,
    script_position,
)
from bench.referee.reply import (
    FORCED_TEXT,
    MODEL_PREFIX,
    MockReply,
    RecordedRequest,
    error_reply,
)
from bench.referee.tokens import REPLY_PRIMING, message_tokens, text_tokens
from bench.referee.tokens import tools_tokens as tools_tokens_of
from bench.referee.validation import request_problem
from scenarios import Fault, Scenario, Turn, load_scenarios

CACHE_ENTRIES = 4096  # per cache: far more than the distinct bodies of a benchmark run


def _message_text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@dataclass
class MockLLM:
    """Answers chat-completion requests from scenario scripts: the scenario by model name, the
    turn from the request body alone (stateless), the reply in the request's protocol."""

    scenarios: Mapping[str, Scenario] | None = None
    scenario_dir: Path | str | None = None
    latency: LatencyProfile = field(default_factory=LatencyProfile)
    record: bool = True
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.scenarios is None:
            self.scenarios = load_scenarios(self.scenario_dir)
        self._fault_hits: LRU[tuple[str, int], int] = LRU(CACHE_ENTRIES)
        self._fault_lock = threading.Lock()
        self._tools_tokens: LRU[str, int] = LRU(CACHE_ENTRIES)
        self._completions: LRU[
            tuple[str, Protocol, int, int, tuple[bool, bool]], tuple[Completion, int]
        ] = LRU(CACHE_ENTRIES)
        self._results: LRU[str, dict[str, str]] = LRU(CACHE_ENTRIES)  # scenario -> tool -> result
        # the referee's own time since the last reset: wall and this thread's CPU spent
        # answering (an in-process run's worker subtracts it from the engine's overhead)
        self.handler_ms = 0.0
        self.handler_cpu_ms = 0.0

    def reset(self) -> None:
        """Forget recorded requests, fault counters and the handler time."""
        self.requests.clear()
        with self._fault_lock:
            self._fault_hits.clear()
        self.handler_ms = self.handler_cpu_ms = 0.0

    def _spent(self, started: float, cpu: float) -> None:
        self.handler_ms += (time.perf_counter() - started) * 1000
        self.handler_cpu_ms += (time.thread_time() - cpu) * 1000

    # -- the request path ---------------------------------------------------------------

    def handle(self, raw: bytes) -> MockReply:
        """Answer one ``POST /v1/chat/completions`` body; never raises (a failure of the mock
        itself is a 500 in OpenAI's error format)."""
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return self._handle(raw)
        finally:
            self._spent(started, cpu)

    def _handle(self, raw: bytes) -> MockReply:
        try:
            return self._answer(raw)
        except Exception as exc:
            try:  # a field only the deep check looks into (it parsed before)
                body = json.loads(raw)
                problem = request_problem(body, deep=True) if isinstance(body, dict) else None
            except Exception:
                body, problem = None, None
            if problem is not None:
                reply = error_reply(400, problem.message, problem.code, param=problem.param)
                return self.finish(None, body, reply)
            reason = f"{type(exc).__name__}: {exc}"[:500]
            reply = error_reply(500, f"the mock failed on this request ({reason})", "mock_error")
            return self.finish(None, body, reply)

    def handle_messages(self, raw: bytes) -> MockReply:
        """Answer one Anthropic ``POST /v1/messages`` body (``bench.referee.anthropic``);
        never raises."""
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return anthropic.handle(self, raw)
        finally:
            self._spent(started, cpu)

    def _answer(self, raw: bytes) -> MockReply:
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return self.finish(
                None, raw, error_reply(400, "request body is not valid JSON", "invalid_json")
            )
        if not isinstance(body, dict):
            return self.finish(
                None, body, error_reply(400, "request body must be a JSON object", "invalid_body")
            )
        problem = request_problem(body)
        if problem is not None:
            reply = error_reply(400, problem.message, problem.code, param=problem.param)
            return self.finish(None, body, reply)
        model = body["model"]
        messages = body["messages"]
        name = model.removeprefix(MODEL_PREFIX)
        scenarios = self.scenarios or {}  # loaded in __post_init__ when not given
        scenario = scenarios.get(name) if model.startswith(MODEL_PREFIX) else None
        if scenario is None:
            known = ", ".join(sorted(scenarios))
            return self.finish(
                None,
                body,
                error_reply(
                    404,
                    f"model {model!r} is not a scenario; use 'scenario/<name>' with one of: {known}",
                    "model_not_found",
                ),
            )
        protocol = detect_protocol(body)
        script = scenario.script if protocol == "tools" else scenario.react_script()
        index, answered = script_position(messages, protocol, script, self.fixed_results(scenario))
        if index >= len(script):
            if not script[-1].repeat:
                return self.finish(
                    None,
                    body,
                    error_reply(
                        400,
                        f"scenario {name!r}: turn {index} is past the end of its script "
                        f"({len(script)} turns for the {protocol} protocol)",
                        "script_exhausted",
                    ),
                )
            index = len(script) - 1
        turn, seen = self.as_received(script[index], messages)
        forced_text = body.get("tool_choice") == "none" and bool(turn.tool_calls)
        if forced_text:
            # a client forbidding tools (e.g. a forced summary) gets text, as OpenAI answers
            turn = Turn(
                content=turn.content or FORCED_TEXT, latency_ms=turn.latency_ms, timing=turn.timing
            )
        prompt_tokens = self._prompt_tokens(body, messages)
        fault_delay = 0.0
        struck: Fault | None = None  # a fault that breaks this answer on its way
        if turn.fault is not None:
            hits = self.count_fault(name, raw)
            if turn.fault.strikes(hits):
                if turn.fault.status is not None:
                    headers = {}
                    if turn.fault.retry_after_s is not None:
                        headers["retry-after"] = f"{turn.fault.retry_after_s:g}"
                        headers["retry-after-ms"] = f"{turn.fault.retry_after_s * 1000:g}"
                    message = turn.fault.message or f"scripted fault: HTTP {turn.fault.status}"
                    reply = error_reply(turn.fault.status, message, "scripted_fault", headers)
                    return self.finish((name, index, protocol, False), body, reply, prompt_tokens)
                fault_delay = turn.fault.delay_s or 0.0
                struck = turn.fault
        completion, completion_tokens = self._completion(
            scenario, protocol, index, answered, turn, (forced_text, seen)
        )
        stream = bool(body.get("stream"))
        # jitter is keyed by the turn, not the body: every engine gets the same delay
        # for the same scripted turn, whatever else its request carries
        ttft, rest = self.latency.delays(
            zlib.crc32(f"{name}/{protocol}/{index}".encode()), completion_tokens
        )
        extra = (turn.latency_ms or 0.0) / 1000 + fault_delay
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        recorded = turn.timing if self.latency.plays_recorded else None
        payload = None
        if stream:
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks = sse.chunks(completion, model, usage if include_usage else None, protocol)
            payload = sse.payload_indices(len(chunks), include_usage)
            reply = MockReply(
                200,
                {"content-type": "text/event-stream", "cache-control": "no-cache"},
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
                {"content-type": "application/json"},
                json.dumps(sse.completion_body(completion, model, usage)).encode(),
                delay_s=(recorded.total_ms / 1000 if recorded else ttft + rest) + extra,
            )
        if struck is not None:
            reply = break_reply(reply, struck, payload)
        return self.finish(
            (name, index, protocol, stream), body, reply, prompt_tokens, completion_tokens
        )

    # -- helpers (the Anthropic handler uses them too) -----------------------------------

    def count_fault(self, scenario: str, raw: bytes) -> int:
        """How often this body hit its scenario's fault before (a retry resends the same
        body); counts this hit."""
        key = (scenario, zlib.crc32(raw if isinstance(raw, bytes) else raw.encode()))
        with self._fault_lock:
            hits = self._fault_hits.get(key, 0)
            self._fault_hits[key] = hits + 1
        return hits

    def _prompt_tokens(self, body: dict[str, Any], messages: list[dict[str, Any]]) -> int:
        tools = body.get("tools") or body.get("functions")
        tools_tokens = 0
        if tools:
            key = json.dumps(tools, sort_keys=True)
            cached = self._tools_tokens.get(key)
            if cached is None:
                cached = self._tools_tokens[key] = tools_tokens_of(tools)
            tools_tokens = cached
        return sum(message_tokens(m) for m in messages) + tools_tokens + REPLY_PRIMING

    @staticmethod
    def as_received(turn: Turn, messages: list[dict[str, Any]]) -> tuple[Turn, bool]:
        """The scripted turn as a model answers from what it received: a turn that ``needs``
        a text missing from the request's messages (a tool result an engine cleared or cut)
        gets the scenario's "did not see it" answer. Returns (turn, whether it saw them)."""
        if turn.needs is None:
            return turn, True
        received = "\n".join(_message_text(m.get("content")) for m in messages)
        answered = turn.as_received(received)
        return answered, answered is turn

    def fixed_results(self, scenario: Scenario) -> dict[str, str]:
        results = self._results.get(scenario.name)
        if results is None:
            results = self._results[scenario.name] = {
                tool.name: text for tool in scenario.tools if (text := tool.fixed_result)
            }
        return results

    def _completion(
        self,
        scenario: Scenario,
        protocol: Protocol,
        index: int,
        answered: int,
        turn: Any,
        variant: tuple[bool, bool],  # (text forced by tool_choice none, the needed texts seen)
    ) -> tuple[Completion, int]:
        key = (scenario.name, protocol, index, answered, variant)
        cached = self._completions.get(key)
        if cached is None:
            completion = render(turn, answered, protocol)
            cached = self._completions[key] = (
                completion,
                text_tokens(completion.text_for_usage),
            )
        return cached

    def finish(
        self,
        where: tuple[str, int, str, bool] | None,
        body: Any,
        reply: MockReply,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        *,
        api: str = "openai",
    ) -> MockReply:
        if self.record:
            scenario, turn, protocol, stream = where or (None, None, None, False)
            self.requests.append(
                RecordedRequest(
                    scenario,
                    turn,
                    protocol,
                    stream,
                    reply.status,
                    body,
                    prompt_tokens,
                    completion_tokens,
                    time.time(),
                    api,
                )
            )
        return reply
