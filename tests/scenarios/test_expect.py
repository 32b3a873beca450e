"""``scenarios.expect.misses``: ``final_contains_if_completed``, the outcome of a fault that
may be retried or may fail cleanly, but must never complete with a broken answer."""

from __future__ import annotations

import pytest

from scenarios import load_scenarios
from scenarios.expect import misses

ANSWER = "Yes, take an umbrella - rain is likely in Porto tomorrow (80 %, about 6 mm)."
RETRIED_OR_FAILED = {
    "status": ["completed", "failed"],
    "termination": ["stop", "llm_error"],
    "final_contains_if_completed": ANSWER,
}


@pytest.mark.parametrize(
    ("observed", "expected"),
    [
        ({"status": "completed", "termination": "stop", "final_answer": ANSWER}, []),
        ({"status": "failed", "termination": "llm_error", "final_answer": None}, []),
        (
            {"status": "completed", "termination": "stop", "final_answer": "Yes, take an"},
            [f"completed with an answer that lacks {ANSWER!r}"],
        ),
        (
            {"status": "completed", "termination": "stop", "final_answer": None},
            [f"completed with an answer that lacks {ANSWER!r}"],
        ),
        (
            {"status": "error", "termination": "JSONDecodeError", "final_answer": None},
            [
                "status error, expected completed or failed",
                "ended by JSONDecodeError, expected stop or llm_error",
            ],
        ),
        (
            {"status": "failed", "termination": "parse_error", "final_answer": None},
            ["ended by parse_error, expected stop or llm_error"],
        ),
    ],
    ids=["answered-in-full", "failed-cleanly", "half-answer", "no-answer", "raw-error", "misread"],
)
def test_a_completed_run_must_hold_the_whole_answer_a_failed_one_need_not(observed, expected):
    assert misses(RETRIED_OR_FAILED, observed) == expected


def test_final_contains_still_requires_an_answer():
    failed = {"status": "failed", "final_answer": None}
    assert misses({"final_contains": "rain"}, failed) == ["final answer lacks 'rain'"]
    assert misses({"final_contains_if_completed": "rain"}, failed) == []


def test_the_field_is_an_outcome_the_report_judges():
    expect = load_scenarios()["llm_stream_truncated"].expect
    assert expect.outcome() == {
        "status": ["completed", "failed"],
        "termination": ["stop", "llm_error"],
        "final_contains": None,
        "final_contains_if_completed": ANSWER,
        "forbidden_tools": None,
        "max_tool_calls": 1,
        "max_llm_calls": 5,
        "max_request_tokens": None,
        "max_tool_ms": None,
        "valid_tool_args": True,
    }
    # an override drops it only for its engine; the base outcome keeps it
    assert expect.for_engine("lc-agentexecutor")["final_contains_if_completed"] is None
    assert expect.for_engine("scheduler")["final_contains_if_completed"] == ANSWER
