"""Ground truth for one run: what really happened, as a list of typed facts.

The facts come from two sources that do not depend on the engine's own account of itself:

* the **scenario** — which tool calls the scripted LLM asked for on each turn, what each
  tool returns or raises, which LLM turns carry faults;
* the engine's **RunRecord** — the tools really executed (observed at the tools, with the
  real arguments, outcome and duration), the request bodies really sent to the mock, the
  final answer and the termination reason.

The request bodies are replayed through a fresh mock (same scenario, same fault counters),
which gives, for every LLM call, its step, its HTTP status and the exact token usage the mock
reported. A *step* is one LLM turn and the tool calls it asked for, numbered from 1
(step 1 = the first LLM call); a retry of the same turn stays in the same step.

Each fact is ``(kind, step, value)`` plus an optional ``key`` (the field name, for arguments
and results) and ``alts`` (accepted synonyms). ``bench.debuggability.score`` decides whether a debug
output contains it; ``docs/debuggability.md`` documents both.

The first failure is kept apart from the facts (``Failure``): the failing call, its error and
its peers (the other calls it must be told apart from), for ``bench.debuggability.localise``. Its step
is not a recall fact: it is scored once, by localisation.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.engines.base import RunRecord, ToolCallRecord
    from scenarios import Scenario

# fact kinds, in the order they are reported
TOOL = "tool"  # a tool that was executed (value: its name)
ARG = "arg"  # one argument of an executed tool call (key: name, value: value)
RESULT = "result"  # one key value of a tool's result (key: field, value: value)
ERROR = "error"  # a tool error message, an unknown tool, malformed arguments
LLM_ERROR = "llm_error"  # an LLM call that failed (HTTP 429/500, timeout)
LATENCY = "latency"  # a tool call's duration (value: milliseconds)
TOKENS = "tokens"  # one LLM call's usage (key: prompt | completion, value: tokens)
TERMINATION = "termination"  # why the run ended (value: reason, alts: synonyms)
FINAL = "final"  # the start of the final answer

KINDS: tuple[str, ...] = (
    TOOL,
    ARG,
    RESULT,
    ERROR,
    LLM_ERROR,
    LATENCY,
    TOKENS,
    TERMINATION,
    FINAL,
)

PREFIX_CHARS = 40  # long strings become facts by their first ~40 characters
MAX_RESULT_FACTS = 8  # key values taken from one tool result

# what says "this call timed out" (not the bare word "timeout": it is in every client's
# settings), and what says "the run was cut by a time limit"
TIMEOUT_WORDS = ("timed out", "timeouterror", "tooltimeout", "llmtimeout", "readtimeout")
DEADLINE_WORDS = (*TIMEOUT_WORDS, "time limit", "deadline exceeded", "deadline")
TERMINATION_SYNONYMS: dict[str, tuple[str, ...]] = {
    "stop": ("reason:stop", "final answer:"),
    "completed": ("reason:stop", "final answer:"),
    "max_steps": (
        "max_steps",
        "max steps",
        "maximum steps",
        "iteration limit",
        "max iterations",
        "max_iterations",
        "recursion limit",
        "recursion_limit",
        "step limit",
    ),
    "timeout": DEADLINE_WORDS,
    "token_budget": ("token budget", "token_budget", "budget"),
    "budget": ("token budget", "token_budget", "budget"),
    "loop": ("loop", "repeated", "same tool", "max_same_tool_calls"),
    "llm_error": (
        "llm_error",
        "ratelimiterror",
        "internalservererror",
        "apitimeouterror",
        "apiconnectionerror",
        "error code:",
    ),
    "tool_error": ("tool_error",),
}


@dataclass(frozen=True)
class Fact:
    """One thing that happened in a run and that a debug output should let you find."""

    kind: str
    step: int | None
    value: str | int | float
    key: str | None = None
    alts: tuple[str, ...] = ()

    def label(self) -> str:
        """A short human-readable form, e.g. ``arg@1 query=return policy``."""
        where = f"@{self.step}" if self.step is not None else ""
        body = f"{self.key}={self.value}" if self.key else str(self.value)
        return f"{self.kind}{where} {body}"


@dataclass(frozen=True)
class LLMCall:
    """One request of the run, replayed through a fresh mock."""

    step: int  # 1-based agent step (turn index + 1, not clamped by ``repeat``)
    turn: int  # the script turn it was answered from (clamped)
    protocol: str
    status: int  # HTTP status the mock answered with
    timed_out: bool  # the mock delayed past the scenario's llm_timeout_s
    prompt_tokens: int
    completion_tokens: int
    error: str | None = None  # the mock's error message when status != 200


@dataclass(frozen=True)
class CallRef:
    """One call of a run as a reader tells it apart: a tool call, or the LLM call of a step."""

    step: int
    tool: str | None  # None: the LLM call of the step (its retries are the same call)
    # a tool call: the id the model gave it (tool-calling protocol only) and its arguments;
    # an LLM call: those of the tool calls its answer asked for
    ids: tuple[str, ...] = ()
    args: tuple[Fact, ...] = ()  # as ``arg`` facts
    order: int = 0  # its position among the run's tool calls (LLM calls: the step)


@dataclass(frozen=True)
class Failure:
    """The first thing that went wrong in a run (for fault localisation).

    ``peers`` are the calls of the same kind, in the order they happened, the failing one
    included: every call of the failing tool that the model asked for (run or not), or every
    LLM call (one per step) for an LLM failure. Empty means the failing call is its only peer.
    """

    step: int
    tool: str | None  # the failing tool, or None when the LLM call failed
    error: Fact  # the error fact that names what went wrong
    call: CallRef | None = None  # the failing call (None: built from step and tool)
    peers: tuple[CallRef, ...] = ()

    @property
    def failing(self) -> CallRef:
        if self.call is not None:
            return self.call
        return CallRef(self.step, self.tool, order=self.step if self.tool is None else 0)

    @property
    def all_peers(self) -> tuple[CallRef, ...]:
        return self.peers or (self.failing,)

    @property
    def index(self) -> int:
        """1-based position of the failing call among its peers."""
        return self.all_peers.index(self.failing) + 1


@dataclass(frozen=True)
class GroundTruth:
    """All facts of one run, plus the first failure when there is one."""

    facts: tuple[Fact, ...]
    failure: Failure | None
    calls: tuple[LLMCall, ...]

    def by_kind(self, kind: str) -> list[Fact]:
        return [f for f in self.facts if f.kind == kind]


# -- helpers -------------------------------------------------------------------------------


def prefix(text: str, limit: int = PREFIX_CHARS) -> str:
    """The first ``limit`` characters of ``text``, cut back to a word boundary."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space >= limit // 2 else cut


def scalar_text(value: Any) -> str:
    """How a scalar reads in JSON-ish output (``true``, ``null``, ``89.0``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return prefix(value)
    if isinstance(value, (int, float)):
        return repr(value)
    return prefix(json.dumps(value, ensure_ascii=False, default=str))


def leaves(value: Any, key: str | None = None) -> Iterator[tuple[str | None, Any]]:
    """(nearest dict key, scalar) pairs of a nested value, depth first."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, str(k))
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from leaves(v, key)
    else:
        yield key, value


def _kv_facts(kind: str, step: int | None, value: Any, limit: int | None = None) -> list[Fact]:
    out: list[Fact] = []
    for key, leaf in leaves(value):
        text = scalar_text(leaf)
        if not text:
            continue
        alts = ("none",) if leaf is None else ()
        out.append(Fact(kind, step, text, key=key, alts=alts))
        if limit is not None and len(out) >= limit:
            break
    return out


# -- replaying the requests ----------------------------------------------------------------


def replay_calls(scenario: Scenario, requests: Sequence[dict[str, Any]]) -> list[LLMCall]:
    """Replay the run's request bodies through a fresh mock: step, status, usage per call."""
    from bench.referee import MockLLM
    from bench.referee.protocols import detect_protocol, turn_index

    mock = MockLLM(scenarios={scenario.name: scenario}, record=True)
    calls: list[LLMCall] = []
    for body in requests:
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            continue
        body = {**body, "model": f"scenario/{scenario.name}"}
        raw = json.dumps(body, sort_keys=True).encode()
        reply = mock.handle(raw)
        recorded = mock.requests[-1]
        protocol = detect_protocol(body)
        step = turn_index(body["messages"], protocol) + 1
        timed_out = reply.status == 200 and reply.delay_s > scenario.limits.llm_timeout_s
        error = None
        if reply.status != 200:
            try:
                error = json.loads(reply.body)["error"]["message"]
            except (ValueError, KeyError, TypeError):
                error = f"HTTP {reply.status}"
        calls.append(
            LLMCall(
                step=step,
                turn=recorded.turn if recorded.turn is not None else step - 1,
                protocol=protocol,
                status=reply.status,
                timed_out=timed_out,
                prompt_tokens=recorded.prompt_tokens,
                completion_tokens=recorded.completion_tokens,
                error=error,
            )
        )
    return calls


# -- the facts -----------------------------------------------------------------------------


def _tool_error_fact(
    scenario: Scenario, step: int | None, record: ToolCallRecord, name_known: bool
) -> Fact:
    tool = scenario.tool_map.get(record.name) if name_known else None
    behavior = tool.behavior if tool is not None else None
    if behavior is not None and behavior.hangs:
        return Fact(ERROR, step, "timed out", alts=TIMEOUT_WORDS)
    if behavior is not None and behavior.raises is not None:
        return Fact(ERROR, step, prefix(behavior.raises))
    if behavior is not None and behavior.fail_times:
        return Fact(ERROR, step, prefix(behavior.fail_message))
    message = record.error or "error"
    lowered = message.lower()
    if any(word in lowered for word in TIMEOUT_WORDS):
        return Fact(ERROR, step, "timed out", alts=TIMEOUT_WORDS)
    return Fact(ERROR, step, prefix(message))


def _script(scenario: Scenario, protocol: str) -> list[Any]:
    return scenario.react_script() if protocol == "react" else list(scenario.script)


def ground_truth(
    scenario: Scenario,
    record: RunRecord,
    *,
    calls: Sequence[LLMCall] | None = None,
) -> GroundTruth:
    """The facts of one run of ``scenario`` (see the module docstring)."""
    if calls is None:
        calls = replay_calls(scenario, record.requests)
    facts: list[Fact] = []
    failing: tuple[CallRef, Fact] | None = None
    executed = list(record.tools)
    cursor = 0
    requested_calls: list[CallRef] = []  # every tool call the model asked for, in order

    def note_failure(call: CallRef, error: Fact) -> None:
        nonlocal failing
        if failing is None or call.step < failing[0].step:
            failing = (call, error)

    # LLM-side facts: usage per answered call, errors per failed step
    failed_llm_steps: set[int] = set()
    for call in calls:
        if call.status != 200:
            if call.step not in failed_llm_steps:
                failed_llm_steps.add(call.step)
                fact = Fact(
                    LLM_ERROR,
                    call.step,
                    prefix(call.error or f"HTTP {call.status}"),
                    alts=(f"error code: {call.status}",),
                )
                facts.append(fact)
                note_failure(CallRef(call.step, None, order=call.step), fact)
            continue
        if call.timed_out:
            if call.step not in failed_llm_steps:
                failed_llm_steps.add(call.step)
                fact = Fact(LLM_ERROR, call.step, "timed out", alts=TIMEOUT_WORDS)
                facts.append(fact)
                note_failure(CallRef(call.step, None, order=call.step), fact)
            continue
        facts.append(Fact(TOKENS, call.step, call.prompt_tokens, key="prompt"))
        facts.append(Fact(TOKENS, call.step, call.completion_tokens, key="completion"))

    # tool-side facts: walk the answered turns, match the executed tools in order
    answered = [c for c in calls if c.status == 200 and not c.timed_out]
    seen_steps: set[int] = set()
    for call in answered:
        if call.step in seen_steps:
            continue
        seen_steps.add(call.step)
        script = _script(scenario, call.protocol)
        turn = script[min(call.turn, len(script) - 1)]
        for index, requested in enumerate(turn.tool_calls):
            step = call.step
            ref = CallRef(
                step,
                requested.name,
                _call_ids(call, index, requested),
                tuple(_kv_facts(ARG, step, requested.args))
                if requested.raw_arguments is None
                else (),
                order=len(requested_calls) + 1,
            )
            requested_calls.append(ref)
            if requested.unknown:
                fact = Fact(ERROR, step, requested.name)
                facts.append(fact)
                note_failure(ref, fact)
                continue
            if requested.raw_arguments is not None:
                facts.append(Fact(TOOL, step, requested.name))
                fact = Fact(ERROR, step, prefix(requested.raw_arguments))
                facts.append(fact)
                note_failure(ref, fact)
                match = _next(executed, cursor, requested.name)
                if match is not None:  # an engine that ran it anyway
                    cursor = match + 1
                continue
            match = _next(executed, cursor, requested.name)
            if match is None:
                continue  # asked for but not run (loop guard, budget, abort)
            cursor = match + 1
            real = executed[match]
            requested_calls[-1] = ref = CallRef(
                step, ref.tool, ref.ids, tuple(_kv_facts(ARG, step, real.args)), ref.order
            )
            facts.extend(
                _executed_facts(scenario, step, real, functools.partial(note_failure, ref))
            )
    # executed calls the script walk did not place (should not happen): still facts
    for record_call in executed[cursor:]:
        facts.extend(_executed_facts(scenario, None, record_call, None))

    failure = None
    if failing is not None:
        failed, error = failing
        if failed.tool is None:
            peers = tuple(_llm_call(s, requested_calls) for s in sorted({c.step for c in calls}))
            failed = next(p for p in peers if p.step == failed.step)
        else:
            peers = tuple(c for c in requested_calls if c.tool == failed.tool)
        failure = Failure(failed.step, failed.tool, error, failed, peers)
    reason = record.termination or record.status
    if reason:
        alts = TERMINATION_SYNONYMS.get(reason, ())
        exc_type = record.error.split(":", 1)[0].strip() if record.error else ""
        if record.status in ("failed", "error") and exc_type.isidentifier():
            # the run ended on an exception: naming that exception says why
            alts = (*alts, exc_type)
        facts.append(Fact(TERMINATION, None, reason, alts=alts))
    if record.status == "completed" and record.final_answer:
        facts.append(Fact(FINAL, None, prefix(record.final_answer)))
    return GroundTruth(tuple(dedupe(facts)), failure, tuple(calls))


def _call_ids(call: LLMCall, index: int, requested: Any) -> tuple[str, ...]:
    """The id the mock gave this tool call (``bench.referee.protocols.call_id``); only the
    tool-calling protocol has ids (ReAct and legacy function calling do not)."""
    if call.protocol != "tools":
        return ()
    from bench.referee.protocols import call_id

    return (call_id(call.step - 1, index, requested),)


def _llm_call(step: int, requested: Sequence[CallRef]) -> CallRef:
    """The LLM call of ``step``, known by the tool calls its answer asked for."""
    asked = [c for c in requested if c.step == step]
    ids = tuple(i for c in asked for i in c.ids)
    return CallRef(step, None, ids, tuple(a for c in asked for a in c.args), order=step)


def _next(executed: list[ToolCallRecord], start: int, name: str) -> int | None:
    for i in range(start, len(executed)):
        if executed[i].name == name:
            return i
    return None


def _executed_facts(
    scenario: Scenario,
    step: int | None,
    call: ToolCallRecord,
    note_failure: Callable[[Fact], None] | None,
) -> list[Fact]:
    out = [Fact(TOOL, step, call.name)]
    out += _kv_facts(ARG, step, call.args)
    tool = scenario.tool_map.get(call.name)
    if call.ok:
        if tool is not None and tool.behavior.returns is not None and tool.handler is None:
            out += _kv_facts(RESULT, step, tool.behavior.returns, MAX_RESULT_FACTS)
    else:
        error = _tool_error_fact(scenario, step, call, tool is not None)
        out.append(error)
        if note_failure is not None:
            note_failure(error)
    out.append(Fact(LATENCY, step, round(call.duration_ms, 3), key=call.name))
    return out


def dedupe(facts: Iterable[Fact]) -> list[Fact]:
    """Drop repeats of a text fact (same kind, key and value at another step).

    Text matching cannot tell steps apart, so a loop that calls the same tool fifteen times
    would otherwise count one sighting fifteen times. Numeric facts (tokens, latency) are
    kept per call.
    """
    seen: set[tuple[str, str | None, str]] = set()
    out: list[Fact] = []
    for fact in facts:
        if fact.kind in (TOKENS, LATENCY):
            out.append(fact)
            continue
        key = (fact.kind, fact.key, str(fact.value))
        if key in seen:
            continue
        seen.add(key)
        out.append(fact)
    return out
