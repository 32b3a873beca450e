"""MockLLM.handle: turns, faults, errors, usage, latency — without any client."""

from __future__ import annotations

import json

import pytest

from bench.referee import LatencyProfile, MockLLM
from bench.referee.protocols import turn_index
from bench.referee.reply import FORCED_TEXT
from scenarios import Scenario
from scheduler.tokens import count_request_tokens


def _scenario(**overrides) -> Scenario:
    data = {
        "name": "probe",
        "description": "test probe",
        "user": "go",
        "tools": [
            {
                "name": "lookup",
                "description": "Look something up.",
                "parameters": {
                    "type": "object",
                    "properties": {"key": {"type": "string"}},
                    "required": ["key"],
                },
                "behavior": {"returns": {"value": 1}},
            }
        ],
        "script": [
            {"tool_calls": [{"name": "lookup", "args": {"key": "a"}}]},
            {"content": "done"},
        ],
    }
    data.update(overrides)
    return Scenario.model_validate(data)


TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]


def _body(messages, **extra) -> bytes:
    return json.dumps(
        {"model": "scenario/probe", "messages": messages, "tools": TOOLS, **extra}
    ).encode()


def _json(reply):
    return json.loads(reply.body)


USER = [{"role": "user", "content": "go"}]
AFTER_ONE_CALL = [
    *USER,
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "{}"},
]


def test_turn_index_counts_assistant_messages_after_the_last_user_message():
    history = [
        {"role": "user", "content": "earlier"},
        {"role": "assistant", "content": "earlier answer"},
    ]
    assert turn_index(history + AFTER_ONE_CALL, "tools") == 1
    assert turn_index(history + USER, "tools") == 0


def test_usage_counts_what_was_sent():
    mock = MockLLM(scenarios={"probe": _scenario()})
    reply = mock.handle(_body(USER))
    usage = _json(reply)["usage"]
    assert usage["prompt_tokens"] == count_request_tokens(USER, TOOLS)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_unknown_scenario_is_a_404_listing_the_valid_ones():
    mock = MockLLM(scenarios={"probe": _scenario()})
    reply = mock.handle(json.dumps({"model": "gpt-4o", "messages": USER}).encode())
    assert reply.status == 404
    assert _json(reply)["error"]["message"] == (
        "model 'gpt-4o' is not a scenario; use 'scenario/<name>' with one of: probe"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"{not json", "request body is not valid JSON"),
        (b"[1, 2]", "request body must be a JSON object"),
        (b'{"messages": []}', "'model' is required and must be a string"),
        (
            b'{"model": "scenario/probe", "messages": []}',
            "'messages' must be a non-empty list of message objects",
        ),
    ],
)
def test_malformed_bodies_are_400_with_a_reason(raw, message):
    reply = MockLLM(scenarios={"probe": _scenario()}).handle(raw)
    assert (reply.status, _json(reply)["error"]["message"]) == (400, message)


def test_a_turn_past_the_script_is_a_400():
    mock = MockLLM(scenarios={"probe": _scenario()})
    done = [*AFTER_ONE_CALL, {"role": "assistant", "content": "done"}]
    reply = mock.handle(_body(done))
    assert reply.status == 400
    assert _json(reply)["error"]["message"] == (
        "scenario 'probe': turn 2 is past the end of its script (2 turns for the tools protocol)"
    )


def test_repeat_answers_the_last_turn_forever():
    scenario = _scenario(
        script=[{"tool_calls": [{"name": "lookup", "args": {"key": "a"}}], "repeat": True}],
        expect={"status": "aborted"},
    )
    mock = MockLLM(scenarios={"probe": scenario})
    messages = list(USER)
    for _ in range(5):
        message = _json(mock.handle(_body(messages)))["choices"][0]["message"]
        assert message["tool_calls"][0]["function"]["name"] == "lookup"
        messages += [message, {"role": "tool", "tool_call_id": "x", "content": "{}"}]


def test_fault_with_retry_after_then_the_same_body_succeeds():
    scenario = _scenario(
        script=[
            {
                "tool_calls": [{"name": "lookup", "args": {"key": "a"}}],
                "fault": {"status": 429, "retry_after_s": 0.05, "times": 2},
            },
            {"content": "done"},
        ]
    )
    mock = MockLLM(scenarios={"probe": scenario})
    body = _body(USER)
    first, second, third = (mock.handle(body) for _ in range(3))
    assert (first.status, second.status, third.status) == (429, 429, 200)
    assert first.headers["retry-after"] == "0.05"
    assert _json(first)["error"]["type"] == "rate_limit_error"
    assert [r.status for r in mock.requests] == [429, 429, 200]
    mock.reset()
    assert mock.handle(body).status == 429  # counters are forgotten


def test_delay_fault_delays_only_the_first_attempt():
    scenario = _scenario(
        script=[{"content": "late", "fault": {"delay_s": 2.5}}],
        tools=[],
    )
    mock = MockLLM(scenarios={"probe": scenario})
    body = json.dumps({"model": "scenario/probe", "messages": USER}).encode()
    assert mock.handle(body).delay_s == 2.5
    assert mock.handle(body).delay_s == 0.0


def test_malformed_arguments_and_unknown_tools_are_sent_verbatim():
    scenario = _scenario(
        script=[
            {
                "tool_calls": [
                    {"name": "lookup", "raw_arguments": '{"key": "a"'},
                    {"name": "ghost", "unknown": True},
                ]
            },
            {"content": "done"},
        ]
    )
    message = _json(MockLLM(scenarios={"probe": scenario}).handle(_body(USER)))["choices"][0][
        "message"
    ]
    assert [(c["function"]["name"], c["function"]["arguments"]) for c in message["tool_calls"]] == [
        ("lookup", '{"key": "a"'),
        ("ghost", "{}"),
    ]


def test_streaming_chunks_end_with_usage_and_done():
    mock = MockLLM(scenarios={"probe": _scenario()})
    reply = mock.handle(_body(USER, stream=True, stream_options={"include_usage": True}))
    events = [json.loads(c[6:]) for c in reply.chunks[:-1]]
    assert reply.chunks[-1] == b"data: [DONE]\n\n"
    assert events[-1]["choices"] == [] and events[-1]["usage"]["completion_tokens"] > 0
    assert events[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert all(e["object"] == "chat.completion.chunk" for e in events)


def test_latency_profile_is_seeded_and_scales_with_tokens():
    profile = LatencyProfile.realistic(seed=7)
    assert profile.delays(123, 50) == profile.delays(123, 50)
    ttft, rest = profile.delays(123, 50)
    assert 0.24 <= ttft <= 0.36
    assert rest == pytest.approx(1.0 * ttft / 0.3, rel=1e-9)  # 50 tokens at 50/s, same factor
    assert LatencyProfile.zero().delays(123, 50) == (0.0, 0.0)


def test_latency_is_applied_per_reply():
    mock = MockLLM(
        scenarios={"probe": _scenario()}, latency=LatencyProfile(ttft_ms=100, tokens_per_s=100)
    )
    reply = mock.handle(_body(USER))
    completion = _json(reply)["usage"]["completion_tokens"]
    assert reply.delay_s == pytest.approx(0.1 + completion / 100)


def test_tool_choice_none_gets_text_instead_of_tool_calls():
    mock = MockLLM(scenarios={"probe": _scenario()})
    forced = _json(mock.handle(_body(USER, tool_choice="none")))["choices"][0]
    assert forced["finish_reason"] == "stop"
    assert forced["message"]["content"] == FORCED_TEXT
    assert "tool_calls" not in forced["message"]
    normal = _json(mock.handle(_body(USER)))["choices"][0]
    assert normal["finish_reason"] == "tool_calls"
    assert [r.turn for r in mock.requests] == [0, 0]


def test_jitter_depends_on_the_turn_not_on_the_request_body():
    mock = MockLLM(scenarios={"probe": _scenario()}, latency=LatencyProfile.realistic(seed=3))
    plain = mock.handle(_body(USER))
    other_body = mock.handle(_body([{"role": "system", "content": "extra"}, *USER], temperature=0))
    next_turn = mock.handle(_body(AFTER_ONE_CALL))
    assert plain.delay_s == other_body.delay_s
    assert next_turn.delay_s != plain.delay_s
