"""The N-sided judgement: a side for every family of the run (registry families and roles),
rated by the decision matrix's rules, whatever the other sides are."""

from __future__ import annotations

from dataclasses import replace

from bench.report import rules, sections
from bench.report.document import Table
from bench.report.facts import compute_facts, sides_of
from tests.report.synth import ENGINES, Params, make

PEERS = ("pydantic-ai", "pydantic-ai-prod", "agno", "agno-prod")
WITH_PEERS = Params(
    repeats=6,
    engines=(*ENGINES, *PEERS),
    step_ms={
        **Params().step_ms,
        "pydantic-ai": 1.0,
        "pydantic-ai-prod": 1.2,
        "agno": 40.0,
        "agno-prod": 45.0,
    },
)


def stars(matrix, dimension, label):
    (rating,) = [r for r in matrix if r.dimension == dimension]
    return rating.of(label)


def test_every_family_of_a_judged_role_is_a_side_ours_and_langchain_first():
    families = [s.family for s in sides_of(set(WITH_PEERS.engines))]
    assert families == ["scheduler", "langchain", "pydantic-ai", "agno"]  # raw: the floor
    pydantic = next(s for s in sides_of(set(WITH_PEERS.engines)) if s.family == "pydantic-ai")
    assert (pydantic.default, pydantic.production) == ("pydantic-ai", "pydantic-ai-prod")
    assert sides_of({"raw", "openai-sdk"}) == ()


def test_a_side_is_rated_as_if_it_were_the_only_other_side():
    facts = compute_facts(make(WITH_PEERS))
    assert facts.self_built is facts.side("scheduler") and facts.langchain.family == "langchain"
    assert [s.family for s in facts.judged()] == ["scheduler", "langchain"]
    everyone = rules.frameworks_matrix(facts)
    assert [r.dimension for r in everyone] == list(rules.matrix.N_SIDED)
    for side in facts.sides:
        # performance on one basis for every side (the suite's cores: the load phase
        # measures only the headline pair), production readiness absolute
        alone = rules.rate_performance(facts, [side], under_load=False)
        assert stars(everyone, "performance", side.label) == alone.of(side.label), side
        alone = rules.rate_production(facts, [side])
        assert stars(everyone, "production readiness", side.label) == alone.of(side.label)
    (performance,) = [r for r in everyone if r.dimension == "performance"]
    assert "load phase" not in performance.basis
    # the article's matrix keeps its two sides
    assert {label for r in rules.decision_matrix(facts) for label, _ in r.stars} == {
        facts.self_built.label,
        facts.langchain.label,
    }


def test_a_peers_stars_follow_its_numbers():
    label = "PydanticAI"
    fast = rules.frameworks_matrix(compute_facts(make(WITH_PEERS)))
    slow_steps = {**WITH_PEERS.step_ms, "pydantic-ai-prod": 60.0}
    slow = rules.frameworks_matrix(compute_facts(make(replace(WITH_PEERS, step_ms=slow_steps))))
    assert stars(fast, "performance", label) > stars(slow, "performance", label)
    assert stars(slow, "performance", label) == 1


def test_the_section_has_a_column_per_side_and_is_left_out_without_a_peer():
    facts = compute_facts(make(WITH_PEERS))
    section = sections.frameworks_matrix(facts, rules.frameworks_matrix(facts))
    assert section is not None
    (table,) = [b for b in section.blocks if isinstance(b, Table)]
    assert table.columns[1:-1] == tuple(f"{s.label}: {s.production}" for s in facts.sides)
    assert len(table.rows) == len(rules.matrix.N_SIDED)
    two_sides = compute_facts(make(replace(WITH_PEERS, engines=ENGINES)))
    assert len(two_sides.sides) == 2 and rules.frameworks_matrix(two_sides) == []
    assert sections.frameworks_matrix(two_sides, []) is None
