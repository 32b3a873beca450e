"""The TTFT phase in lanes (bench.runner.phases.ttft): several engines stream at once, each in
its own worker, and the rows are those one lane writes.

Run through the command, on the real scheduler engines (tests/runner's raw is a fake that
reports no TTFT), on the TTFT scenario.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from tests.runner.conftest import start_schedbench

ENGINES = ("scheduler-plain", "scheduler-stream")
ONLY_TTFT = (
    "--no-throughput",
    "--no-footprint",
    "--no-load",
    "--rounds",
    "1",
    "--repeat",
    "1",
)


def _run(out: Path, lanes: int) -> list[dict]:
    process = start_schedbench(
        "run",
        "--engines",
        ",".join(ENGINES),
        "--scenarios",
        "streaming_long_answer",
        "--ttft-lanes",
        str(lanes),
        *ONLY_TTFT,
        "--out",
        str(out),
    )
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["config"]["ttft_lanes"] == lanes
    lines = (out / "ttft.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _shape(rows: list[dict]) -> set[tuple]:
    return {
        (r["engine"], r["phase"], r["repeat"], r["status"], r["llm_calls"], r["streamed_requests"])
        for r in rows
    }


def test_two_lanes_write_the_rows_one_lane_writes_and_overlap(tmp_path):
    one = _run(tmp_path / "one", lanes=1)
    two = _run(tmp_path / "two", lanes=2)
    assert _shape(one) == _shape(two)
    assert {r["engine"] for r in two} == set(ENGINES)
    assert all(r["status"] == "completed" and r["ttft_ms"] is not None for r in two)

    def spans(rows: list[dict]) -> list[tuple[float, float]]:
        by_pid: dict[int, list[dict]] = {}
        for r in rows:
            by_pid.setdefault(r["pid"], []).append(r)
        return [
            (min(r["ended_at"] - r["wall_ms"] / 1000 for r in rs), max(r["ended_at"] for r in rs))
            for rs in by_pid.values()
        ]

    def overlapping(rows: list[dict]) -> bool:
        s = sorted(spans(rows))
        return any(b[0] < a[1] for a, b in itertools.pairwise(s))

    # one lane: each engine's runs end before the next engine's begin; two: some overlap
    assert not overlapping(one)
    assert overlapping(two)
