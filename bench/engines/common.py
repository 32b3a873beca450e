"""What every engine shares: the timed run, the accounting after it, the transports.

``RecordingEngine.run`` opens a ``RunLog`` (``bench.engines.kit.runlog``), times the engine's
``execute`` with ``perf_counter`` (wall) and ``process_time`` (CPU of this process), turns any
exception into an ``error`` outcome, and only *then* — outside the timed region — parses the
recorded request bodies and counts their tokens.

Tokens are counted by replaying each recorded body through a private ``MockLLM`` built from
the same scenario, so they are exactly what the mock bills (``cl100k_base``), whichever
transport carried the request (the loopback server does not record; the in-process mock's
own ``requests`` list may be shared by concurrent runs). The replay mock has the scenario's
faults removed, so it always renders the real answer; a request whose real reply was not a
200 is charged its prompt tokens only (as the mock does), one that got no reply at all
(timed out, cancelled) is charged its prompt tokens too: the model did read it.
"""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any

from bench.engines.base import Engine, RunContext, RunRecord, RunStatus, ToolCallRecord
from bench.engines.kit.runlog import RunLog, end_log, recording_client, start_log
from bench.engines.kit.ttft import reply_total_s, reply_ttft_s
from bench.referee import LatencyProfile, MockLLM
from scenarios import Scenario

CHAT_PATH_SUFFIX = "/chat/completions"
DEFAULT_RUN_TIMEOUT_S = 30.0


@dataclass
class Outcome:
    """How a run ended, as the engine understood it (counts come from the RunLog)."""

    status: RunStatus
    final_answer: str | None
    termination: str | None
    error: str | None = None
    trace: Any = None  # a dict, or an object with to_dict() (converted after the timing)
    ttft_ms: float | None = None
    debug_output: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def exception_outcome(exc: BaseException) -> Outcome:
    """An exception nobody classified: status ``error``, the text kept."""
    return Outcome("error", None, type(exc).__name__, error=f"{type(exc).__name__}: {exc}"[:2000])


def _strip_faults(scenario: Scenario) -> Scenario:
    if not any(turn.fault for turn in scenario.script):
        return scenario
    script = [turn.model_copy(update={"fault": None}) for turn in scenario.script]
    return scenario.model_copy(update={"script": script})


class Accounting:
    """Counts what a run really sent: LLM calls, request bodies, tokens, scripted latency."""

    def __init__(self, scenario: Scenario, latency: LatencyProfile | None = None):
        self.scenario = scenario
        self._replay = MockLLM(
            scenarios={scenario.name: _strip_faults(scenario)},
            latency=latency or LatencyProfile(),
        )

    def account(self, log: RunLog, *, ttft: bool = False) -> dict[str, Any]:
        """Counts of one run; with ``ttft``, also ``scripted_ttft_ms`` (see ``bench.engines.kit.ttft``):
        the mock latency before the last answered request, that request's time to its first
        answer token, and the tool time."""
        chat = [x for x in log.exchanges if x.path.endswith(CHAT_PATH_SUFFIX)]
        bodies: list[Any] = []
        request_tokens: list[int] = []
        prompt = completion = 0
        latency_s = 0.0
        before_last_s = last_ttft_s = None
        self._replay.reset()
        for exchange in chat:
            try:
                body = json.loads(exchange.body)
            except ValueError:
                body = exchange.body.decode("utf-8", "replace")
            bodies.append(body)
            reply = self._replay.handle(exchange.body)
            billed = self._replay.requests[-1]
            request_tokens.append(billed.prompt_tokens)
            prompt += billed.prompt_tokens
            if exchange.status == 200:
                completion += billed.completion_tokens
                fault = self._fault_delay(billed)
                fault = fault if fault and exchange.elapsed_s >= fault else 0.0
                if ttft:
                    first = reply_ttft_s(reply, billed.protocol)
                    before_last_s = latency_s
                    last_ttft_s = None if first is None else first + fault
                latency_s += reply_total_s(reply) + fault
            else:
                # an error status, or no reply at all: the wait was the mock's doing
                latency_s += exchange.elapsed_s
        self._replay.reset()
        counted: dict[str, Any] = {
            "llm_calls": len(chat),
            "requests": bodies,
            "request_tokens": request_tokens,
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "mock_latency_ms": latency_s * 1000,
        }
        if ttft and before_last_s is not None and last_ttft_s is not None:
            counted["scripted_ttft_ms"] = (before_last_s + last_ttft_s) * 1000 + log.tool_time_ms()
        return counted

    def _fault_delay(self, billed: Any) -> float:
        if billed.turn is None:
            return 0.0
        script = (
            self.scenario.script if billed.protocol == "tools" else self.scenario.react_script()
        )
        if billed.turn >= len(script):
            return 0.0
        fault = script[billed.turn].fault
        return (fault.delay_s or 0.0) if fault is not None else 0.0


@dataclass
class Prepared:
    """What ``prepare`` hands to ``run``; engines subclass it with their agent."""

    ctx: RunContext
    accounting: Accounting

    @property
    def scenario(self) -> Scenario:
        return self.ctx.scenario


def run_timeout_s(ctx: RunContext) -> float:
    """The deadline for a whole run, the same for every engine: the context's, else the
    scenario's ``limits.run_timeout_s``, else 30 s."""
    if ctx.run_timeout_s is not None:
        return ctx.run_timeout_s
    from_limits = getattr(ctx.scenario.limits, "run_timeout_s", None)
    return from_limits if from_limits is not None else DEFAULT_RUN_TIMEOUT_S


class RecordingEngine(Engine):
    """An engine whose runs are timed and accounted by the shared machinery."""

    def __init__(self) -> None:
        self._clients: dict[tuple[str, str, int], Any] = {}

    def http_client(self, ctx: RunContext, lib: str) -> Any:
        """One recording ``AsyncClient`` per transport target, reused across runs (a pool)."""
        if ctx.transport == "inprocess":
            if ctx.mock is None:
                raise ValueError("the in-process transport needs RunContext.mock")
            key = ("inprocess", lib, id(ctx.mock))
        else:
            key = ("loopback", lib, hash(ctx.base_url))
        client = self._clients.get(key)
        if client is None:
            if ctx.transport == "inprocess":
                client = recording_client(lib, mock=ctx.mock, base_url=ctx.base_url or None)
            else:
                client = recording_client(lib, base_url=ctx.base_url)
            self._clients[key] = client
        return client

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()

    def accounting(self, ctx: RunContext) -> Accounting:
        latency = ctx.latency
        if latency is None and ctx.mock is not None:
            latency = ctx.mock.latency
        return Accounting(ctx.scenario, latency)

    @abstractmethod
    async def execute(self, prepared: Any) -> Outcome:
        """The timed part: run the agent once and say how it ended (may raise)."""

    def before_run(self, prepared: Any) -> None:
        """A cheap reset between runs of one prepared agent (default: nothing to reset)."""

    async def run(self, prepared: Any) -> RunRecord:
        log, token = start_log()
        try:
            cpu0 = time.process_time()
            t0 = time.perf_counter()
            try:
                self.before_run(prepared)
                outcome = await self.execute(prepared)
            except Exception as exc:
                outcome = exception_outcome(exc)
            wall_ms = (time.perf_counter() - t0) * 1000
            cpu_ms = (time.process_time() - cpu0) * 1000
        finally:
            end_log(token)
        try:
            return self.record(prepared, outcome, log, wall_ms, cpu_ms)
        except Exception as exc:  # accounting must never crash the caller either
            ctx = getattr(prepared, "ctx", None)
            return RunRecord(
                engine=self.name,
                scenario=ctx.scenario.name if ctx is not None else "?",
                status="error",
                final_answer=None,
                llm_calls=0,
                tool_calls=0,
                tools=[],
                wall_ms=wall_ms,
                cpu_ms=cpu_ms,
                prompt_tokens=0,
                completion_tokens=0,
                requests=[],
                request_tokens=[],
                termination=type(exc).__name__,
                error=f"accounting failed: {type(exc).__name__}: {exc}",
            )

    def record(
        self, prepared: Prepared, outcome: Outcome, log: RunLog, wall_ms: float, cpu_ms: float
    ) -> RunRecord:
        counted = prepared.accounting.account(log, ttft=prepared.ctx.stream_tokens)
        tools = [ToolCallRecord(t.name, t.args, t.ok, t.duration_ms, t.error) for t in log.tools]
        return RunRecord(
            engine=self.name,
            scenario=prepared.scenario.name,
            status=outcome.status,
            final_answer=outcome.final_answer,
            llm_calls=counted["llm_calls"],
            tool_calls=len(tools),
            tools=tools,
            wall_ms=wall_ms,
            cpu_ms=cpu_ms,
            prompt_tokens=counted["prompt_tokens"],
            completion_tokens=counted["completion_tokens"],
            requests=counted["requests"],
            request_tokens=counted["request_tokens"],
            termination=outcome.termination,
            debug_output=outcome.debug_output,
            trace=outcome.trace.to_dict() if hasattr(outcome.trace, "to_dict") else outcome.trace,
            error=outcome.error,
            tool_ms=log.tool_time_ms(),
            waited_ms=log.waited_ms(),
            wait_count=log.wait_count(),
            mock_latency_ms=counted["mock_latency_ms"],
            ttft_ms=outcome.ttft_ms,
            scripted_ttft_ms=counted.get("scripted_ttft_ms"),
            extra=outcome.extra,
        )
