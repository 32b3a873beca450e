"""The report's LangChain version section: ``versions.json`` (``bench.results.versions``) as a
table and the facts under it — does today's AgentExecutor baseline run on each line, how
big the change that makes it run is, what it warns, and whether LangChain got faster.

``versions_section(rows)`` takes the rows ``read_versions`` returns (None or empty: the run
measured no LangChain line, and the section says so).
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.report.document import Bullets, Cell, Note, Paragraph, Section, Table
from bench.results import fmt
from bench.results.rows import VersionRow

COLUMNS = (
    "LangChain line",
    "langchain / core / openai",
    "runs unchanged?",
    "statements changed",
    "deprecation warnings",
    "overhead per step",
    "import time",
    "modules",
)


def _unchanged(row: VersionRow) -> Cell:
    if row.runs_unchanged is None:
        return Cell("not measured", "verdict-unknown")
    if row.runs_unchanged:
        return Cell("yes", "verdict-supported")
    first = (row.unchanged_error or "").splitlines()[0][:80] if row.unchanged_error else ""
    return Cell(f"no ({first})" if first else "no", "verdict-refuted")


def _packages(row: VersionRow) -> str:
    p = row.packages
    if not p:
        return fmt.MISSING
    return " / ".join(p.get(name) or "–" for name in ("langchain", "langchain-core", "openai"))


def version_table(rows: Sequence[VersionRow]) -> Table:
    return Table(
        COLUMNS,
        tuple(
            (
                row.line,
                _packages(row),
                _unchanged(row),
                fmt.count(row.statements_changed),
                fmt.count(row.deprecation_warnings),
                fmt.ms(row.overhead_per_step_ms),
                fmt.ms(row.import_ms),
                fmt.count(row.import_modules),
            )
            for row in rows
        ),
        caption=(
            "Today's AgentExecutor baseline (lc-agentexecutor) on the last release of each line, "
            "each in its own environment. Statements changed: the smallest change that makes it "
            "run (bench/engines/lc_versions.py, counted as ast statements). Deprecation "
            "warnings: distinct ones raised from the first import to the end of one run. "
            "Overhead per step: median over the matrix's scenarios of the median per run."
        ),
        css="versions",
        numeric=(3, 4, 5, 6, 7),
    )


def _facts(rows: Sequence[VersionRow]) -> list[Paragraph]:
    facts = []
    for row in rows:
        if row.error:
            facts.append(Paragraph.of(f"LangChain {row.line}: not measured — {row.error}"))
            continue
        if row.adapter_parts:
            parts = ", ".join(row.adapter_parts)
            facts.append(
                Paragraph.of(
                    f"LangChain {row.line}: {row.statements_changed} statements of change "
                    f"({parts}); the adapted code "
                    + ("runs." if row.runs_adapted else f"still fails: {row.adapted_error}")
                )
            )
        listed = [w for w in row.warnings if w.deprecation]
        for w in listed:
            facts.append(
                Paragraph.of(f"LangChain {row.line} warns ({w.category}, {w.where}): {w.message}")
            )
    measured = [r for r in rows if r.overhead_per_step_ms is not None]
    if len(measured) >= 2:
        first, last = measured[0], measured[-1]
        ratio = first.overhead_per_step_ms / last.overhead_per_step_ms
        facts.append(
            Paragraph.of(
                f"Per-step overhead went from {fmt.ms(first.overhead_per_step_ms)} on "
                f"{first.line} to {fmt.ms(last.overhead_per_step_ms)} on {last.line} "
                f"({fmt.ratio(ratio, digits=2)} the time per step of the newest line)."
            )
        )
    return facts


def versions_section(rows: Sequence[VersionRow] | None) -> Section:
    """The section (a note only when the run measured no LangChain line)."""
    if not rows:
        note = Note("No LangChain version matrix in this run (the lc-agentexecutor@ engines).")
        return Section("LangChain versions", "langchain-versions", (note,))
    facts = _facts(rows)
    blocks = [version_table(rows)]
    if facts:
        blocks.append(Bullets(tuple(facts)))
    return Section("LangChain versions", "langchain-versions", tuple(blocks))
