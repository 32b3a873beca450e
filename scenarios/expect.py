"""Judging a run against a scenario's expectations — the one place that does it.

The runner judges every run against the engine's effective expectations (``for_engine``:
outcome and flow fields, the ✗ flag of the summary); the report judges the fault scenarios
against the base expectation's outcome fields only (``Expect.outcome``: what production
needs, whatever the engine's vocabulary). Both call ``misses`` with what the run showed:

==========================  ===========================================================
observed key                what it is
==========================  ===========================================================
``status``                  completed | failed | aborted | error
``termination``             the harness's termination name (bench.engines.base)
``final_answer``            the answer text, or None
``llm_calls``               requests that reached the mock (retries included)
``tool_calls``              tool executions observed at the tools
``tools``                   the names of the tools executed, in order
``max_request_tokens``      the largest prompt (tokens) of any request, or None
``max_tool_ms``             the longest tool execution (ms), or None
``invalid_tool_args``       executions whose arguments broke the tool's JSON Schema
==========================  ===========================================================
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any


def _one_of(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _text(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else " or ".join(names)


def misses(expect: Mapping[str, Any], observed: Mapping[str, Any]) -> list[str]:
    """How the run differs from ``expect`` (an empty list: it meets it). A field that is
    None in ``expect`` is not judged. A maximum observed as None means nothing was seen (no
    request was sent, no tool ran), which is within any limit."""
    out: list[str] = []

    def got(key: str) -> Any:
        return observed.get(key)

    statuses = _one_of(expect.get("status"))
    if statuses and got("status") not in statuses:
        out.append(f"status {got('status')}, expected {_text(statuses)}")
    terminations = _one_of(expect.get("termination"))
    if terminations and got("termination") not in terminations:
        out.append(f"ended by {got('termination')}, expected {_text(terminations)}")
    contains = expect.get("final_contains")
    if contains is not None and contains not in (got("final_answer") or ""):
        out.append(f"final answer lacks {contains!r}")
    contains = expect.get("final_contains_if_completed")
    if (
        contains is not None
        and got("status") == "completed"
        and contains not in (got("final_answer") or "")
    ):
        out.append(f"completed with an answer that lacks {contains!r}")
    tools = list(got("tools") or ())
    forbidden = [name for name in expect.get("forbidden_tools") or () if name in tools]
    if forbidden:
        out.append(f"ran {', '.join(forbidden)}, which must never run")
    for key, what in (("max_tool_calls", "tool executions"), ("max_llm_calls", "LLM calls")):
        limit, value = expect.get(key), got(key.removeprefix("max_"))
        if limit is not None and (value is None or value > limit):
            out.append(f"{value} {what}, at most {limit} expected")
    limit = expect.get("max_request_tokens")
    largest = got("max_request_tokens")
    if limit is not None and largest is not None and largest > limit:
        out.append(f"sent a request of {largest:,} tokens, over the {limit:,} allowed")
    limit = expect.get("max_tool_ms")
    longest = got("max_tool_ms")
    if limit is not None and longest is not None and longest > limit:
        out.append(f"a tool ran {longest:,.0f} ms, over the {limit:,.0f} ms allowed")
    if expect.get("valid_tool_args") and (got("invalid_tool_args") or 0) > 0:
        out.append(f"{got('invalid_tool_args')} tool call(s) ran with arguments outside the schema")
    for key in ("llm_calls", "tool_calls"):
        want = expect.get(key)
        if want is not None and got(key) != want:
            out.append(f"{key} {got(key)} != {want}")
    want_tools = expect.get("tools")
    if want_tools is not None and Counter(tools) != Counter(want_tools):
        out.append(f"tools {tools} != {list(want_tools)}")
    return out
