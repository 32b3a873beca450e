"""The scenario format: pydantic models for ``scenarios/NAME.yaml``.

A scenario is data: the tools an agent gets, what the mocked LLM answers turn by turn,
the limits every engine maps to its own knobs, and what must come out.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from jsonschema import Draft202012Validator
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from scenarios.argschema import closed_schema, schema_problem
from scenarios.checks import cross_problems
from scenarios.tool_results import result_text

TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
FAULT_TAGS = frozenset({"fault", "failure"})  # in the fault matrix even if nothing fails
HAPPY_PATH_TAG = "happy-path"  # in the performance sections even if something fails
REFERENCE_TAG = "reference"  # the reference scenario (customer_returns)
FaultKind = Literal["llm", "tool", "guard"]
FAULT_KINDS: tuple[FaultKind, ...] = ("llm", "tool", "guard")
Status = Literal["completed", "failed", "aborted", "error"]
MAX_RECORDED_MS = 3_600_000.0  # an hour: the bound of every recorded duration
MAX_RECORDED_TOKENS = 10_000_000
Milliseconds = Annotated[float, Field(ge=0, le=MAX_RECORDED_MS)]

# Every number a file sets is bounded, so that a shared scenario cannot plan a run of days
# or grow a worker without limit (the loader bounds the file's size and shape).
MAX_LATENCY_MS = 60_000.0  # one scripted delay: a minute
MAX_WAIT_S = 600.0  # one timeout or LLM delay: ten minutes
CROSS_CHECKED = "cross_checked"  # validation context: the caller ran ``cross_problems`` itself


class _Strict(BaseModel):
    # each model's validator is built on its first use, not at import: a model a process
    # never validates (a recorded result, a handler's policy) costs it nothing
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class RecordedResult(_Strict):
    """What a real tool returned for one call (recorded scenarios, ``bench.traffic``)."""

    args: dict[str, Any] = Field(default_factory=dict)
    returns: str = Field(description="the tool message's content, exactly as the agent sent it")


class ToolBehavior(_Strict):
    """What a scenario tool does when called: exactly one of returns / raises / hangs / results."""

    returns: Any = None
    raises: str | None = None
    hangs: bool = False
    latency_ms: float = Field(default=0.0, ge=0, le=MAX_LATENCY_MS)
    fail_times: int = Field(
        default=0, ge=0, le=100, description="raise on the first N calls, then return"
    )
    fail_message: str = "temporary failure"
    fail_rate: float = Field(
        default=0.0,
        ge=0,
        le=0.9,
        description="each call fails with this probability (drawn the same for every engine: "
        "``bench.engines.kit.tools``); a call repeating one that just failed gets through",
    )
    # 1 MiB of JSON is ~250k tokens: past every model's context window
    returns_size_kb: float | None = Field(default=None, gt=0, le=1024)
    results: list[RecordedResult] = Field(
        default_factory=list,
        max_length=10_000,
        description="recorded results by arguments: a call gets the next unused entry whose "
        "args equal its own",
    )

    @model_validator(mode="after")
    def _one_outcome(self) -> ToolBehavior:
        chosen = [
            name
            for name, on in (
                ("returns", self.returns is not None),
                ("raises", self.raises is not None),
                ("hangs", self.hangs),
                ("results", bool(self.results)),
            )
            if on
        ]
        if len(chosen) > 1:
            raise ValueError(
                f"choose one of returns | raises | hangs | results, not {' and '.join(chosen)}"
            )
        return self


class ToolDef(_Strict):
    """A tool the agent is given: its schema is exactly what the LLM sees."""

    name: str = Field(pattern=TOOL_NAME_PATTERN)
    description: str = Field(min_length=1)
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    behavior: ToolBehavior = Field(default_factory=ToolBehavior)
    handler: str | None = Field(default=None, pattern=r"^[\w.]+:\w+$")
    require_confirmation: bool = False
    approval: Literal["approve", "deny"] = Field(
        default="approve",
        description="what the simulated user answers when a confirmation is asked for",
    )

    @field_validator("parameters")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        problem = schema_problem(schema)
        if problem is not None:
            raise ValueError(problem)
        return schema

    @property
    def args_schema(self) -> dict[str, Any]:
        """The schema arguments are judged by: ``parameters`` closed to other keys
        (``scenarios.argschema``); never sent to the LLM."""
        return closed_schema(self.parameters)

    def valid_args(self, args: Any) -> bool:
        """Whether ``args`` fit the tool's closed schema (the harness's ``valid_tool_args``)."""
        return bool(Draft202012Validator(self.args_schema).is_valid(args))

    @property
    def fixed_result(self) -> str | None:
        """The text a successful call returns, when it is fixed by the behaviour (not for
        handlers, tools that always raise, or hang)."""
        b = self.behavior
        if self.handler is not None or b.raises is not None or b.hangs or b.results:
            return None
        return result_text(b.returns, b.returns_size_kb)


class ScriptToolCall(_Strict):
    """One tool call the mocked LLM asks for."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str | None = Field(
        default=None, description="sent verbatim instead of args: a malformed-JSON fault"
    )
    recorded_arguments: str | None = Field(
        default=None,
        max_length=1_000_000,
        description="the arguments text exactly as a real model wrote it (recorded scenarios): "
        "sent byte for byte instead of re-serialising args, which it must parse to",
    )
    unknown: bool = Field(default=False, description="deliberately names an undefined tool")
    id: str | None = None

    @model_validator(mode="after")
    def _recorded_matches_args(self) -> ScriptToolCall:
        if self.recorded_arguments is None:
            return self
        if self.raw_arguments is not None:
            raise ValueError("choose one of raw_arguments | recorded_arguments")
        try:
            parsed = json.loads(self.recorded_arguments)
        except ValueError:
            raise ValueError(
                "recorded_arguments: not valid JSON; malformed arguments go in raw_arguments"
            ) from None
        if parsed != self.args:
            raise ValueError("recorded_arguments: does not parse to args")
        return self


StreamBreak = Literal["truncate", "drop", "corrupt", "stall"]
MAX_FAULT_TIMES = 100


def _fault_times(value: Any) -> Any:
    """A number of requests, or ``always``: one message for a wrong value, not one per type
    of the union."""
    if value == "always":
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be a number of requests from 1 to {MAX_FAULT_TIMES}, or 'always'")
    if value < 1:
        raise ValueError("Input should be greater than or equal to 1")
    if value > MAX_FAULT_TIMES:
        raise ValueError(f"Input should be less than or equal to {MAX_FAULT_TIMES}")
    return value


class Fault(_Strict):
    """An LLM-side failure played on a turn before its real answer: an HTTP error status, a
    delay before the answer, a broken answer body (``stream``) or a slow first token.

    ``stream`` breaks a streamed answer (SSE) mid-way, and a plain JSON answer the same way:
    ``truncate`` ends it early and cleanly (no finish reason, no ``[DONE]``; a plain body cut
    mid-JSON), ``drop`` closes the connection mid-body, ``corrupt`` garbles one event (a
    ``data:`` line that is not JSON; a plain body with a byte that no JSON allows), ``stall``
    goes silent for ``stall_s`` mid-body, then sends the rest (``resume``) or closes.
    """

    status: int | None = Field(default=None, ge=400, le=599)
    retry_after_s: float | None = Field(default=None, ge=0, le=60)
    delay_s: float | None = Field(default=None, gt=0, le=MAX_WAIT_S)
    stream: StreamBreak | None = Field(default=None, description="how the answer body breaks")
    at: float = Field(
        default=0.5,
        gt=0,
        lt=1,
        description="where the body breaks: the share of the answer's chunks (a plain body: "
        "of its bytes) sent before it",
    )
    stall_s: float | None = Field(default=None, gt=0, le=MAX_WAIT_S)
    resume: bool = Field(default=True, description="after a stall: send the rest, else close")
    first_token_s: float | None = Field(
        default=None,
        gt=0,
        le=MAX_WAIT_S,
        description="a slow first token: a streamed answer's headers come at once, its first "
        "event this late; a plain answer arrives this late",
    )
    times: Annotated[int | Literal["always"], BeforeValidator(_fault_times)] = Field(
        default=1, description="requests (by body) that get the fault; 'always': every one"
    )
    message: str | None = None

    @model_validator(mode="after")
    def _has_effect(self) -> Fault:
        if (
            self.status is None
            and self.delay_s is None
            and self.stream is None
            and self.first_token_s is None
        ):
            raise ValueError("a fault needs a status, a delay_s, a stream or a first_token_s")
        if self.status is not None and (self.stream or self.first_token_s):
            raise ValueError("a status fault answers an error body: it has no stream to break")
        if (self.stream == "stall") != (self.stall_s is not None):
            raise ValueError("stream: stall needs stall_s, and stall_s needs stream: stall")
        if "at" in self.model_fields_set and self.stream is None:
            raise ValueError("at: says where a stream breaks; set stream too")
        if "resume" in self.model_fields_set and self.stream != "stall":
            raise ValueError("resume: only applies to stream: stall")
        return self

    def strikes(self, earlier: int) -> bool:
        """Whether a request that ``earlier`` requests with the same body preceded gets it."""
        return self.times == "always" or earlier < self.times

    def strikes_within(self, requests: int) -> int:
        """How many of ``requests`` requests with one body get it."""
        return requests if self.times == "always" else min(self.times, requests)


class TurnTiming(_Strict):
    """How long a real model took for one turn, as recorded (``bench.traffic``).

    The ``recorded`` latency profile plays it back: the first answer chunk after ``ttft_ms``,
    the next ones spaced like ``gaps_ms``, the last byte at ``total_ms``. All from the moment
    the request was sent.
    """

    stream: bool = Field(description="whether the recorded call was streamed (SSE)")
    ttft_ms: Milliseconds | None = Field(
        default=None, description="to the first content or tool-call chunk (streamed calls)"
    )
    total_ms: Milliseconds = Field(description="to the last byte of the answer")
    gaps_ms: list[Milliseconds] = Field(
        default_factory=list,
        max_length=100_000,
        description="between consecutive content / tool-call chunks (streamed calls)",
    )
    prompt_tokens: int | None = Field(default=None, ge=0, le=MAX_RECORDED_TOKENS)
    completion_tokens: int | None = Field(default=None, ge=0, le=MAX_RECORDED_TOKENS)

    @model_validator(mode="after")
    def _consistent(self) -> TurnTiming:
        if not self.stream:
            if self.ttft_ms is not None or self.gaps_ms:
                raise ValueError("a call that was not streamed has no ttft_ms or gaps_ms")
            return self
        if self.ttft_ms is None:
            if self.gaps_ms:
                raise ValueError("gaps_ms needs ttft_ms")
            return self
        # rounding to the microsecond may push the sum a hair past the total
        slack = 0.01 + 0.001 * len(self.gaps_ms)
        if self.ttft_ms + sum(self.gaps_ms) > self.total_ms + slack:
            raise ValueError("ttft_ms plus gaps_ms exceeds total_ms")
        return self

    def share(self, index: int, parts: int) -> TurnTiming:
        """Part ``index`` of ``parts`` when one answer is played as several calls (ReAct: a
        call per action): each waits for its own first token, and the time spent generating
        the answer (chunk gaps, then the tail) is shared out."""
        tokens = self.completion_tokens
        update: dict[str, Any] = {
            "completion_tokens": None if tokens is None else round(tokens / parts),
        }
        if self.ttft_ms is None:
            update["total_ms"] = self.total_ms / parts
            return self.model_copy(update=update)
        size = -(-len(self.gaps_ms) // parts)
        gaps = self.gaps_ms[index * size : (index + 1) * size]
        tail = max(self.total_ms - self.ttft_ms - sum(self.gaps_ms), 0.0)
        update.update(gaps_ms=gaps, total_ms=self.ttft_ms + sum(gaps) + tail / parts)
        return self.model_copy(update=update)


class Needs(_Strict):
    """What the model must have read to give a turn's answer (the mock answers only from
    what it received): each ``seen`` text must be in the request's messages, else the mock
    answers ``otherwise`` — what a model that did not see it would say."""

    seen: list[Annotated[str, Field(min_length=1)]] = Field(min_length=1, max_length=16)
    otherwise: str = Field(min_length=1, description="the answer when a text is missing")

    def missing(self, received: str) -> list[str]:
        """The ``seen`` texts that ``received`` (the request's message texts) lacks."""
        return [text for text in self.seen if text not in received]


class Turn(_Strict):
    """One answer of the mocked LLM: tool calls, or content (the final answer)."""

    content: str | None = None
    tool_calls: list[ScriptToolCall] = Field(default_factory=list, max_length=128)
    fault: Fault | None = None
    latency_ms: float | None = Field(default=None, ge=0, le=MAX_LATENCY_MS)
    repeat: bool = False
    retry: bool = Field(
        default=False,
        description=(
            "the model repeats the previous turn's calls because one of them failed: the "
            "mock plays this turn only when a result of the previous turn is not the tool's "
            "scripted result (a retry middleware that already got it skips the turn)"
        ),
    )
    timing: TurnTiming | None = Field(
        default=None, description="recorded timings, played by the 'recorded' latency profile"
    )
    needs: Needs | None = Field(
        default=None, description="texts the model must have received to give this answer"
    )

    @model_validator(mode="after")
    def _says_something(self) -> Turn:
        if self.content is None and not self.tool_calls:
            raise ValueError("a turn needs content or tool_calls")
        return self

    def as_received(self, received: str) -> Turn:
        """This turn, or — when ``received`` (the texts of the request's messages) lacks a
        text it ``needs`` — the answer of a model that did not see it."""
        if self.needs is None or not self.needs.missing(received):
            return self
        return Turn(content=self.needs.otherwise, latency_ms=self.latency_ms, timing=self.timing)


class Message(_Strict):
    """A prior message of the conversation (multi-turn scenarios)."""

    role: Literal["user", "assistant"]
    content: str


class Limits(_Strict):
    """The limits each engine maps onto its own knobs (see the engines' docs)."""

    max_steps: int = Field(default=15, ge=1, le=200)
    tool_timeout_s: float = Field(default=30.0, gt=0, le=MAX_WAIT_S)
    llm_timeout_s: float = Field(default=20.0, gt=0, le=MAX_WAIT_S)
    max_retries: int = Field(default=3, ge=0, le=20)
    max_same_tool_calls: int = Field(default=2, ge=1, le=1000)
    token_budget: int | None = Field(default=12000, ge=1, le=10_000_000)
    breaker_threshold: int = Field(default=3, ge=1, le=1000)
    run_timeout_s: float | None = Field(
        default=None,
        gt=0,
        le=3600,
        description="deadline for the whole run; None: the harness default",
    )


STATUSES: tuple[str, ...] = ("completed", "failed", "aborted", "error")


def _status_spec(value: Any) -> Any:
    """A status, or a non-empty list of statuses any of which passes."""
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ValueError("must be a status or a non-empty list of statuses")
    for item in items:
        if item not in STATUSES:
            raise ValueError("Input should be 'completed', 'failed', 'aborted' or 'error'")
    return value


StatusSpec = Annotated[Any, BeforeValidator(_status_spec)]


class _Expectations(_Strict):
    """What a run must show. *Outcome* fields say what production needs and are judged for
    every engine by the report's fault matrix; *flow* fields (``llm_calls``, ``tool_calls``,
    ``tools``) pin the exact path an engine takes and are checked by the tests and the
    runner's ✗ flag only. The judging itself is ``scenarios.expect.misses``."""

    # outcome
    status: StatusSpec | None = None
    termination: str | list[str] | None = Field(
        default=None, description="the harness's termination names (bench.engines.base)"
    )
    final_contains: str | None = None
    final_contains_if_completed: str | None = Field(
        default=None,
        description="a completed run's answer must contain this; a run that did not complete "
        "passes (a fault that may be retried or may fail cleanly, never answered half)",
    )
    forbidden_tools: list[str] | None = Field(
        default=None, description="tools that must never run (e.g. an unapproved action)"
    )
    max_tool_calls: int | None = Field(default=None, ge=0, description="tool executions at most")
    max_llm_calls: int | None = Field(default=None, ge=0, description="requests at most")
    max_request_tokens: int | None = Field(
        default=None, ge=1, description="no request may carry more prompt tokens than this"
    )
    max_tool_ms: float | None = Field(
        default=None, gt=0, description="every tool execution ends (or is cut) within this"
    )
    valid_tool_args: bool | None = Field(
        default=None, description="true: no tool ran with arguments outside its JSON Schema"
    )
    # flow
    llm_calls: int | None = Field(default=None, ge=0)
    tool_calls: int | None = Field(default=None, ge=0)
    tools: list[str] | None = None


class ExpectOverride(_Expectations):
    """Per-engine expectations, only where behaviour legitimately differs."""

    reason: str = Field(min_length=1, description="why this engine differs")


class Expect(_Expectations):
    """What must come out of a run, for every engine unless overridden."""

    status: StatusSpec = "completed"
    engines: dict[str, ExpectOverride] = Field(default_factory=dict)

    def for_engine(self, engine: str) -> dict[str, Any]:
        """The effective expectations for one engine (overrides applied).

        An override replaces the fields it sets; an explicit ``null`` drops a base
        expectation for that engine (e.g. ``final_contains: null`` when it fails).
        """
        merged = self.model_dump(exclude={"engines"})
        override = self.engines.get(engine)
        if override is not None:
            merged.update(override.model_dump(exclude={"reason"}, exclude_unset=True))
        return merged

    def outcome(self) -> dict[str, Any]:
        """The base expectation's outcome fields: what a production agent must reach."""
        return self.model_dump(include=set(OUTCOME_FIELDS))


OUTCOME_FIELDS = frozenset(
    {
        "status",
        "termination",
        "final_contains",
        "final_contains_if_completed",
        "forbidden_tools",
        "max_tool_calls",
        "max_llm_calls",
        "max_request_tokens",
        "max_tool_ms",
        "valid_tool_args",
    }
)


class Scenario(_Strict):
    """One benchmark scenario (the format: docs/scenarios.md)."""

    name: str = Field(pattern=r"^[a-z0-9_]+$")
    description: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list, max_length=64)
    system_prompt: str = "You are a helpful assistant. Use the tools."
    history: list[Message] = Field(default_factory=list, max_length=1000)
    user: str = Field(min_length=1)
    tools: list[ToolDef] = Field(default_factory=list, max_length=512)
    script: list[Turn] = Field(min_length=1, max_length=1000)
    limits: Limits = Field(default_factory=Limits)
    expect: Expect = Field(default_factory=Expect)

    @property
    def tool_map(self) -> dict[str, ToolDef]:
        return {tool.name: tool for tool in self.tools}

    # -- what the harness does with it (docs/scenarios.md, "What a scenario is for") --------

    @property
    def fault_kinds(self) -> frozenset[FaultKind]:
        """What the scenario's data makes go wrong: ``llm`` (a scripted LLM fault), ``tool``
        (a tool that raises, hangs or fails its first calls), ``guard`` (the model misbehaves
        or a limit must act: an unknown tool, malformed arguments, a repeating last turn, a
        denied confirmation, an expected abort). Tagged ``fault`` or ``failure`` with none of
        these: ``guard``. Empty: not a fault scenario."""
        kinds = self._derived_kinds
        if not kinds and FAULT_TAGS & set(self.tags):
            return frozenset({"guard"})
        return kinds

    @property
    def fault_kind(self) -> FaultKind | None:
        """The main one of ``fault_kinds`` (llm, then tool, then guard), or None."""
        return next((k for k in FAULT_KINDS if k in self.fault_kinds), None)

    @property
    def is_fault(self) -> bool:
        """In the fault matrix: judged by its outcome on every engine."""
        return bool(self.fault_kinds)

    @property
    def is_performance(self) -> bool:
        """In the performance sections (their completed runs): tagged ``happy-path``, or
        nothing in its data goes wrong. A scenario can be both this and a fault scenario."""
        return HAPPY_PATH_TAG in self.tags or not self._derived_kinds

    @property
    def is_reference(self) -> bool:
        """Tagged ``reference``: each worker's cold first run and the throughput phase."""
        return REFERENCE_TAG in self.tags

    @property
    def _derived_kinds(self) -> frozenset[FaultKind]:
        kinds: set[FaultKind] = set()
        if any(turn.fault is not None for turn in self.script):
            kinds.add("llm")
        if any(t.behavior.raises or t.behavior.hangs or t.behavior.fail_times for t in self.tools):
            kinds.add("tool")
        calls = [call for turn in self.script for call in turn.tool_calls]
        statuses = {self.expect.status} if isinstance(self.expect.status, str) else set()
        statuses |= set(self.expect.status) if isinstance(self.expect.status, list) else set()
        if (
            any(call.unknown or call.raw_arguments is not None for call in calls)
            or self.script[-1].repeat
            or any(t.require_confirmation and t.approval == "deny" for t in self.tools)
            or "aborted" in statuses
        ):
            kinds.add("guard")
        return frozenset(kinds)

    @model_validator(mode="wrap")
    @classmethod
    def _cross_check(cls, data: Any, handler: Any, info: ValidationInfo) -> Scenario:
        # the loader runs cross_problems on the file's data itself, in the same pass as the
        # field checks; a scenario built in code is checked here, on its validated data
        scenario: Scenario = handler(data)
        if isinstance(data, Scenario) or (info.context or {}).get(CROSS_CHECKED):
            return scenario
        problems = cross_problems(scenario.model_dump())
        if problems:
            raise ValueError("; ".join(problems))
        return scenario

    def react_script(self) -> list[Turn]:
        """The script as a ReAct client sees it: one action per turn."""
        turns: list[Turn] = []
        for turn in self.script:
            if len(turn.tool_calls) <= 1:
                turns.append(turn)
                continue
            for i, call in enumerate(turn.tool_calls):
                turns.append(
                    turn.model_copy(
                        update={
                            "tool_calls": [call],
                            "content": None,
                            "fault": turn.fault if i == 0 else None,
                            "repeat": turn.repeat and i == len(turn.tool_calls) - 1,
                            "timing": turn.timing and turn.timing.share(i, len(turn.tool_calls)),
                        }
                    )
                )
        return turns
