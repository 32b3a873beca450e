"""The probe's summaries (bench.results.metrics.profile_by_engine) on synthetic rows."""

from __future__ import annotations

import math

import pytest

from bench.results.metrics import profile_by_engine, profile_marginals, profile_shares
from bench.results.rows import ProfileRow


def row(scenario: str, calls: int, llm: int, **kw: object) -> ProfileRow:
    fields = {
        "engine": "e",
        "scenario": scenario,
        "kind": "scenario",
        "status": "ok",
        "llm_calls": llm,
        "tool_calls": 1,
        "calls_per_run": (calls, calls),
        "wall_ms": (10.0, 10.0, 12.0),
        "sampled_wall_ms": (11.0,),
        "cprofile_wall_ms": (30.0,),
        "mock_ms": (1.0, 1.0, 1.2),
        "send_depths": (8, 8),
        "tool_depths": (2,),
        "send_modules": (2, 2),
        "send_classes": (2, 2),
        "tool_modules": (1,),
        "tool_classes": (1,),
    }
    fields.update(kw)
    return ProfileRow.model_validate(fields)


ROWS = [
    row(
        "single_tool",
        200,
        2,
        samples=100,
        samples_by_group={"langchain_core.callbacks": 30, "openai": 70},
        leaf_samples_by_group={"openai": 100},
        cprofile_ms_by_group={"openai": 3.0, "langchain_core.callbacks": 1.0},
        samples_in_mock=10,
    ),
    row(
        "big",
        300,
        3,
        samples=200,
        samples_by_group={"langchain_core.runnables": 20, "openai": 180},
        leaf_samples_by_group={"openai": 200},
        cprofile_ms_by_group={"openai": 1.0},
        samples_in_mock=20,
        send_depths=(12, 12, 14),
    ),
    row("single_tool+tool", 260, 2, kind="variant", variant_of="single_tool", tool_calls=2),
    row("single_tool+step", 330, 3, kind="variant", variant_of="single_tool", tool_calls=2),
    ProfileRow(engine="peer", status="skipped", error="runs in the 'peers' virtualenv"),
]


def test_calls_per_step_are_pooled_over_scenarios_and_the_marginals_subtracted() -> None:
    (e, peer) = profile_by_engine(ROWS)
    assert e["calls_per_step"] == pytest.approx(100.0)  # 200/2 and 300/3
    assert e["calls_per_step_range"] == (100.0, 100.0)
    assert e["calls_spread"] == 0.0
    assert (e["send_depth"], e["send_depth_range"]) == (10.0, (8.0, 12.0))
    assert e["tool_depth"] == 2.0
    assert e["ms_per_step"] == pytest.approx(math.sqrt(5.0 * 10.0 / 3))
    assert (e["cprofile_factor"], e["sampling_factor"]) == pytest.approx((3.0, 1.1))
    assert e["mock_share_sampled"] == pytest.approx(0.1)
    assert e["mock_share_timed"] == pytest.approx(0.1)
    assert peer == {
        "engine": "peer",
        "scenarios": 0,
        "status": "skipped",
        "errors": ["peer: runs in the 'peers' virtualenv"],
    }


def test_marginals_compare_the_variants_with_their_base() -> None:
    assert profile_marginals(ROWS, "e") == {
        "scenario": "single_tool",
        "per_tool_call": 60.0,
        "per_step_with_tool": 130.0,
        "per_step_without_tool": 70.0,
        "llm_calls": {"base": 2, "+tool": 2, "+step": 3},
        "tool_calls": {"base": 1, "+tool": 2, "+step": 2},
    }
    assert profile_marginals(ROWS[:2], "e") == {}


def test_shares_weigh_each_scenario_once_and_claim_two_sums_callbacks_and_runnables() -> None:
    scenarios = ROWS[:2]
    assert profile_shares(scenarios) == pytest.approx(
        {"langchain_core.callbacks": 0.15, "langchain_core.runnables": 0.05, "openai": 0.8}
    )
    assert profile_shares(scenarios, "cprofile") == pytest.approx(
        {"langchain_core.callbacks": 0.125, "openai": 0.875}
    )
    (e, _) = profile_by_engine(ROWS)
    assert e["callback_runnable_share"] == pytest.approx(0.2)
    se = math.sqrt(0.3 * 0.7 / 100 + 0.1 * 0.9 / 200) / 2
    assert e["callback_runnable_share_se"] == pytest.approx(se)
    # a scenario that mostly waited (few samples of work) is left out of the pooled shares
    waited = row("waits", 100, 2, samples=10, samples_by_group={"asyncio": 10})
    assert profile_shares([*scenarios, waited]) == profile_shares(scenarios)
    with pytest.raises(ValueError, match="unknown share method"):
        profile_shares(scenarios, "guess")
