"""What the agent's real tools did, as the scenario's tool behaviour.

The builder sees each tool call in the model's answer and, in the next request, the tool
message the agent sent back. What the tool itself did — its duration, an exception, a
confirmation asked for or refused — only the agent knows: it reports a ``ToolRun`` per
execution (``bench.traffic.observe``). Each call is matched to the first unused run of the
same tool with the same arguments that started between the call's answer and the next
request. Per tool, from its calls in the order the run made them:

- ``latency_ms``: the median duration of its executions;
- leading failures → ``fail_times: N`` with the first one's ``fail_message`` (all failed:
  ``raises``); their tool messages (the agent's rendering of the error) are no result;
- ``require_confirmation`` when the tool declared it or a call was refused; ``approval:
  deny`` when the first decision was a refusal. A refused call never ran: no result;
- the rest is ``returns`` / ``results`` from the tool messages, as without observation.

A failure after a success cannot be replayed (``fail_times`` fails a tool's first calls):
it stays the text the agent sent, with a note. A call with no run keeps that text too.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scenarios.loader import MAX_STRING_CHARS
from scenarios.schema import MAX_LATENCY_MS, RecordedResult, ToolBehavior

MAX_FAIL_TIMES = 100  # ToolBehavior.fail_times's bound


class TextTooLong(ValueError):
    """A recorded text longer than a scenario file may hold; the message says where."""


def check_fits(text: str, where: str) -> None:
    """Raise ``TextTooLong`` when ``text`` is longer than a scenario's text may be."""
    if len(text) > MAX_STRING_CHARS:
        raise TextTooLong(
            f"{where}: {len(text):,} characters; a scenario text holds at most {MAX_STRING_CHARS:,}"
        )


class RunMatcher:
    """Hands out the reported runs to the calls they answer, each run once."""

    def __init__(self, runs: Sequence[Any]):
        self.runs = list(runs)
        self.used: set[int] = set()

    def take(
        self, name: str, args: dict[str, Any], after: float | None, before: float | None
    ) -> Any:
        """The first unused run of ``name`` with ``args`` started in ``[after, before]``."""
        for index, run in enumerate(self.runs):
            if index in self.used or run.name != name or run.args != args:
                continue
            at = run.started_at
            if at is not None and (
                (after is not None and at < after) or (before is not None and at > before)
            ):
                continue
            self.used.add(index)
            return run
        return None

    def unmatched(self) -> list[str]:
        """One note per run that answered no recorded call."""
        return [
            f"tool run {index + 1} ({run.name}({json.dumps(run.args, ensure_ascii=False)}), "
            f"{run.outcome}): answers no recorded tool call (arguments changed by the "
            "framework, or a call outside the recorded runs)"
            for index, run in enumerate(self.runs)
            if index not in self.used
        ]


@dataclass
class Execution:
    """One call of a tool in a recorded run: what the agent sent back, and what it reported."""

    turn: int
    args: dict[str, Any]
    content: str | None  # the tool message's text (None: no next request holds one)
    run: Any  # the matched ToolRun, or None
    where: str  # the tool message, for error lines: "exchange 2: messages[3] (...)"

    @property
    def outcome(self) -> str | None:
        return self.run.outcome if self.run is not None else None


@dataclass
class Derived:
    """A tool's behaviour in the scenario, and what the builder needs beside it."""

    behavior: ToolBehavior
    require_confirmation: bool = False
    approval: str = "approve"
    failed_turns: set[int] = field(default_factory=set)  # turns whose call is a replayed failure
    refused: bool = False
    # the refused calls, as (turn, arguments as JSON): they never ran
    refused_calls: set[tuple[int, str]] = field(default_factory=set)


def derive(name: str, executions: list[Execution], notes: list[str]) -> Derived:
    """The behaviour of tool ``name`` from its calls in one run (notes: what it cannot hold)."""
    executed = [e for e in executions if e.outcome != "denied"]
    leading = 0
    while leading < len(executed) and executed[leading].outcome == "raised":
        leading += 1
    results = []
    for index, execution in enumerate(executed):
        if index < leading:
            continue
        if execution.outcome == "raised":
            notes.append(
                f"{execution.where}: {name} raised after it had returned; a scenario fails only "
                "a tool's first calls: replayed as the text the agent sent"
            )
        if execution.content is not None:
            check_fits(execution.content, execution.where)
            results.append(RecordedResult(args=execution.args, returns=execution.content))
    behavior = _returns(results)
    update: dict[str, Any] = {}
    durations = [e.run.duration_ms for e in executed if e.run and e.run.duration_ms is not None]
    if durations:
        latency = round(statistics.median(durations), 1)
        if latency > MAX_LATENCY_MS:
            notes.append(
                f"tool {name}: a median duration of {latency:,} ms; replayed as "
                f"{MAX_LATENCY_MS:,.0f} ms, a scenario's longest"
            )
        update["latency_ms"] = min(latency, MAX_LATENCY_MS)
    failures = [e.run.error or "the tool raised" for e in executed[:leading]]
    if failures:
        if len(set(failures)) > 1:
            notes.append(f"tool {name}: its failures differ; every one replays the first")
        if leading == len(executed):
            behavior = ToolBehavior()
            update["raises"] = failures[0]
        else:
            if leading > MAX_FAIL_TIMES:
                notes.append(f"tool {name}: failed {leading} times; replayed {MAX_FAIL_TIMES}")
            update["fail_times"] = min(leading, MAX_FAIL_TIMES)
            update["fail_message"] = failures[0]
    decisions = [
        e.outcome == "denied"
        for e in executions
        if e.outcome == "denied" or (e.run is not None and e.run.require_confirmation)
    ]
    if len(set(decisions)) > 1:
        notes.append(
            f"tool {name}: confirmed once and refused once; the simulated user answers every "
            f"time as the first time ({'deny' if decisions[0] else 'approve'})"
        )
    return Derived(
        behavior=ToolBehavior.model_validate(behavior.model_dump(exclude_defaults=True) | update),
        require_confirmation=bool(decisions),
        approval="deny" if decisions and decisions[0] else "approve",
        failed_turns={e.turn for e in executed[:leading]},
        refused=any(decisions),
        refused_calls={
            (e.turn, json.dumps(e.args, sort_keys=True))
            for e in executions
            if e.outcome == "denied"
        },
    )


def _returns(results: list[RecordedResult]) -> ToolBehavior:
    if not results:
        return ToolBehavior()
    if len({r.returns for r in results}) == 1:
        return ToolBehavior(returns=as_value(results[0].returns))
    return ToolBehavior(results=results)


def as_value(text: str) -> Any:
    """JSON object or array text as the value itself, where the tools' own serialisation
    (``json.dumps``, ``ensure_ascii=False``) gives back the same bytes: easier to read, and
    the debug scorers see its fields. Any other text stays as it is."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict | list) and json.dumps(value, ensure_ascii=False) == text:
        return value
    return text
