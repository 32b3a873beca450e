"""The multi-model check in the report: each engine switched from OpenAI to Anthropic.

``multimodel_table`` turns ``multimodel.json`` (``bench.results.rows.MultiModelFile``) into
the report's table — engine × provider: whether it works, the scenarios as expected, the
statements the switch changed and what it took; ``console_table`` is the same for
``schedbench multimodel``; ``section`` is the report's section around the table.
"""

from __future__ import annotations

from bench.report.document import Bullets, Cell, Code, Note, Paragraph, Section, Table
from bench.report.frames import RunData, order_engines
from bench.results.rows import MultiModelFile, MultiModelRow

P = Paragraph.of
COLUMNS = (
    "engine",
    "provider",
    "what changed",
    "works",
    "scenarios as expected",
    "statements changed",
    "note",
)


def ordered(document: MultiModelFile) -> list[MultiModelRow]:
    """Rows in the registry's engine order; per engine the OpenAI baseline, then the plain
    switch, then the switch with its fix."""
    rank = {engine: i for i, engine in enumerate(order_engines(r.engine for r in document.rows))}
    return sorted(document.rows, key=lambda r: (rank[r.engine], r.provider != "openai", r.fixed))


def _changed(row: MultiModelRow) -> str:
    if row.provider == "openai" and not row.code:
        return "nothing (the baseline)"
    return "the chat model and more" if row.fixed else "the chat model only"


def _cells(row: MultiModelRow) -> tuple[str, ...]:
    ok = sum(c.ok for c in row.checks)
    return (
        row.engine,
        row.provider,
        _changed(row),
        "yes" if row.works else "no",
        f"{ok}/{len(row.checks)}",
        f"{row.statements_changed:,}",
        row.note,
    )


def multimodel_table(document: MultiModelFile) -> Table:
    """Engine × provider: works, scenarios as expected, statements changed, note."""
    body = []
    for row in ordered(document):
        plain = _cells(row)
        cells: list[str | Cell] = list(plain)
        cells[3] = Cell(plain[3], "verdict-supported" if row.works else "verdict-refuted")
        cells[5] = Cell(str(cells[5]), "num")
        body.append(tuple(cells))
    scenarios = ", ".join(document.scenarios)
    return Table(
        COLUMNS,
        tuple(body),
        caption=f"Each engine on OpenAI and on Anthropic's Messages API, on {scenarios}, "
        "against the mock on loopback. Works: every scenario ended as the benchmark expects "
        "that engine to end it. Statements changed: an ast diff of the provider-specific "
        "code against the OpenAI code it replaces (docs/report.md, Multi-model support).",
        css="multimodel",
        numeric=(5,),
    )


def console_table(document: MultiModelFile) -> str:
    """The same table as plain text."""
    lines = [COLUMNS, *(_cells(row) for row in ordered(document))]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines
    )


def section(data: RunData) -> Section:
    """The report's section: what was switched, the table, and the code that was diffed."""
    title, anchor = "Switching provider", "switching-provider"
    document = data.multimodel
    if document is None:
        return Section(
            title, anchor, (Note("No multi-model check in this run (schedbench multimodel)."),)
        )
    diffed = sorted({target for row in document.rows for target in row.code})
    packages = ", ".join(f"{k} {v}" for k, v in sorted(document.packages.items()) if v)
    blocks = (
        P(
            'The article grants LangChain "one code base across OpenAI, Anthropic and open '
            "models\". Each engine is run on OpenAI's chat completions and on Anthropic's "
            "Messages API (the mock speaks both, from the same scripts), with only its "
            "provider-specific code changed: LangChain's ChatOpenAI for ChatAnthropic, our "
            "OpenAIChatClient for AnthropicChatClient. Where the plain switch does not work, "
            "the fix it took is a row of its own. The claims ledger's multi-model claim judges "
            "the LangChain rows."
        ),
        multimodel_table(document),
        P("The code diffed (before → after):"),
        Bullets(tuple(P(Code(target)) for target in diffed)),
        P(f"Packages: {packages}."),
    )
    return Section(title, anchor, blocks)
