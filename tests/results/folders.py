"""Small run folders written by hand, in the runner's formats, for the results tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.results.files import SCHEMA_VERSION
from bench.results.store import RunStore

ENGINES = ("raw", "scheduler")
SCENARIOS = ("customer_returns", "single_tool")


def run_row(engine: str, scenario: str, repeat: int, wall_ms: float, **changes: Any) -> dict:
    """A complete timed runs.jsonl row (the fields a worker writes, plus the parent's ids)."""
    calls = 3 if scenario == "customer_returns" else 2
    row = {
        "engine": engine,
        "scenario": scenario,
        "latency": "zero",
        "transport": "inprocess",
        "round": repeat // 3,  # 6 repeats over 2 rounds, as the plan splits them
        "repeat": repeat,
        "phase": "timed",
        "status": "completed",
        "termination": "stop",
        "error": None,
        "final_answer": "Order A123 can be returned within 30 days.",
        "expect_ok": True,
        "expect_failures": [],
        "llm_calls": calls,
        "tool_calls": calls - 1,
        "tool_errors": 0,
        "request_count": calls,
        "tools": ["search_knowledge_base", "query_order"][: calls - 1],
        "prompt_tokens": 100 * calls,
        "completion_tokens": 20,
        "request_prompt_tokens": [100] * calls,
        "wall_ms": wall_ms,
        "cpu_ms": wall_ms * 0.9,
        "outer_ms": wall_ms + 0.01,
        "tool_ms": 0.01,
        "mock_latency_ms": 0.0,
        "overhead_ms": wall_ms - 0.01,
        "overhead_per_step_ms": (wall_ms - 0.01) / calls,
        "ttft_ms": None,
        "gc_collections": 0,
        "debug_output_chars": 0,
        "extra": {},
        "pid": 123,
        "ended_at": 1.0,
    }
    row.update(changes)
    return row


def config() -> dict[str, Any]:
    return {
        "engines": list(ENGINES),
        "scenarios": list(SCENARIOS),
        "scenario_dir": None,
        "repeat": 6,
        "rounds": 2,
        "warmup": 0,
        "seed": 0,
        "quick": False,
        "throughput": False,
        "footprint": False,
        "ttft": False,
        "load": False,
    }


def meta(**changes: Any) -> dict[str, Any]:
    data = {
        "schema_version": SCHEMA_VERSION,
        "run_id": "hand-made",
        "command": ["schedbench", "run"],
        "config": config(),
        "complete": True,
        "git": {"sha": "abc123", "dirty": False},
        "machine": {"cpu_model": "Test CPU", "cpu_logical": 2},
        "packages": {"langchain": "1.0.0"},
        "python": {"version": "3.11.0"},
        "duration_s": 1.0,
    }
    data.update(changes)
    return data


# wall times per cell: an odd spread so that every median is a real value of the sample
WALLS = {
    ("raw", "customer_returns"): [0.71, 0.69, 0.75, 0.72, 0.70, 0.74],
    ("scheduler", "customer_returns"): [0.81, 0.83, 0.79, 0.80, 0.86, 0.82],
    ("raw", "single_tool"): [0.50, 0.52, 0.49, 0.51, 0.55, 0.50],
    ("scheduler", "single_tool"): [12.31, 12.52, 12.44, 12.38, 12.71, 12.49],
}


def write_run(directory: Path, walls: dict[tuple[str, str], list[float]] = WALLS) -> Path:
    """A complete run folder: meta.json and runs.jsonl (one warm-up per cell, then timed)."""
    with RunStore(directory) as store:
        store.create()
        store.write_meta(meta())
        for (engine, scenario), values in walls.items():
            store.append("runs.jsonl", run_row(engine, scenario, 0, 9.0, phase="warmup"))
            for repeat, wall in enumerate(values):
                store.append("runs.jsonl", run_row(engine, scenario, repeat, wall))
    return directory
