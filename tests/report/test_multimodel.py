"""The multi-model claim follows multimodel.json across both of its thresholds, and the
report shows the check's table. The rows are synthetic: every number is a parameter."""

from __future__ import annotations

import pytest

from bench.report import rules
from bench.report.build import build_document
from bench.report.document import Cell, Section, Table
from bench.report.facts import ProviderSwitch, compute_facts
from bench.report.multimodel import multimodel_table, section
from bench.report.rules import T
from bench.results.rows import MultiModelCheck, MultiModelFile, MultiModelRow
from tests.report.synth import Params, make

SCENARIOS = ("customer_returns", "parallel_tool_calls")


def checks(ok: int, n: int = 2) -> tuple[MultiModelCheck, ...]:
    return tuple(
        MultiModelCheck(
            scenario=SCENARIOS[i], ok=i < ok, status="completed" if i < ok else "failed"
        )
        for i in range(n)
    )


def row(
    engine: str, provider: str, works: bool, statements: int, *, fixed: bool = False, note: str = ""
) -> MultiModelRow:
    return MultiModelRow(
        engine=engine,
        provider=provider,
        fixed=fixed,
        works=works,
        statements_changed=statements,
        checks=checks(2 if works else 0),
        note=note,
    )


def document(*rows: MultiModelRow) -> MultiModelFile:
    return MultiModelFile(schema_version=1, scenarios=SCENARIOS, rows=rows)


def switch(
    engine: str,
    works: bool,
    statements: int,
    fix: tuple[bool, int] | None = None,
    baseline: bool = True,
) -> list[MultiModelRow]:
    rows = [row(engine, "openai", baseline, 0), row(engine, "anthropic", works, statements)]
    if fix is not None:
        rows.append(row(engine, "anthropic", fix[0], fix[1], fixed=True, note="the fix"))
    return rows


def verdict(*rows: MultiModelRow) -> tuple[str, list[str]]:
    facts = compute_facts(make(Params(repeats=2)).with_(multimodel=document(*rows)))
    claim = rules.claim_multimodel(facts)
    return claim.verdict, [p.verdict for p in claim.parts]


S, R = T.SWITCH_STATEMENTS, T.SWITCH_REWRITE

CASES = [
    ("the chat model alone works", switch("lc-create-agent", True, 2), "supported"),
    ("at the threshold", switch("lc-create-agent", True, S), "supported"),
    ("one statement past it", switch("lc-create-agent", True, S + 1), "partly"),
    ("works only with a fix", switch("lc-agentexecutor", False, 2, (True, 4)), "partly"),
    ("a fix at the rewrite threshold", switch("lc-agentexecutor", False, 2, (True, R)), "partly"),
    ("a fix past it is a rewrite", switch("lc-agentexecutor", False, 2, (True, R + 1)), "refuted"),
    ("a switch past it is a rewrite", switch("lc-create-agent", True, R + 1), "refuted"),
    ("does not work, no fix", switch("lc-create-agent", False, 2), "refuted"),
    ("the fix does not work either", switch("lc-agentexecutor", False, 2, (False, 4)), "refuted"),
    (
        "void when OpenAI fails too",
        switch("lc-create-agent", True, 2, baseline=False),
        "not measured",
    ),
]


@pytest.mark.parametrize(("case", "rows", "expected"), CASES, ids=[c[0] for c in CASES])
def test_the_verdict_follows_the_rows(case: str, rows: list[MultiModelRow], expected: str) -> None:
    assert verdict(*rows) == (expected, [expected])


def test_parts_per_langchain_engine_combine_and_ours_is_beside_not_judged() -> None:
    rows = (
        *switch("lc-create-agent", True, 2),
        *switch("lc-agentexecutor", False, 2, (True, 4)),
        *switch("scheduler", False, 40),  # ours failing says nothing about LangChain
        *switch("scheduler-stream", True, 2),
    )
    facts = compute_facts(make(Params(repeats=2)).with_(multimodel=document(*rows)))
    claim = rules.claim_multimodel(facts)
    assert (claim.verdict, [(p.label, p.verdict) for p in claim.parts]) == (
        "partly",
        [("lc-create-agent", "supported"), ("lc-agentexecutor", "partly")],
    )
    create_agent, executor = claim.parts
    assert create_agent.measured == (
        "→ anthropic: the chat model alone (2 statements) 2/2 scenarios as expected; beside it, "
        "scheduler → anthropic: the chat model alone (40 statements) 0/2 scenarios as expected"
    )
    assert executor.measured == (
        "→ anthropic: the chat model alone (2 statements) 0/2 scenarios as expected; with the "
        "fix (4 statements) it works (the fix); beside it, scheduler-stream → anthropic: the "
        "chat model alone (2 statements) 2/2 scenarios as expected"
    )
    assert facts.provider_switches["lc-agentexecutor"] == ProviderSwitch(
        engine="lc-agentexecutor",
        provider="anthropic",
        baseline_works=True,
        works=False,
        statements=2,
        as_expected=(0, 2),
        note="",
        fixed_works=True,
        fixed_statements=4,
        fixed_note="the fix",
    )
    assert facts.switch_scenarios == SCENARIOS
    assert "customer_returns, parallel_tool_calls" in claim.rule


def test_without_the_check_the_claim_is_not_measured() -> None:
    facts = compute_facts(make(Params(repeats=2)))
    claim = rules.claim_multimodel(facts)
    assert (claim.verdict, claim.measured) == ("not measured", "multi-model check not run")
    assert claim in rules.claims_ledger(facts)


def test_the_table() -> None:
    rows = (*switch("lc-agentexecutor", False, 2, (True, 4)), *switch("scheduler", True, 2))
    table = multimodel_table(document(*rows))
    assert isinstance(table, Table) and table.css == "multimodel"
    assert table.rows == (
        ("scheduler", "openai", "nothing (the baseline)", Cell("yes", "verdict-supported"), "2/2", Cell("0", "num"), ""),
        ("scheduler", "anthropic", "the chat model only", Cell("yes", "verdict-supported"), "2/2", Cell("2", "num"), ""),
        ("lc-agentexecutor", "openai", "nothing (the baseline)", Cell("yes", "verdict-supported"), "2/2", Cell("0", "num"), ""),
        ("lc-agentexecutor", "anthropic", "the chat model only", Cell("no", "verdict-refuted"), "0/2", Cell("2", "num"), ""),
        ("lc-agentexecutor", "anthropic", "the chat model and more", Cell("yes", "verdict-supported"), "2/2", Cell("4", "num"), "the fix"),
    )  # fmt: skip


def test_the_report_has_the_section_and_the_claim() -> None:
    rows = (*switch("lc-create-agent", True, 2), *switch("scheduler", True, 2))
    data = make(Params(repeats=2)).with_(multimodel=document(*rows))
    doc, _, _, ledger = build_document(data, {}, [])
    (found,) = [s for s in doc.sections if s.anchor == "switching-provider"]
    assert isinstance(found, Section) and multimodel_table(data.multimodel) in found.blocks
    assert "multimodel" in [c.key for c in ledger]
    empty = section(make(Params(repeats=2)))
    assert "No multi-model check in this run" in empty.blocks[0].text
