"""The customisation catalogue and false simplicity in the report: two tables, their notes.

Functions take the typed ``catalogue.json`` (``bench.results.rows.CatalogueRecord``, from
``RunFolder.catalogue``): ``catalogue_table`` (customisation × engine: works / statements
beyond the plain agent / internals), ``simplicity_table`` (simple vs complex program per
engine), ``notes_table`` (how each cell is done) and ``catalogue_section`` (the three, with
what they show). ``console_table`` prints the first two for ``schedbench catalogue``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench.report.document import Bullets, Cell, Note, Paragraph, Section, Table
from bench.report.frames import order_engines
from bench.results.rows import CatalogueCellRow, CatalogueRecord, SimplicityRow

PUBLIC = "public API"


def engines_of(record: CatalogueRecord) -> list[str]:
    """The catalogue's engines, in the registry's order."""
    return order_engines([c.engine for c in record.cells] + [p.engine for p in record.simplicity])


def cell_text(cell: CatalogueCellRow | None) -> str:
    """'✓ +5, public API' · '✗ +7, private API (…)' · 'not possible: …' · 'not run'."""
    if cell is None:
        return "not run"
    if not cell.implemented:
        return f"not possible: {cell.note}"
    mark = "✓" if cell.works else "✗"
    size = "" if cell.statements is None else f" {cell.statements:+d}"
    kinds = sorted(set(cell.internals) | set(cell.internals_found))
    return f"{mark}{size}, {', '.join(kinds) if kinds else PUBLIC}"


def engine_summary(record: CatalogueRecord, engine: str) -> dict[str, Any]:
    """Per engine: customisations run, working, with public API only, statements added."""
    cells = [c for c in record.cells if c.engine == engine]
    return {
        "cells": len(cells),
        "works": sum(c.works for c in cells),
        "public": sum(c.works and c.implemented and not c.needs_internals for c in cells),
        "internals": sum(c.needs_internals for c in cells),
        "impossible": sum(not c.implemented for c in cells),
        "statements": sum(c.statements or 0 for c in cells if c.implemented),
    }


def _summary_text(summary: dict[str, Any]) -> str:
    return (
        f"{summary['works']}/{summary['cells']} work, {summary['public']} with public API "
        f"only; {summary['statements']:+d} statements in all"
    )


def catalogue_rows(record: CatalogueRecord) -> tuple[list[str], list[tuple[str, ...]]]:
    engines = engines_of(record)
    by = {(c.engine, c.customisation): c for c in record.cells}
    titles = {c.key: c.title for c in record.customisations}
    keys = [c.key for c in record.customisations] or list(
        dict.fromkeys(c.customisation for c in record.cells)
    )
    rows = [
        (titles.get(k, k), *(cell_text(by.get((e, k))) for e in engines))
        for k in keys
        if any((e, k) in by for e in engines)
    ]
    rows.append(("all", *(_summary_text(engine_summary(record, e)) for e in engines)))
    return ["customisation", *engines], rows


def catalogue_table(record: CatalogueRecord) -> Table:
    columns, rows = catalogue_rows(record)
    styled: tuple[tuple[str | Cell, ...], ...] = tuple(
        (row[0], *(Cell(t, "verdict-refuted" if t.startswith("✗") else "") for t in row[1:]))
        for row in rows
    )
    return Table(
        tuple(columns),
        styled,
        caption="✓ = the effect was proved against the mock (what reached the model and the "
        "tools); the number = statements the cell needs beyond the engine's plain agent "
        "(formatting-invariant, bench.engines.codesize); then whether it needs private API, "
        "subclassing of internals or monkeypatching (declared per cell and checked "
        "against its source).",
        css="catalogue",
    )


def simplicity_rows(record: CatalogueRecord) -> tuple[list[str], list[tuple[str, ...]]]:
    by = {(p.engine, p.case): p for p in record.simplicity}
    engines = [e for e in engines_of(record) if any(p.engine == e for p in record.simplicity)]

    def size(p: SimplicityRow | None) -> str:
        if p is None:
            return "not run"
        return f"{p.statements}" + ("" if p.works else " (fails its test)")

    rows: list[tuple[str, ...]] = []
    for e in engines:
        simple, complex_ = by.get((e, "simple")), by.get((e, "complex"))
        growth = (
            f"{complex_.statements / simple.statements:.1f}×"
            if simple and complex_ and simple.statements
            else "n/a"
        )
        rows.append((e, size(simple), size(complex_), growth))
    return ["engine", "simple agent", "complex agent", "complex ÷ simple"], rows


def simplicity_table(record: CatalogueRecord) -> Table:
    columns, rows = simplicity_rows(record)
    return Table(
        tuple(columns),
        tuple(rows),
        caption="Statements of the whole program a user writes (imports and docstrings "
        "not; the chat model is built by the caller on every side). Simple: one tool, one "
        "question. Complex: conversation memory, three tools and a custom stop condition. "
        "Each program passed its test against its scenario unless marked (the notes below "
        "say why).",
        css="simplicity",
        numeric=(1, 2, 3),
    )


def notes_table(record: CatalogueRecord) -> Table:
    titles = {c.key: c.title for c in record.customisations}
    order = {k: i for i, k in enumerate(titles)}
    engines = engines_of(record)
    rows = tuple(
        (titles.get(c.customisation, c.customisation), c.engine, c.note)
        for c in sorted(
            record.cells,
            key=lambda c: (order.get(c.customisation, len(order)), engines.index(c.engine)),
        )
    )
    return Table(("customisation", "engine", "how"), rows, caption="How each cell is done.")


def catalogue_section(record: CatalogueRecord | None) -> Section:
    title, anchor = "Customisation and false simplicity", "customisation"
    if record is None or not (record.cells or record.simplicity):
        return Section(title, anchor, (Note("No catalogue in this run (schedbench catalogue)."),))
    failing = [c for c in record.cells if not c.works and c.implemented]
    blocks: list[Any] = [
        Paragraph.of(
            "Customisations teams ask of an agent loop, each written on every engine with its "
            "public, documented API the way its docs do it, and proved by its effect: what the "
            "mock received and what the tools ran (claim 6, inflexibility). Then the article's "
            "own example of false simplicity (claim 10): the simplest agent and an agent with "
            "memory, several tools and a custom stop condition, on each side."
        ),
        catalogue_table(record),
        simplicity_table(record),
    ]
    if failing:
        blocks.append(
            Bullets(
                tuple(
                    Paragraph.of(f"{c.engine} / {c.customisation}: {'; '.join(c.failures)}")
                    for c in failing
                )
            )
        )
    remarks = [
        Paragraph.of(f"{p.engine} {p.case} agent: {p.note}")
        for p in record.simplicity
        if p.note and not p.works
    ] + [Paragraph.of(f"{s.engine}: not run ({s.reason})") for s in record.skipped]
    if remarks:
        blocks.append(Bullets(tuple(remarks)))
    blocks.append(notes_table(record))
    return Section(title, anchor, tuple(blocks))


def console_table(data: dict[str, Any] | CatalogueRecord) -> str:
    """The catalogue and simplicity tables as plain text."""
    if isinstance(data, CatalogueRecord):
        record = data
    else:
        record = CatalogueRecord.model_validate_json(json.dumps(data))
    parts = []
    for columns, rows in (catalogue_rows(record), simplicity_rows(record)):
        parts.append(_text_table(columns, rows))
    return "\n\n".join(parts)


def _text_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [tuple(columns), *map(tuple, rows)]
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(columns))]
    return "\n".join(
        "  ".join(str(v).ljust(w) for v, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )
