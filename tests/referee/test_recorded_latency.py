"""The ``recorded`` latency profile: each turn played with its own measured timing."""

from __future__ import annotations

import json

import pytest

from bench.engines.kit.ttft import reply_total_s, reply_ttft_s
from bench.referee import LatencyProfile, MockLLM
from bench.referee.latency import PROFILE_NAMES, recorded_schedule
from scenarios import TurnTiming, parse_scenario

SCENARIO = """
name: timed
description: recorded timings
user: hi
tools:
  - {name: find, description: Find., parameters: {type: object, properties: {q: {type: string}}}}
script:
  - tool_calls:
      - {name: find, args: {q: alpha beta gamma}}
      - {name: find, args: {q: delta}}
    timing: {stream: true, ttft_ms: 200, total_ms: 290, gaps_ms: [10, 10, 30, 10, 10]}
  - content: one two three four
    timing: {stream: false, total_ms: 750}
  - content: untimed
"""


def request(turn: int, *, stream: bool, protocol: str = "tools") -> bytes:
    # a ReAct prompt is recognised by its format lines (Action Input: ... Question: ...)
    prompt = "hi" if protocol == "tools" else "Answer with Action: and Action Input:.\nQuestion: hi"
    messages = [{"role": "user", "content": prompt}] + [{"role": "assistant", "content": ""}] * turn
    body = {"model": "scenario/timed", "messages": messages, "stream": stream}
    if protocol == "tools":
        body["tools"] = [{"type": "function", "function": {"name": "find", "parameters": {}}}]
    return json.dumps(body).encode()


@pytest.fixture(scope="module")
def mock() -> MockLLM:
    scenario = parse_scenario(SCENARIO)
    return MockLLM(scenarios={"timed": scenario}, latency=LatencyProfile.named("recorded"))


def test_the_profile_is_listed_and_draws_nothing() -> None:
    assert PROFILE_NAMES == ("zero", "realistic", "ttft", "recorded")
    assert LatencyProfile.named("recorded") == LatencyProfile(name="recorded", plays_recorded=True)


def test_a_streamed_turn_plays_its_first_token_pace_and_end(mock: MockLLM) -> None:
    reply = mock.handle(request(0, stream=True))
    # role chunk, 2 × (header + fragments) of the two calls, finish, [DONE]
    payload = len(reply.chunks) - 3
    assert reply.delay_s == pytest.approx(0.2)
    assert reply_ttft_s(reply, "tools") is None  # no content: tool calls only
    offsets = reply.chunk_offsets_s
    assert offsets[0] == offsets[1] == 0.0  # the role chunk comes with the first payload
    assert offsets[payload] == pytest.approx(0.070)  # the last recorded chunk: 70 ms later
    assert offsets[-2:] == (pytest.approx(0.090),) * 2  # finish and [DONE] at total_ms
    assert list(offsets) == sorted(offsets)
    assert reply_total_s(reply) == pytest.approx(0.290)


def test_a_different_chunking_keeps_the_recorded_curve() -> None:
    timing = TurnTiming(stream=True, ttft_ms=100, total_ms=400, gaps_ms=[100, 0, 200])
    # four recorded chunks at 0, 100, 100, 300 ms after the first; seven of ours in between
    first, offsets = recorded_schedule(timing, 10, range(1, 8))
    assert first == 0.1
    assert [round(o * 1000, 6) for o in offsets] == [0, 0, 50, 100, 100, 100, 200, 300, 300, 300]
    # no gaps recorded (a log keeps first token and end only): an even pace to the end
    _, even = recorded_schedule(TurnTiming(stream=True, ttft_ms=100, total_ms=400), 6, range(1, 5))
    assert [round(o * 1000, 6) for o in even] == [0, 0, 100, 200, 300, 300]


def test_a_turn_recorded_without_streaming_arrives_whole(mock: MockLLM) -> None:
    plain = mock.handle(request(1, stream=False))
    assert (plain.delay_s, plain.chunks) == (0.75, None)
    streamed = mock.handle(request(1, stream=True))
    assert streamed.delay_s == 0.75 and set(streamed.chunk_offsets_s) == {0.0}
    assert reply_ttft_s(streamed, "tools") == 0.75


def test_untimed_turns_and_other_profiles_ignore_timings(mock: MockLLM) -> None:
    untimed = mock.handle(request(2, stream=True))
    assert (untimed.delay_s, untimed.paced) == (0.0, False)
    zero = MockLLM(scenarios=mock.scenarios)
    timed = zero.handle(request(0, stream=True))
    assert (timed.delay_s, timed.paced) == (0.0, False)


def test_react_plays_each_action_with_its_own_first_token_and_a_share_of_the_rest(
    mock: MockLLM,
) -> None:
    first = mock.handle(request(0, stream=True, protocol="react"))
    second = mock.handle(
        json.dumps(
            {
                "model": "scenario/timed",
                "stream": True,
                "messages": [
                    {
                        "role": "user",
                        "content": "Answer with Action: and Action Input:.\nQuestion: hi\n"
                        "Observation: x",
                    }
                ],
            }
        ).encode()
    )
    assert (first.delay_s, second.delay_s) == (0.2, 0.2)
    # gaps [10, 10, 30] and [10, 10], and half of the 20 ms tail each
    assert reply_total_s(first) == pytest.approx(0.2 + 0.050 + 0.010)
    assert reply_total_s(second) == pytest.approx(0.2 + 0.020 + 0.010)
