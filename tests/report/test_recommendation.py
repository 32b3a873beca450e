"""The executive summary's recommendation: CPU cost from the load phase when it ran."""

from __future__ import annotations

from bench.report import sections
from bench.report.facts import compute_facts
from bench.results import metrics
from tests.report.synth import Params, load_rows, make


def _text(data) -> str:
    spans = [s for block in sections._recommendation(compute_facts(data)) for s in block.spans]
    return " ".join(s if isinstance(s, str) else s.text for s in spans)


def test_cpu_cost_comes_from_the_load_phase_when_it_ran() -> None:
    levels = metrics.load_levels(load_rows({"lc-create-agent-prod": 60, "scheduler": 150}))
    text = _text(make(Params()).with_(load_levels=tuple(levels)))
    assert "cores per 100 runs/s for" in text and "under production-shaped load" in text
    assert "zero-latency mock" not in text


def test_without_a_load_phase_the_zero_latency_cpu_is_named_as_such() -> None:
    # the synthetic LangChain engines sustain no rate in one process: no load-phase cost
    text = _text(make(Params()))
    assert "zero-latency mock" in text and "production-shaped load" not in text
    text = _text(make(Params()).with_(load_levels=()))
    assert "zero-latency mock" in text and "production-shaped load" not in text


def test_the_performance_stars_read_the_cpu_the_summary_quotes() -> None:
    """The matrix rates CPU on the load phase's figure (the summary's), not the
    zero-latency suite's lower bound."""
    from bench.report import rules

    def performance(data):
        facts = compute_facts(data)
        (rating,) = [r for r in rules.decision_matrix(facts) if r.dimension == "performance"]
        return facts, rating

    plain = make(Params())
    _, zero = performance(plain)
    assert "zero-latency mock: a lower bound" in zero.basis
    levels = metrics.load_levels(load_rows({"lc-create-agent-prod": 60, "scheduler": 150}))
    loaded, rating = performance(plain.with_(load_levels=tuple(levels)))
    rate, cores = loaded.loaded_cores(["lc-create-agent-prod", "scheduler"])
    assert rate == 50.0  # the highest rate both sustained
    assert "load phase, at 50 runs/s" in rating.basis and "lower bound" not in rating.basis
    for engine in ("lc-create-agent-prod", "scheduler"):
        assert f"{cores[engine].point:.2f} cores per 100 runs/s (load phase" in rating.basis
    # 0.3 CPU-s a second at 50 runs/s: 0.6 cores per 100 runs/s, two stars, for ours too
    assert rating.of("self-built scheduler") == 2
    assert zero.of("self-built scheduler") > 2  # its zero-latency CPU alone looked cheaper


def test_the_qps_claim_quotes_cpu_at_the_common_rate_the_summary_uses() -> None:
    """Claim 7's one-process cores per 100 runs/s are the matrix's and the summary's
    (``Facts.loaded_cores``: one common rate), not each engine's at its own capacity."""
    from bench.report import rules
    from bench.results.fmt import number

    levels = metrics.load_levels(load_rows({"lc-create-agent-prod": 60, "scheduler": 150}))
    facts = compute_facts(make(Params()).with_(load_levels=tuple(levels)))
    rate, cores = facts.loaded_cores(["lc-create-agent-prod", "scheduler"])
    (one,) = [p for p in rules.claim_qps(facts).parts if p.label == "1 process"]
    assert f"measured at {rate:g} runs/s, the highest rate both sustained" in one.measured
    for engine in ("lc-create-agent-prod", "scheduler"):
        assert f"{engine} {cores[engine].point:.2f}" in one.measured
    at_capacity = facts.capacity[("scheduler", 1)].cores_for(100.0)
    assert at_capacity is not None and number(at_capacity.point) != number(cores["scheduler"].point)
