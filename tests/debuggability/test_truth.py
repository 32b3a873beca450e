"""Ground truth: facts derived from the scenario and the run record, replayed through a mock."""

from __future__ import annotations

import pytest

from bench.debuggability.truth import CallRef, Fact, Failure, ground_truth
from bench.engines.base import ToolCallRecord
from scenarios import load_scenarios
from tests.debuggability import runs


@pytest.fixture(scope="module")
def scenarios():
    return load_scenarios()


def test_customer_returns_facts(scenarios) -> None:
    scenario = scenarios["customer_returns"]
    record = runs.record(
        scenario,
        runs.bodies(scenario, 3),
        [
            ToolCallRecord("search_knowledge_base", {"query": "return policy"}, True, 0.5),
            ToolCallRecord("query_order", {"order_id": "A123"}, True, 1.25),
        ],
        final="Order A123 (trail shoes, delivered on 2026-11-20) can be returned",
    )
    truth = ground_truth(scenario, record)
    calls = truth.calls
    assert [(c.step, c.status) for c in calls] == [(1, 200), (2, 200), (3, 200)]
    tokens = [
        f
        for c in calls
        for f in (
            Fact("tokens", c.step, c.prompt_tokens, key="prompt"),
            Fact("tokens", c.step, c.completion_tokens, key="completion"),
        )
    ]
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)
    assert list(truth.facts) == [
        *tokens,
        Fact("tool", 1, "search_knowledge_base"),
        Fact("arg", 1, "return policy", key="query"),
        Fact("result", 1, "KB-17", key="article_id"),
        Fact("result", 1, "Returns policy", key="title"),
        Fact("result", 1, "Items can be returned within 30 days", key="text"),
        Fact("latency", 1, 0.5, key="search_knowledge_base"),
        Fact("tool", 2, "query_order"),
        Fact("arg", 2, "A123", key="order_id"),
        Fact("result", 2, "A123", key="order_id"),
        Fact("result", 2, "delivered", key="status"),
        Fact("result", 2, "2026-11-20", key="delivered_on"),
        Fact("result", 2, "SHOE-42", key="sku"),
        Fact("result", 2, "Trail shoes", key="name"),
        Fact("result", 2, "89.0", key="price_eur"),
        Fact("latency", 2, 1.25, key="query_order"),
        Fact("termination", None, "stop", alts=("reason:stop", "final answer:")),
        Fact("final", None, "Order A123 (trail shoes, delivered on"),
    ]
    assert truth.failure is None


def test_rate_limited_call_is_an_llm_error_in_step_one_and_costs_no_completion(scenarios) -> None:
    scenario = scenarios["llm_rate_limit"]
    bodies = runs.bodies(scenario, 2, {1: 3})  # 429, 429, then the real answer
    record = runs.record(
        scenario,
        bodies,
        [ToolCallRecord("get_forecast", {"city": "Porto", "date": "2026-12-01"}, True, 0.1)],
        final="Yes, take an umbrella",
    )
    truth = ground_truth(scenario, record)
    assert [(c.step, c.status) for c in truth.calls] == [(1, 429), (1, 429), (1, 200), (2, 200)]
    error = Fact("llm_error", 1, "Rate limit reached for requests per", alts=("error code: 429",))
    assert truth.by_kind("llm_error") == [error]
    # the LLM call of step 1 failed; its retries are the same call; one LLM call per step
    forecast = (Fact("arg", 1, "Porto", key="city"), Fact("arg", 1, "2026-12-01", key="date"))
    llm = [CallRef(1, None, ("call_t0_0",), forecast, order=1), CallRef(2, None, order=2)]
    assert truth.failure == Failure(1, None, error, llm[0], tuple(llm))
    assert truth.failure.index == 1
    # the failing step is judged by localisation, not counted again as a recall fact
    assert {f.kind for f in truth.facts} == {"llm_error", "tokens", "tool", "arg", "result"} | {
        "latency",
        "termination",
        "final",
    }
    assert [f.step for f in truth.by_kind("tokens")] == [1, 1, 2, 2]


def test_failing_tool_gives_error_fact_and_failure(scenarios) -> None:
    scenario = scenarios["tool_flaky"]
    args = {"tracking_number": "00340434161094042557"}
    record = runs.record(
        scenario,
        runs.bodies(scenario, 4),
        [
            ToolCallRecord("track_parcel", args, False, 0.1, "ConnectionResetError: ..."),
            ToolCallRecord("track_parcel", args, False, 0.1, "ConnectionResetError: ..."),
            ToolCallRecord("track_parcel", args, True, 0.1),
        ],
        final="Your parcel is out for delivery",
    )
    truth = ground_truth(scenario, record)
    error = Fact("error", 1, "ConnectionResetError: [Errno 104]")
    # three identical calls, told apart by their step and by the id the mock gave each
    peers = tuple(
        CallRef(
            step,
            "track_parcel",
            (f"call_t{step - 1}_0",),
            (Fact("arg", step, "00340434161094042557", key="tracking_number"),),
            order=step,
        )
        for step in (1, 2, 3)
    )
    assert truth.failure == Failure(1, "track_parcel", error, peers[0], peers)
    assert (truth.failure.index, len(truth.failure.all_peers)) == (1, 3)
    # text facts repeated in later steps are counted once; numeric ones per call
    assert truth.by_kind("error") == [error]
    assert truth.by_kind("tool") == [Fact("tool", 1, "track_parcel")]
    assert [f.step for f in truth.by_kind("latency")] == [1, 2, 3]
    assert [f.step for f in truth.by_kind("result")] == [3, 3, 3, 3]


def test_unknown_tool_and_malformed_arguments_are_errors_of_their_step(scenarios) -> None:
    unknown = scenarios["unknown_tool"]
    weather = [ToolCallRecord("get_weather", {"city": "Paris", "unit": "celsius"}, True, 0.1)]
    truth = ground_truth(
        unknown, runs.record(unknown, runs.bodies(unknown, 3), weather, final="14")
    )
    wether = CallRef(1, "get_wether", ("call_t0_0",), (Fact("arg", 1, "Paris", key="city"),), 1)
    assert truth.failure == Failure(
        1, "get_wether", Fact("error", 1, "get_wether"), wether, (wether,)
    )
    malformed = scenarios["malformed_tool_args"]
    truth = ground_truth(
        malformed, runs.record(malformed, runs.bodies(malformed, 3), weather, final="14")
    )
    assert truth.failure is not None and truth.failure.tool == "get_weather"
    assert truth.failure.error.value == '{"city": "Paris", "unit": "cels'
