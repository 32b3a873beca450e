"""The engine interface: one contender (raw loop, scheduler, a LangChain agent) behind one API.

An engine is built once per worker process. For each scenario, ``prepare`` builds the agent
**outside** the timed region; ``run`` executes one timed run and returns a ``RunRecord``.
Whatever goes wrong inside an engine becomes a record with status ``error`` — never an
exception in the caller.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Literal

from bench.engines.registry import REGISTRY, EngineSpec
from bench.referee import LatencyProfile, MockLLM
from scenarios import Scenario

RunStatus = Literal["completed", "failed", "aborted", "error"]
TransportName = Literal["inprocess", "loopback"]

# How a run ended, in the harness's words. Every engine maps its framework's own exits
# (sentinel strings, exceptions, middleware endings, our scheduler's enum) onto these, so a
# scenario's expectations judge what happened, not one framework's vocabulary.
TERMINATIONS: dict[str, str] = {
    "stop": "the model gave its final answer",
    "max_steps": "a limit on LLM calls / iterations ended the run",
    "tool_limit": "a tool-call guard (a repeated-call detector or a call cap) ended the run",
    "token_budget": "a token budget ended the run before an oversized request was sent",
    "timeout": "the run deadline ended the run",
    "cancelled": "the run was cancelled",
    "llm_error": "the LLM kept failing (after the client's retries)",
    "tool_error": "a tool's exception ended the run",
    "parse_error": "the model's text could not be parsed (ReAct)",
    "invalid_tool_call": "the run ended on a tool call whose arguments did not parse",
    "unknown_tool": "the run ended on a call to a tool the agent does not have",
    "empty_answer": "the run returned an empty answer",
    "length": "the model's output limit cut the answer",
    "content_filter": "the provider's filter withheld the answer",
    "hook_error": "a hook of ours raised and failed the run",
}


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool execution, observed at the tool itself (not claimed by the framework)."""

    name: str
    args: dict[str, Any]
    ok: bool
    duration_ms: float
    error: str | None = None


@dataclass(frozen=True)
class RunRecord:
    """What happened in one run of one scenario on one engine (docs/engines.md)."""

    engine: str
    scenario: str
    status: RunStatus
    final_answer: str | None
    llm_calls: int  # requests that reached the mock (retries included)
    tool_calls: int  # executions observed at the tools
    tools: list[ToolCallRecord]
    wall_ms: float
    cpu_ms: float  # process CPU time of the engine's process during the run
    prompt_tokens: int  # counted with the real tokenizer on the bodies the mock received
    completion_tokens: int
    requests: list[dict[str, Any]]  # the request bodies the engine sent, in order
    termination: str | None  # why it ended: stop, max_steps, timeout, error text class, ...
    debug_output: str = ""
    trace: dict[str, Any] | None = None
    error: str | None = None
    tool_ms: float = 0.0  # time spent inside tool bodies (scripted latency included)
    mock_latency_ms: float = 0.0  # scripted LLM latency the mock added (zero profile: 0)
    ttft_ms: float | None = None  # first token of the final answer through the engine, streaming
    # stream_tokens runs: the mock latency and tool time before the first answer token could
    # reach this engine, for the requests it really sent (its protocol, streamed or not)
    scripted_ttft_ms: float | None = None
    request_tokens: list[int] = field(default_factory=list)  # prompt tokens billed per request
    extra: dict[str, Any] = field(default_factory=dict)
    # sleeps the run chose (retry backoff), outside tool bodies: bench.engines.kit.waits
    waited_ms: float = 0.0
    wait_count: int = 0

    @property
    def overhead_ms(self) -> float:
        """Framework overhead: run time minus mock latency, tool time and waits by choice."""
        return self.wall_ms - self.mock_latency_ms - self.tool_ms - self.waited_ms

    def to_row(self, *, with_bodies: bool = False) -> dict[str, Any]:
        """A flat JSON-able dict (request bodies only when asked: they are large)."""
        row = dataclasses.asdict(self)
        if not with_bodies:
            row.pop("requests")
        row["overhead_ms"] = self.overhead_ms
        return row


@dataclass
class RunContext:
    """What an engine is given to reach the mock for one scenario."""

    scenario: Scenario
    mock: MockLLM | None  # in-process transport: the mock itself
    base_url: str  # loopback: http://127.0.0.1:PORT/v1 ; in-process: the mock's fake host
    transport: TransportName = "inprocess"
    debug: str | None = None  # a debug mode name (debuggability issue), None = off
    # the mock's latency profile, to tell scripted LLM latency from overhead; None: the
    # in-process mock's own profile, else zero (pass it for a loopback server started with
    # --latency realistic)
    latency: LatencyProfile | None = None
    # a deadline for the whole run, the same for every engine (a service's request deadline);
    # None: the scenario's limits.run_timeout_s, else 30 s. AgentExecutor gets it as
    # max_execution_time, the others as asyncio.timeout.
    run_timeout_s: float | None = None
    # consume the framework's user-facing token stream and measure the time to the first
    # token of the final answer (RunRecord.ttft_ms); False: the engine's ordinary call
    # (docs/engines.md, Token streaming)
    stream_tokens: bool = False


# the registry's adapter classes ("module:Class") → their engine's name
_NAMES = {spec.target: name for name, spec in REGISTRY.items()}


class Engine(ABC):
    """One contender. Every fact about the engine (its name, its description, whether it
    streams, its role) is its registry entry's (``spec``): an adapter class the registry
    names as an engine's ``target`` gets that engine's ``name`` when it is defined. A plug-in
    engine that is not in the registry sets ``name`` (and ``description`` and ``streams``)
    itself; a subclass the registry does not name keeps its parent's."""

    name: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        registered = _NAMES.get(f"{cls.__module__}:{cls.__qualname__}")
        if registered is not None:
            cls.name = registered

    @property
    def spec(self) -> EngineSpec | None:
        """This engine's entry in the registry (None: a plug-in engine)."""
        return REGISTRY.get(self.name)

    @property
    def description(self) -> str:
        """What the engine is, as the registry says it."""
        return self.spec.description if self.spec else ""

    @property
    def streams(self) -> bool:
        """Whether its ordinary run streams the LLM calls, as the registry says."""
        return self.spec.streams if self.spec else False

    @abstractmethod
    async def prepare(self, ctx: RunContext) -> Any:
        """Build the agent for ``ctx.scenario`` (untimed). Returns an opaque prepared run."""

    @abstractmethod
    async def run(self, prepared: Any) -> RunRecord:
        """Run the scenario once (timed); never raises."""

    async def aclose(self) -> None:  # noqa: B027 - optional, a no-op by default
        """Release what the engine keeps across runs (HTTP connection pools)."""
