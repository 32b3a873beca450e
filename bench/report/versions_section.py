"""The report's LangChain version section: ``versions.json`` (``bench.results.versions``).

Two tables and the facts under them:

- **upgrades** — the reference agent as each line's docs wrote it, run unchanged on its own
  line and every newer one: does it run, what does it warn, and where it fails, the measured
  fix (statements changed, packages added);
- **today's per-step cost** — today's AgentExecutor baseline back-ported to each line: how
  the same code's framework overhead changed across lines (not a compatibility measure);
- **the legacy back-port table** — only for a legacy versions.json (``VersionRow.backport``):
  today's baseline run on each older line as is and back-ported, labelled as the back-port
  direction (no upgrade was measured).

``versions_section(rows)`` takes the rows ``read_versions`` returns (None or empty: the run
measured no LangChain line, and the section says so).
"""

from __future__ import annotations

from collections.abc import Sequence

from bench.report.document import Bullets, Cell, Code, Note, Paragraph, Section, Span, Table
from bench.results import fmt
from bench.results.rows import UpgradeCell, VersionRow, first_line, line_key
from bench.results.versions import UpgradeHistory, upgrade_histories

COST_COLUMNS = (
    "LangChain line",
    "langchain / core / openai",
    "overhead per step",
    "import time",
    "modules",
)


def cell_text(cell: UpgradeCell) -> Cell:
    """One cell of the upgrade table."""
    if cell.ran:
        if cell.deprecations:
            return Cell(f"runs, {cell.deprecations_text}", "verdict-partly")
        return Cell("runs", "verdict-supported")
    text = f"fails: {first_line(cell.error)}"
    text += f"; fix: {cell.fix.summary}" if cell.fix is not None else "; no fix declared"
    return Cell(text, "verdict-refuted")


def upgrade_table(rows: Sequence[VersionRow], histories: Sequence[UpgradeHistory]) -> Table:
    lines = [row.line for row in rows]
    broken = {row.line: row.error for row in rows if row.error}
    table_rows = []
    for history in histories:
        cells: list[str | Cell] = [f"{history.written_for} docs"]
        for line in lines:
            cell = history.on(line)
            if line in broken:
                cells.append(Cell("not measured", "verdict-unknown"))
            elif line_key(line) < line_key(history.written_for):
                cells.append("–")
            elif cell is None:
                cells.append(Cell("not measured", "verdict-unknown"))
            else:
                cells.append(cell_text(cell))
        table_rows.append(tuple(cells))
    return Table(
        ("written for", *(f"runs on {line}" for line in lines)),
        tuple(table_rows),
        caption=(
            "The reference agent (customer_returns) written as each line's docs wrote it "
            "(bench/envs/langchain-<line>/agent.py), run unchanged on its own line and on every "
            "newer one, each line a fresh install of its own requirements. Runs: it ended as "
            "the scenario expects. Deprecation warnings: distinct LangChainDeprecationWarnings "
            "(LangChain's own notice that an API the code uses goes away, shown by default) "
            "raised from its first import of LangChain to the end of the run; other libraries' "
            "deprecations raised inside LangChain are not counted. Fix: the edits that make it run there "
            "(bench/engines/lc_versions.py), measured as ast statements changed between the "
            "program as written and the program that runs, plus the packages the fixed program "
            "imports that its own line did not install."
        ),
        css="versions",
    )


def cost_table(rows: Sequence[VersionRow]) -> Table:
    return Table(
        COST_COLUMNS,
        tuple(
            (
                row.line,
                _packages(row),
                fmt.ms(row.overhead_per_step_ms),
                fmt.ms(row.import_ms),
                fmt.count(row.import_modules),
            )
            for row in rows
        ),
        caption=(
            "Today's per-step cost on each line: today's AgentExecutor baseline "
            "(lc-agentexecutor), back-ported to each line by the harness (lc-agentexecutor@<line>), "
            "so the same code runs everywhere. Overhead per step: median over the matrix's "
            "scenarios of the median per run. It shows how the AgentExecutor stack's cost "
            "changed, not whether code written for a line runs on the next."
        ),
        css="versions-cost",
        numeric=(2, 3, 4),
    )


BACKPORT_COLUMNS = (
    "LangChain line",
    "today's code as is",
    "back-port",
    "deprecation warnings",
)


def backport_table(rows: Sequence[VersionRow]) -> Table:
    """A legacy table's compatibility columns: today's code run on older lines."""
    table_rows: list[tuple[str | Cell, ...]] = []
    for row in rows:
        b = row.backport
        if b is None or b.runs_unchanged is None:
            table_rows.append((row.line, Cell("not measured", "verdict-unknown"), "–", "–"))
            continue
        as_is = "runs" if b.runs_unchanged else f"fails: {first_line(b.unchanged_error)}"
        port = f"{fmt.count(b.statements_changed)} statements"
        if b.runs_adapted is False:
            port += f", still fails: {first_line(b.adapted_error)}"
        table_rows.append((row.line, as_is, port, fmt.count(b.deprecation_warnings)))
    return Table(
        BACKPORT_COLUMNS,
        tuple(table_rows),
        caption=(
            "Legacy table (the back-port direction): this run's versions.json predates the "
            "upgrade direction. Today's AgentExecutor baseline was run on each older line as "
            "is, and with the harness's back-port (its statements counted). It shows how far "
            "today's code is from older lines, not whether code written for a line runs on a "
            "newer one: the upgrade direction was not measured in this run."
        ),
        css="versions-backport",
        numeric=(3,),
    )


def _packages(row: VersionRow) -> str:
    p = row.packages
    if not p:
        return fmt.MISSING
    return " / ".join(p.get(name) or "–" for name in ("langchain", "langchain-core", "openai"))


def _history_fact(history: UpgradeHistory) -> Paragraph | None:
    own = history.on(history.written_for)
    spans: list[Span] = [f"Code written for {history.written_for}"]
    if own is not None and not own.ran:
        spans.append(f" does not run on its own line ({first_line(own.error)}).")
        return Paragraph.of(*spans)
    if not history.newer:
        return None
    broken = history.first_break
    if broken is None:
        warned = sum(len(c.deprecations) for c in history.newer)
        spans.append(f" runs unchanged on every newer line measured ({warned:,} deprecations).")
        return Paragraph.of(*spans)
    before = history.before_break
    if before is not None:
        spans.append(f" runs on {before.run_on} with {before.deprecations_text}")
        spans.append(" and")
    spans.append(f" fails on {broken.run_on} (")
    spans.append(Code(first_line(broken.error, 200)))
    spans.append(")")
    if before is not None:
        spans.append(f"; {'a' if history.announced else 'no'} warning on {before.run_on} named it")
    fix = broken.fix
    if fix is None:
        spans.append("; no fix is declared.")
    else:
        spans.append(f"; the fix is {fix.summary}: ")
        for index, edit in enumerate(fix.edits):
            spans.extend(("; " if index else "", Code(edit)))
        spans.append(".")
    return Paragraph.of(*spans)


def _deprecation_facts(histories: Sequence[UpgradeHistory]) -> list[Paragraph]:
    """Each distinct deprecation warning once, with the programs and lines that raised it."""
    seen: dict[tuple[str, str], list[str]] = {}
    for history in histories:
        for cell in history.cells:
            for w in cell.deprecations:
                where = f"{history.written_for} code on {cell.run_on}"
                seen.setdefault((w.category, w.message), []).append(where)
    return [
        Paragraph.of(f"{category} ({', '.join(where)}): ", Code(first_line(message, 240)))
        for (category, message), where in seen.items()
    ]


def _cost_fact(rows: Sequence[VersionRow]) -> list[Paragraph]:
    measured = [(r.line, r.overhead_per_step_ms) for r in rows if r.overhead_per_step_ms]
    if len(measured) < 2:
        return []
    (first, first_ms), (last, last_ms) = measured[0], measured[-1]
    return [
        Paragraph.of(
            f"Today's baseline costs {fmt.ms(first_ms)} per step on {first} and "
            f"{fmt.ms(last_ms)} on {last} ({fmt.ratio(first_ms / last_ms, digits=2)} the time "
            "per step of the newest line)."
        )
    ]


def versions_section(rows: Sequence[VersionRow] | None) -> Section:
    """The section (a note only when the run measured no LangChain line)."""
    if not rows:
        note = Note("No LangChain version matrix in this run (the lc-agentexecutor@ engines).")
        return Section("LangChain versions", "langchain-versions", (note,))
    histories = upgrade_histories(rows)
    facts = [f for f in map(_history_fact, histories) if f is not None]
    facts += [
        Paragraph.of(f"LangChain {row.line}: not measured — {row.error}")
        for row in rows
        if row.error
    ]
    facts += _deprecation_facts(histories)
    blocks: list[Table | Bullets] = []
    if histories:
        blocks.append(upgrade_table(rows, histories))
    if any(row.backport is not None for row in rows):
        blocks.append(backport_table(rows))
    if facts:
        blocks.append(Bullets(tuple(facts)))
    blocks.append(cost_table(rows))
    cost = _cost_fact(rows)
    if cost:
        blocks.append(Bullets(tuple(cost)))
    return Section("LangChain versions", "langchain-versions", tuple(blocks))
