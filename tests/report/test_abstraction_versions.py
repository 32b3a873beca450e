"""The over-abstraction claim (framework calls per step, from the probe) and the unstable
versions claim (the LangChain version matrix): each verdict on both sides of its threshold."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.report import rules
from bench.report.build import build_document
from bench.report.facts import compute_facts
from bench.report.rules import T
from bench.report.versions_section import BACKPORT_COLUMNS, versions_section
from bench.results.folder import read_versions
from bench.results.rows import ProfileRow, VersionRow, first_line
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


def cell(written_for: str, run_on: str, ran: bool, warns: int = 0, fix: int | None = None):
    deprecation = {
        "category": "LangChainDeprecationWarning",
        "where": "agent.py:1",
        "count": 1,
        "deprecation": True,
    }
    other = deprecation | {"category": "PydanticDeprecatedSince20", "message": "not LangChain's"}
    return {
        "written_for": written_for,
        "run_on": run_on,
        "ran": ran,
        "error": None if ran else "ImportError: cannot import name 'AgentExecutor'",
        "warnings": [deprecation | {"message": f"old {n}"} for n in range(warns)] + [other],
        "fix": None if fix is None else {"ran": True, "statements": fix, "packages": ["x"]},
    }


def version(line: str, *cells: dict, error: str | None = None) -> VersionRow:
    return VersionRow.model_validate(
        {
            "line": line,
            "engine": f"lc-agentexecutor@{line}",
            "environment": f"langchain-{line}",
            "packages": {},
            "upgrades": list(cells),
            "error": error,
        }
    )


def versions(*rows: VersionRow) -> rules.Claim:
    return rules.claim_versions(compute_facts(make(Params()).with_(versions=rows)))


@pytest.mark.parametrize(
    ("on_1", "expected"),
    [
        (cell("0.3", "1", False, fix=1), "supported"),  # a breaking change
        (cell("0.3", "1", True, warns=2), "partly"),  # runs, but warns of what goes away
        (cell("0.3", "1", True), "refuted"),  # runs, and another library's warning only
    ],
)
def test_versions_per_line_the_code_was_written_for(on_1: dict, expected: str) -> None:
    claim = versions(version("0.3", cell("0.3", "0.3", True)), version("1", on_1))
    assert [(p.label, p.verdict) for p in claim.parts] == [("LangChain 0.3 code → 1", expected)]


def test_a_break_shows_the_fix_and_the_warnings_of_the_line_before() -> None:
    claim = versions(
        version("0.3", cell("0.2", "0.3", True, warns=1), cell("0.3", "0.3", True)),
        version("1", cell("0.2", "1", False, fix=2), cell("0.3", "1", False, fix=1)),
    )
    assert [(p.label, p.verdict, p.measured) for p in claim.parts] == [
        (
            "LangChain 0.2 code → 1",
            "supported",
            "fails on 1 (ImportError: cannot import name 'AgentExecutor') after 1 deprecation "
            "warning on 0.3 (none naming what broke); fix: 2 statements + x",
        ),
        (
            "LangChain 0.3 code → 1",
            "supported",
            "fails on 1 (ImportError: cannot import name 'AgentExecutor') after 0 deprecation "
            "warnings on 0.3 (none naming what broke); fix: 1 statement + x",
        ),
    ]
    assert claim.verdict == "supported"


def test_a_break_named_by_a_warning_of_the_line_before_says_so() -> None:
    before = cell("0.2", "0.3", True, warns=1)
    before["warnings"][0]["message"] = "AgentExecutor moves to langchain-classic in 1.0"
    claim = versions(version("0.3", before), version("1", cell("0.2", "1", False, fix=2)))
    (part,) = claim.parts
    assert part.measured == (
        "fails on 1 (ImportError: cannot import name 'AgentExecutor') after 1 deprecation "
        "warning on 0.3; fix: 2 statements + x"
    )


def test_versions_lines_combine_and_unmeasured_or_self_broken_code_is_left_out() -> None:
    claim = versions(
        version("0.1", error="environment 'langchain-0.1' could not be built"),
        version("0.2", cell("0.2", "0.2", False)),  # does not run on its own line
        version("0.3", cell("0.2", "0.3", False), cell("0.3", "0.3", True)),
        version("1", cell("0.3", "1", True)),
    )
    assert [(p.label, p.verdict) for p in claim.parts] == [("LangChain 0.3 code → 1", "refuted")]
    claim = versions(
        version("0.2", cell("0.2", "0.2", True)),
        version("0.3", cell("0.2", "0.3", False, fix=1), cell("0.3", "0.3", True)),
        version("1", cell("0.2", "1", True), cell("0.3", "1", True)),
    )
    assert [p.verdict for p in claim.parts] == ["supported", "refuted"]
    assert claim.verdict == "partly"
    assert claim.parts[0].measured.startswith("fails on 0.3")


def test_code_with_no_newer_line_is_not_a_comparison() -> None:
    assert versions(version("1", cell("0.3", "0.3", True))).verdict == "not measured"
    assert versions(version("0.3", cell("0.3", "0.3", True))).verdict == "not measured"


def test_the_ledger_and_the_report_carry_both() -> None:
    data = make(Params()).with_(
        versions=(
            version("0.3", cell("0.3", "0.3", True)),
            version("1", cell("0.3", "1", False, fix=1)),
        ),
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


# the version table of the reference run made at b01ba76, before the upgrade direction
LEGACY = Path(__file__).resolve().parent / "data" / "legacy_versions"


def test_a_legacy_table_is_not_measured_in_the_upgrade_direction_and_labelled_so() -> None:
    rows = read_versions(LEGACY)
    assert rows and all(r.backport is not None and not r.upgrades for r in rows)
    claim = versions(*rows)
    assert claim.verdict == "not measured" and not claim.parts
    assert claim.measured.startswith("not measured in the upgrade direction: ")
    assert "legacy table" in claim.measured
    upgrade_claim = versions(version("0.3", cell("0.3", "0.3", True)))
    assert "legacy" not in upgrade_claim.measured  # only a legacy table says so
    tables = [b for b in versions_section(rows).blocks if hasattr(b, "columns")]
    backport, cost = tables  # no upgrade table: nothing was measured in that direction
    assert backport.columns == BACKPORT_COLUMNS
    assert backport.caption.startswith("Legacy table (the back-port direction)")
    expected = [
        (
            r.line,
            "runs"
            if r.backport.runs_unchanged
            else f"fails: {first_line(r.backport.unchanged_error)}",
            f"{r.backport.statements_changed:,} statements",
            f"{r.backport.deprecation_warnings:,}",
        )
        for r in rows
    ]
    assert [tuple(row) for row in backport.rows] == expected
    assert [row[0] for row in cost.rows] == [r.line for r in rows]
