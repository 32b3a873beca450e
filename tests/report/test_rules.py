"""The ledger's verdicts and the matrix's stars follow the numbers across every threshold.

Each case feeds synthetic *results* (runs, footprint, throughput, debuggability, code size)
through ``compute_facts`` and the rule, so what is tested is the whole path from measured
numbers to verdict — nothing is typed in.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from bench.report import rules
from bench.report.analysis import compute_facts
from tests.report.synth import ENGINES, Params, make

BASE = Params(repeats=4)
LC = ("lc-agentexecutor", "lc-agentexecutor-nostream", "lc-react", "lc-create-agent")


def steps(**changes: float) -> dict[str, float]:
    return {**BASE.step_ms, **{k.replace("_", "-"): v for k, v in changes.items()}}


def verdict(key: str, params: Params) -> str:
    facts = compute_facts(make(params))
    (claim,) = [c for c in rules.claims_ledger(facts) if c.key == key]
    return claim.verdict


ALL_LC_FAIL = {e: dict.fromkeys(("tool_flaky", "tool_timeout"), "failed") for e in LC}
CASES = [
    # framework overhead: ratio LangChain / scheduler, and share of a 1 s LLM step
    ("overhead", replace(BASE), "partly"),  # 12.9x slower, but 0.45 % of a 1 s step
    ("overhead", replace(BASE, step_ms=steps(lc_agentexecutor=12.0)), "supported"),  # 1.2 %
    ("overhead", replace(BASE, step_ms=steps(scheduler=4.0)), "refuted"),  # 1.1x
    ("overhead", replace(BASE, step_ms=steps(scheduler=3.0)), "partly"),  # 1.5x
    # callback chains: CPU per step ratio, and streaming vs non-streaming AgentExecutor
    ("callbacks", replace(BASE), "supported"),
    ("callbacks", replace(BASE, step_ms=steps(lc_agentexecutor_nostream=4.0)), "partly"),
    ("callbacks", replace(BASE, step_ms=steps(scheduler=4.0)), "refuted"),
    # ~200 tokens per round
    ("tokens", replace(BASE), "partly"),  # only ReAct adds ~160
    ("tokens", replace(BASE, token_overhead=dict.fromkeys(LC, 180.0)), "supported"),
    ("tokens", replace(BASE, token_overhead={"lc-react": 90.0}), "refuted"),
    # streaming: time to first token LangChain / scheduler-stream
    ("streaming", replace(BASE), "partly"),  # 7.5x but +2.6 ms < 1 % of 300 ms
    ("streaming", replace(BASE, ttft_ms={**BASE.ttft_ms, "lc-agentexecutor": 5.0}), "supported"),
    ("streaming", replace(BASE, ttft_ms={**BASE.ttft_ms, "lc-agentexecutor": 0.45}), "refuted"),
    ("streaming", replace(BASE, ttft_ms={"scheduler-stream": 0.4}), "not measured"),
    (  # 6x, but only 0.25 ms more: under 0.1 % of a hosted model's 300 ms
        "streaming",
        replace(BASE, ttft_ms={"scheduler-stream": 0.05, "lc-agentexecutor": 0.3}),
        "refuted",
    ),
    # production features: fault scenarios handled, scheduler minus LangChain
    ("production", replace(BASE), "supported"),  # 5/5 vs 3/5
    ("production", replace(BASE, fault_status={"raw": {}}), "refuted"),  # 5/5 vs 5/5
    (
        "production",
        replace(BASE, fault_status={"lc-agentexecutor": {"tool_flaky": "failed"}}),
        "partly",  # 5/5 vs 4/5
    ),
    # 50+ modules vs ~400 lines
    ("footprint", replace(BASE), "supported"),  # 1,640 modules, 480 lines
    ("footprint", replace(BASE, scheduler_lines=2400), "partly"),
    (
        "footprint",
        replace(BASE, scheduler_lines=2400, modules=dict.fromkeys(ENGINES, 40.0)),
        "refuted",
    ),
    # >100 QPS needs a custom loop: peak runs/s of one process
    ("qps", replace(BASE), "refuted"),  # nostream reaches 130
    ("qps", replace(BASE, peak_rps={**BASE.peak_rps, **dict.fromkeys(LC, 110.0)}), "partly"),
    ("qps", replace(BASE, peak_rps={**BASE.peak_rps, **dict.fromkeys(LC, 70.0)}), "supported"),
    (
        "qps",
        replace(BASE, peak_rps={**dict.fromkeys(ENGINES, 70.0)}),
        "partly",  # nobody reaches 100
    ),
    # debugging: recall and bytes per fact of the best debug modes
    ("debugging", replace(BASE), "supported"),
    (
        "debugging",
        replace(BASE, debug={**BASE.debug, "lc-agentexecutor": ("verbose", 0.93, 3000, True)}),
        "refuted",
    ),
    (
        "debugging",  # as much, as briefly, but the failing step cannot be located
        replace(BASE, debug={**BASE.debug, "lc-agentexecutor": ("verbose", 0.93, 3000, False)}),
        "supported",
    ),
    (
        "debugging",
        replace(BASE, debug={**BASE.debug, "lc-agentexecutor": ("verbose", 0.85, 6000, True)}),
        "partly",
    ),
]


@pytest.mark.parametrize(
    ("key", "params", "expected"), CASES, ids=lambda v: getattr(v, "key", None)
)
def test_verdict_follows_the_numbers(key: str, params: Params, expected: str) -> None:
    assert verdict(key, params) == expected


def test_every_claim_is_flipped_by_some_case() -> None:
    seen: dict[str, set[str]] = {}
    for key, _, expected in CASES:
        seen.setdefault(key, set()).add(expected)
    assert set(seen) == {c.key for c in rules.claims_ledger(compute_facts(make(BASE)))}
    assert all({"supported", "refuted"} <= v or len(v) >= 3 for v in seen.values()), seen


def test_nothing_measured_means_not_measured() -> None:
    facts = rules.Facts(langchain=None, self_built=None)
    assert {c.verdict for c in rules.claims_ledger(facts)} == {"not measured"}
    matrix = rules.decision_matrix(facts)
    assert [r.langchain for r in matrix] == [None] * 8
    assert [r.dimension for r in matrix] == list(rules.ARTICLE_MATRIX)


def stars(dimension: str, params: Params) -> tuple[int | None, int | None]:
    (rating,) = [
        r for r in rules.decision_matrix(compute_facts(make(params))) if r.dimension == dimension
    ]
    return rating.langchain, rating.self_built


def test_performance_stars_from_overhead_bands() -> None:
    # raw 0.17 ms: scheduler 0.5 (2.9x -> 4), AgentExecutor 4.5 (26x -> 2)
    assert stars("performance", replace(BASE, step_ms=steps(scheduler=0.5))) == (2, 4)
    assert stars(
        "performance", replace(BASE, step_ms=steps(scheduler=0.3, lc_agentexecutor=2.0))
    ) == (3, 5)
    assert stars(
        "performance", replace(BASE, step_ms=steps(scheduler=0.5, lc_agentexecutor=20.0))
    ) == (1, 4)


def test_production_stars_from_fault_share() -> None:
    assert stars("production readiness", BASE) == (3, 5)  # 3/5 = 60 %, 5/5
    everything_fails = {
        "lc-agentexecutor": dict.fromkeys(
            ("tool_flaky", "tool_timeout", "llm_rate_limit", "llm_server_error", "max_steps"),
            "error",
        )
    }
    assert stars("production readiness", replace(BASE, fault_status=everything_fails)) == (1, 5)


def test_debuggability_stars_lose_one_for_noise_and_one_for_no_localisation() -> None:
    # recall 0.6 -> 3 stars; 8,333 bytes/fact is > 3x the scheduler's 395: -1;
    # no mode locates the failing step: -1
    assert stars("debuggability", BASE) == (1, 5)
    quiet = {**BASE.debug, "lc-agentexecutor": ("verbose", 0.6, 3000, False)}
    assert stars("debuggability", replace(BASE, debug=quiet)) == (2, 5)
    located = {**BASE.debug, "lc-agentexecutor": ("verbose", 0.6, 3000, True)}
    assert stars("debuggability", replace(BASE, debug=located)) == (3, 5)


def test_dev_speed_proxy_from_code_lines() -> None:
    assert stars("development speed, simple cases", BASE) == (5, 2)  # 480 / 150 = 3.2x
    assert stars("development speed, simple cases", replace(BASE, scheduler_lines=300)) == (5, 3)
    assert stars("development speed, simple cases", replace(BASE, baseline_lines=600)) == (4, 5)
