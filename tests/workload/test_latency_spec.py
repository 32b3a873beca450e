"""A custom latency spec: it round-trips through its string, refuses bad input clearly, leaves
the named profiles as they were, and the mock really plays it (the delays of its replies)."""

from __future__ import annotations

import json
import zlib

import pytest

from bench.cli import main
from bench.referee import LatencyProfile, MockLLM
from bench.referee.latency import PROFILE_NAMES, is_profile
from scenarios import load_scenarios


@pytest.mark.parametrize(
    ("ttft", "tps", "jitter"),
    [(1000.0, 50.0, 0.2), (0.0, None, 0.0), (1234567.891 / 1000, 3.3, 0.05), (1e-7, 1e5, 0.99)],
)
def test_a_spec_round_trips(ttft: float, tps: float | None, jitter: float) -> None:
    profile = LatencyProfile.custom(ttft, tps, jitter)
    assert profile.name.startswith("custom:ttft:")
    again = LatencyProfile.named(profile.name)
    assert again == profile
    assert (again.ttft_ms, again.tokens_per_s, again.jitter) == (ttft, tps, jitter)
    assert is_profile(profile.name)


def test_a_hand_written_spec_reads_in_any_order() -> None:
    profile = LatencyProfile.named("custom:jitter:0.2, tps:50,ttft:1000")
    assert profile == LatencyProfile.named("custom:ttft:1000,tps:50,jitter:0.2")
    assert profile.name == "custom:ttft:1000,tps:50,jitter:0.2"


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("custom:", "is not KEY:NUMBER"),
        ("custom:ttft=1000", "join keys and values with ':', not '='"),
        ("custom:tps:50", "'ttft' (ms) is required"),
        ("custom:ttft:fast", "ttft: 'fast' is not a number"),
        ("custom:ttft:1,ttft:2", "'ttft' given twice"),
        ("custom:ttft:1,speed:2", "unknown key 'speed'"),
        ("custom:ttft:-5", "ttft: -5.0 out of range"),
        ("custom:ttft:inf", "out of range"),
        ("custom:ttft:nan", "out of range"),
        ("custom:ttft:1,tps:0", "tps: must be above 0"),
        ("custom:ttft:1,jitter:1", "jitter: 1.0 out of range"),
        ("custom:ttft:1" + ",ttft:1" * 40, "longer than 200 characters"),
        ("fast", "unknown latency profile 'fast'"),
    ],
)
def test_a_bad_spec_says_why(spec: str, reason: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        LatencyProfile.named(spec)
    assert reason in str(caught.value)
    assert not is_profile(spec)


def test_the_named_profiles_are_unchanged() -> None:
    assert PROFILE_NAMES == ("zero", "realistic", "ttft", "recorded")
    assert LatencyProfile.named("zero") == LatencyProfile()
    realistic = LatencyProfile.named("realistic")
    assert (realistic.ttft_ms, realistic.tokens_per_s, realistic.jitter) == (300.0, 50.0, 0.2)
    ttft = LatencyProfile.named("ttft")
    assert (ttft.ttft_ms, ttft.tokens_per_s, ttft.jitter) == (100.0, 1000.0, 0.1)
    assert LatencyProfile.named("recorded").plays_recorded


def _first_turn(stream: bool) -> bytes:
    return json.dumps(
        {
            "model": "scenario/single_tool",
            "messages": [{"role": "user", "content": "?"}],
            "tools": [{"type": "function", "function": {"name": "t", "parameters": {}}}],
            "stream": stream,
        }
    ).encode()


@pytest.mark.parametrize("stream", [False, True])
def test_the_mock_plays_the_spec(stream: bool) -> None:
    """The reply's own scheduled delays: ttft + completion tokens ÷ tps, no jitter."""
    mock = MockLLM(
        scenarios=load_scenarios(), latency=LatencyProfile.named("custom:ttft:1000,tps:50")
    )
    reply = mock.handle(_first_turn(stream))
    assert reply.status == 200
    tokens = mock.requests[-1].completion_tokens
    assert tokens > 0
    if stream:
        assert reply.delay_s == pytest.approx(1.0)
        assert reply.chunk_delay_s * (len(reply.chunks) - 1) == pytest.approx(tokens / 50)
    else:
        assert reply.delay_s == pytest.approx(1.0 + tokens / 50)


def test_the_mock_plays_the_spec_jitter_seeded_per_turn() -> None:
    spec = "custom:ttft:1000,tps:50,jitter:0.2"
    delays = []
    for _ in range(2):  # two mocks (two processes' worth): the same draw for the same turn
        mock = MockLLM(scenarios=load_scenarios(), latency=LatencyProfile.named(spec))
        delays.append(mock.handle(_first_turn(False)).delay_s)
    tokens = mock.requests[-1].completion_tokens
    assert delays[0] == delays[1]
    factor = delays[0] / (1.0 + tokens / 50)
    assert 0.8 <= factor <= 1.2 and factor != 1.0
    key = zlib.crc32(b"single_tool/tools/0")
    ttft, rest = LatencyProfile.named(spec).delays(key, tokens)
    assert delays[0] == pytest.approx(ttft + rest)


def test_mock_serve_refuses_a_bad_spec(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mock", "serve", "--latency", "custom:ttft=5"]) == 2
    assert "--latency: custom latency spec 'custom:ttft=5': join keys" in capsys.readouterr().err
