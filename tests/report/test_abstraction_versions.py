"""The over-abstraction claim (framework calls per step, from the probe) and the unstable
versions claim (the LangChain version matrix): each verdict on both sides of its threshold."""

from __future__ import annotations

import pytest

from bench.report import rules
from bench.report.build import build_document
from bench.report.facts import compute_facts
from bench.report.rules import T
from bench.results.rows import ProfileRow, VersionRow
from tests.report.synth import Params, make


def probe_row(engine: str, groups: dict[str, int], llm_calls: int = 2) -> ProfileRow:
    return ProfileRow(
        engine=engine,
        scenario="customer_returns",
        kind="scenario",
        status="ok",
        llm_calls=llm_calls,
        tool_calls=1,
        calls_per_run=(sum(groups.values()),),
        calls_by_group=groups,
        send_depths=(20,) if engine.startswith("lc") else (12,),
    )


def abstraction(lc_calls_per_step: float, ours_per_step: float = 50) -> rules.Claim:
    rows = (
        # the provider SDK and httpx are left out: a hand-written loop pays them too
        probe_row("lc-create-agent", {"langgraph": int(lc_calls_per_step * 2), "openai": 9000}),
        probe_row("scheduler-plain", {"scheduler": int(ours_per_step * 2), "httpx": 900}),
    )
    return rules.claim_over_abstraction(compute_facts(make(Params()).with_(profile=rows)))


@pytest.mark.parametrize(
    ("excess", "expected"),
    [
        (T.ABSTRACTION_SUPPORTED, "supported"),
        (T.ABSTRACTION_SUPPORTED - 1, "partly"),
        (T.ABSTRACTION_REFUTED + 1, "partly"),
        (T.ABSTRACTION_REFUTED, "refuted"),
        (-30, "refuted"),
    ],
)
def test_over_abstraction_follows_the_calls_beyond_ours(excess: int, expected: str) -> None:
    claim = abstraction(50 + excess)
    assert [p.verdict for p in claim.parts] == [expected]
    assert claim.parts[0].label == "lc-create-agent"
    assert "vs scheduler-plain 50" in claim.parts[0].measured
    assert "20 frames to the HTTP send vs 12" in claim.parts[0].measured


def test_over_abstraction_needs_both_sides_probed() -> None:
    rows = (probe_row("lc-create-agent", {"langgraph": 5000}),)
    claim = rules.claim_over_abstraction(compute_facts(make(Params()).with_(profile=rows)))
    assert claim.verdict == "not measured" and not claim.parts


def version(line: str, unchanged: bool | None, statements: int = 0, warns: int = 0) -> VersionRow:
    return VersionRow(
        line=line,
        engine=f"lc-agentexecutor@{line}",
        environment=f"langchain-{line}",
        packages={},
        runs_unchanged=unchanged,
        runs_adapted=True,
        statements_changed=statements,
        deprecation_warnings=warns,
    )


def versions(*rows: VersionRow) -> rules.Claim:
    return rules.claim_versions(compute_facts(make(Params()).with_(versions=rows)))


@pytest.mark.parametrize(
    ("older", "expected"),
    [
        (version("0.3", False, statements=5), "supported"),
        (version("0.3", True, warns=2), "partly"),
        (version("0.3", True, warns=0), "refuted"),
    ],
)
def test_versions_per_older_line(older: VersionRow, expected: str) -> None:
    claim = versions(older, version("1", True))
    assert [(p.label, p.verdict) for p in claim.parts] == [("LangChain 0.3 → 1", expected)]


def test_versions_lines_combine_and_an_unprobed_line_is_left_out() -> None:
    claim = versions(
        version("0.1", None),  # its environment could not be built
        version("0.2", False, statements=32),
        version("0.3", True),
        version("1", True),
    )
    assert [p.verdict for p in claim.parts] == ["supported", "refuted"]
    assert claim.verdict == "partly"
    assert "32 statements of change" in claim.parts[0].measured


def test_one_line_is_not_a_comparison() -> None:
    assert versions(version("1", True)).verdict == "not measured"


def test_the_ledger_and_the_report_carry_both() -> None:
    data = make(Params()).with_(
        versions=(version("0.3", False, 5), version("1", True)),
        profile=(
            probe_row("lc-create-agent", {"langgraph": 4000}),
            probe_row("scheduler-plain", {"scheduler": 100}),
        ),
    )
    facts = compute_facts(data)
    keys = {c.key: c.verdict for c in rules.claims_ledger(facts)}
    assert keys["over_abstraction"] == "supported" and keys["versions"] == "supported"
    doc, *_ = build_document(data, {}, [])
    titles = [s.title for s in doc.sections]
    assert "LangChain versions" in titles
