"""Derived numbers: break-even latencies, the fault judge, token overhead."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.report import analysis
from bench.results.metrics import token_overhead_per_request
from tests.report.synth import Params, make


def test_breakeven_latencies() -> None:
    # 5 ms per step is 1 % of a step when the LLM takes 495 ms
    assert analysis.breakeven_latency(5.0, 0.01) == pytest.approx(495.0)
    assert analysis.overhead_share(5.0, 495.0) == pytest.approx(0.01)
    # 4 ms more than the scheduler's 1 ms: extra / (5 + L) = 10 % at L = 35 ms
    assert analysis.breakeven_extra_latency(5.0, 1.0, 0.10) == pytest.approx(35.0)
    assert analysis.breakeven_extra_latency(1.0, 5.0, 0.10) == 0.0


def test_fault_judge_uses_the_base_outcome() -> None:
    outcome = {"status": "aborted", "max_tool_calls": 2, "max_llm_calls": 7}
    stopped = {"status": "aborted", "termination": "tool_limit", "tool_calls": 2, "llm_calls": 5}
    looped = {"status": "aborted", "termination": "max_steps", "tool_calls": 8, "llm_calls": 8}
    assert analysis._judge(stopped, outcome) == ("aborted", [])
    assert analysis._judge(looped, outcome) == (
        "aborted",
        ["8 tool executions, at most 2 expected", "8 LLM calls, at most 7 expected"],
    )


def test_fault_matrix_outcomes() -> None:
    fm = analysis.fault_matrix(make(Params(repeats=2)))
    cell = fm.set_index(["engine", "scenario"])
    assert cell.loc[("scheduler", "tool_flaky"), ["outcome", "as_expected"]].tolist() == [
        "recovered",
        True,
    ]
    assert cell.loc[("lc-agentexecutor", "tool_flaky"), ["outcome", "as_expected"]].tolist() == [
        "failed",
        False,
    ]
    assert cell.loc[("raw", "tool_timeout"), "why"] == (
        "status error, expected completed; final answer lacks '30 days'"
    )


def test_token_overhead_turn_by_turn() -> None:
    # the report's frames go through the same metric as summary.csv (rows by attribute)
    mine = pd.DataFrame(
        {
            "request_prompt_tokens": [[100, 150, 200], [100, 150, 200]],
            "prompt_tokens": 450,
            "llm_calls": 3,
        }
    )
    raw = pd.DataFrame({"request_prompt_tokens": [[90, 140]], "prompt_tokens": 230, "llm_calls": 2})

    def overhead(a: pd.DataFrame, b: pd.DataFrame) -> float:
        return token_overhead_per_request(list(a.itertuples()), list(b.itertuples()))

    assert overhead(mine, raw) == 10.0  # aligned on the first two turns
    mine = mine.drop(columns="request_prompt_tokens")
    raw = raw.drop(columns="request_prompt_tokens")
    assert overhead(mine, raw) == 150.0 - 115.0  # median tokens per request


def test_ttft_is_judged_on_the_scenarios_made_for_it() -> None:
    data = make(Params(repeats=2))
    data = data.with_(runs=data.runs.assign(ttft_ms=5.0), ttft=None)
    assert analysis.ttft_scenarios(data) == ["customer_returns", "long_conversation", "single_tool"]
    scenarios = data.scenarios.copy()
    scenarios.loc[scenarios["scenario"] == "single_tool", "tags"] = [("happy-path", "ttft")]
    tagged = data.with_(scenarios=scenarios)
    assert analysis.ttft_scenarios(tagged) == ["single_tool"]
    assert set(analysis.ttft_stats(tagged)["runs"]) == {2}  # the two runs of single_tool
