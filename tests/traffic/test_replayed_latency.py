"""The ``recorded`` latency profile reproduces what was recorded, turn by turn.

A run recorded against the upstream (~100 ms to the first token, its own pace after) is
served by a mock with ``--latency recorded`` and recorded again through a second proxy, with
the same agent: the same instrument measures both sides. The bounds are generous (a shared,
noisy machine): they catch a replay that ignores the recorded timings (every turn at once) or
multiplies them, not a few percent; the measured spread is in the test output (``-s``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.referee.server import start_server_process
from tests.traffic.conftest import record, warm_up


def close(replayed: float, recorded: float) -> bool:
    """Not ahead of the recording, and not a multiple of it: a busy host only ever adds
    time to a replayed turn (the one-sided bound here failed a host running other work)."""
    return 0.9 * recorded <= replayed <= 2 * recorded + 50.0


@pytest.mark.parametrize("agent", ["scheduler-stream", "create_agent"])
async def test_recorded_latencies_replay_per_turn(
    agent: str, upstream: str, tmp_path: Path
) -> None:
    first = await record(agent, upstream, tmp_path / "first", "timed")
    with start_server_process(tmp_path / "first", latency="recorded") as replay:
        warm_up(replay.base_url, "scenario/timed")
        second = await record(
            agent, replay.base_url, tmp_path / "second", "timed", model="scenario/timed"
        )
    rows = []
    for index, (a, b) in enumerate(zip(first.script, second.script, strict=True)):
        assert a.timing is not None and b.timing is not None
        rows.append(
            (index, a.timing.ttft_ms, b.timing.ttft_ms, a.timing.total_ms, b.timing.total_ms)
        )
    print(f"\\n{agent}: turn, recorded vs replayed TTFT ms, recorded vs replayed total ms")
    for index, ttft_a, ttft_b, total_a, total_b in rows:
        print(
            f"  {index}  {ttft_a:8.2f} {ttft_b:8.2f} ({(ttft_b / ttft_a - 1) * 100:+.1f} %)"
            f"  {total_a:8.2f} {total_b:8.2f} ({(total_b / total_a - 1) * 100:+.1f} %)"
        )
    assert [(close(r[2], r[1]), close(r[4], r[3])) for r in rows] == [(True, True)] * len(rows)
