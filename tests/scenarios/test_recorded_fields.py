"""The fields recorded scenarios add: per-turn timing, exact arguments, recorded results."""

from __future__ import annotations

import pytest

from scenarios import ScenarioError, TurnTiming, parse_scenario

BASE = """\
name: rec
description: d
user: u
tools:
  - name: find
    description: Find.
    parameters: {{type: object, properties: {{q: {{type: string}}}}}}
    behavior: {behavior}
script:
  - tool_calls: [{call}]
    timing: {timing}
  - content: done
"""
CALL = '{name: find, args: {q: a}, recorded_arguments: \'{"q":"a"}\'}'
TIMING = "{stream: true, ttft_ms: 100, total_ms: 150, gaps_ms: [10, 20]}"
BEHAVIOR = "{results: [{args: {q: a}, returns: found a}]}"


def problems(**parts: str) -> list[str]:
    values = {"call": CALL, "timing": TIMING, "behavior": BEHAVIOR, **parts}
    try:
        parse_scenario(BASE.format(**values))
    except ScenarioError as exc:
        return [line.removeprefix("<string>: ") for line in exc.lines]
    return []


def test_a_recorded_scenario_validates_and_keeps_every_value() -> None:
    scenario = parse_scenario(BASE.format(call=CALL, timing=TIMING, behavior=BEHAVIOR))
    turn = scenario.script[0]
    assert turn.timing == TurnTiming(stream=True, ttft_ms=100, total_ms=150, gaps_ms=[10, 20])
    assert turn.tool_calls[0].recorded_arguments == '{"q":"a"}'
    assert scenario.tools[0].behavior.results[0].model_dump() == {
        "args": {"q": "a"},
        "returns": "found a",
    }


@pytest.mark.parametrize(
    ("parts", "problem"),
    [
        (
            {"timing": "{stream: true, ttft_ms: 100, total_ms: 50}"},
            "script[0].timing: ttft_ms plus gaps_ms exceeds total_ms",
        ),
        (
            {"timing": "{stream: true, ttft_ms: 10, total_ms: 50, gaps_ms: [30, 30]}"},
            "script[0].timing: ttft_ms plus gaps_ms exceeds total_ms",
        ),
        (
            {"timing": "{stream: true, total_ms: 50, gaps_ms: [1]}"},
            "script[0].timing: gaps_ms needs ttft_ms",
        ),
        (
            {"timing": "{stream: false, ttft_ms: 5, total_ms: 50}"},
            "script[0].timing: a call that was not streamed has no ttft_ms or gaps_ms",
        ),
        (
            {"timing": "{stream: false, total_ms: 3600001}"},
            "script[0].timing.total_ms: Input should be less than or equal to 3600000",
        ),
        (
            {"timing": "{stream: true, ttft_ms: 1, total_ms: 9, gaps_ms: [-1]}"},
            "script[0].timing.gaps_ms[0]: Input should be greater than or equal to 0",
        ),
        (
            {"timing": "{stream: false, total_ms: 9, completion_tokens: -2}"},
            "script[0].timing.completion_tokens: Input should be greater than or equal to 0",
        ),
        ({"timing": "{total_ms: 9}"}, "script[0].timing.stream: Field required"),
        (
            {"call": '{name: find, args: {q: b}, recorded_arguments: \'{"q":"a"}\'}'},
            "script[0].tool_calls[0]: recorded_arguments: does not parse to args",
        ),
        (
            {"call": "{name: find, args: {q: a}, recorded_arguments: '{\"q\":'}"},
            "script[0].tool_calls[0]: recorded_arguments: not valid JSON; malformed arguments go in raw_arguments",
        ),
        (
            {"call": "{name: find, raw_arguments: '{', recorded_arguments: '{}'}"},
            "script[0].tool_calls[0]: choose one of raw_arguments | recorded_arguments",
        ),
        (
            {"behavior": "{returns: x, results: [{args: {}, returns: y}]}"},
            "tools[0].behavior: choose one of returns | raises | hangs | results, not returns and results",
        ),
        (
            {"behavior": "{results: [{args: {}, returns: 5}]}"},
            "tools[0].behavior.results[0].returns: Input should be a valid string",
        ),
    ],
)
def test_each_bad_recorded_field_is_one_line(parts: dict[str, str], problem: str) -> None:
    assert problems(**parts) == [problem]


def test_recorded_arguments_skip_no_schema_check() -> None:
    call = "{name: find, args: {q: 5}, recorded_arguments: '{\"q\": 5}'}"
    assert problems(call=call) == ["script[0].tool_calls[0].args.q: 5 is not of type 'string'"]
