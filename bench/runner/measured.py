"""What a worker writes of one measured run (runs.jsonl, ttft.jsonl): the run's record turned
into a ``bench.results.rows.RunMeasurement`` (``TtftMeasurement`` in the TTFT phase), built
from the fields as they are written (JSON) and checked by the row model itself: a field it
does not declare, or of the wrong type, is refused here, in the worker. The parent adds which
run it was (``RunRow``). Free of side effects on import, unlike the worker's entry module
(``bench.runner.run_worker`` installs the waits accounting when imported)."""

from __future__ import annotations

import math
import os
import time
from typing import Any

from bench.engines.base import RunRecord
from bench.results.files import dumps_line
from bench.results.rows import RunMeasurement, TtftMeasurement
from bench.runner.expectations import observed
from scenarios import Scenario
from scenarios.expect import misses

MAX_ERROR_CHARS = 2000
MAX_ANSWER_CHARS = 500


def truncate(text: str | None, limit: int) -> str | None:
    """``text`` cut to ``limit`` characters, the last one an ellipsis."""
    if text is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _measurement(model: type[RunMeasurement], fields: dict[str, Any]) -> RunMeasurement:
    """``fields`` as the model reads them back from the line they are written as."""
    return model.model_validate_json(dumps_line(fields))


def record_row(
    record: RunRecord,
    scenario: Scenario,
    engine: str,
    outer_ms: float,
    collections: int,
    referee: tuple[float, float] | None = None,
    *,
    ttft_floor_ms: float | None = None,
    ttft: bool = False,
) -> RunMeasurement:
    """What the worker measured of one run (the parent adds which run it was).

    ``ttft``: a run of the TTFT phase (a ``TtftMeasurement``, against ``ttft_floor_ms``, the
    mock's scripted time to the first answer token). ``referee``: the in-process mock's (wall, CPU) ms spent answering this run's requests;
    the overhead and the CPU are the engine's without it (``process_cpu_ms`` keeps the whole).
    Over loopback the mock runs in its own process and is in neither (``None``). The overhead
    also leaves out the run's waits by choice (``waited_ms``: retry backoff)."""
    steps = record.llm_calls
    referee_ms, referee_cpu_ms = referee if referee is not None else (None, None)
    overhead = record.overhead_ms - (referee_ms or 0.0)
    cpu = record.cpu_ms - (referee_cpu_ms or 0.0)
    seen = observed(record, scenario)
    failures = misses(scenario.expect.for_engine(engine), seen)
    fields = {
        "status": record.status,
        "termination": record.termination,
        "error": truncate(record.error, MAX_ERROR_CHARS),
        "final_answer": truncate(record.final_answer, MAX_ANSWER_CHARS),
        "llm_calls": record.llm_calls,
        "tool_calls": record.tool_calls,
        "tools": seen["tools"],
        "tool_errors": sum(1 for t in record.tools if not t.ok),
        "max_request_tokens": seen["max_request_tokens"],
        "max_tool_ms": seen["max_tool_ms"],
        "invalid_tool_args": seen["invalid_tool_args"],
        "wall_ms": record.wall_ms,
        "cpu_ms": cpu,
        "process_cpu_ms": record.cpu_ms,
        "referee_ms": referee_ms,
        "referee_cpu_ms": referee_cpu_ms,
        "outer_ms": outer_ms,
        "tool_ms": record.tool_ms,
        "mock_latency_ms": record.mock_latency_ms,
        "waited_ms": record.waited_ms,
        "wait_count": record.wait_count,
        "overhead_ms": overhead,
        "overhead_per_step_ms": overhead / steps if steps else None,
        "ttft_ms": _finite(record.ttft_ms),
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "request_count": len(record.requests or ()),
        "request_prompt_tokens": list(record.request_tokens),
        "gc_collections": collections,
        "expect_ok": not failures,
        "expect_failures": failures,
        "debug_output_chars": len(record.debug_output or ""),
        "extra": record.extra or {},
        "pid": os.getpid(),
        "ended_at": time.time(),
    }
    if ttft:
        return _measurement(TtftMeasurement, fields | _ttft_fields(record, ttft_floor_ms))
    return _measurement(RunMeasurement, fields)


def _ttft_fields(record: RunRecord, floor_ms: float | None) -> dict[str, Any]:
    """The ttft.jsonl fields on top of a runs.jsonl row (see bench.engines.kit.ttft)."""
    ttft = _finite(record.ttft_ms)
    scripted = _finite(record.scripted_ttft_ms)
    return {
        "floor_ttft_ms": floor_ms,
        "scripted_ttft_ms": scripted,
        "ttft_overhead_ms": ttft - scripted if ttft is not None and scripted is not None else None,
        "streamed_requests": sum(
            1 for body in record.requests or () if isinstance(body, dict) and body.get("stream")
        ),
    }


def error_row(message: str, termination: str = "harness_error") -> RunMeasurement:
    """A run that produced no RunRecord (prepare failed, or the engine broke its contract)."""
    return _measurement(
        RunMeasurement,
        {
            "status": "error",
            "termination": termination,
            "error": truncate(message, MAX_ERROR_CHARS),
            "expect_ok": False,
            "expect_failures": ["no record"],
            "pid": os.getpid(),
            "ended_at": time.time(),
        },
    )
