"""Run the whole catalogue and the false-simplicity programs; the rows of ``catalogue.json``.

``run_catalogue()`` runs every cell of ``bench.catalogue.table`` (its effect checked, its
statements counted beyond its family's ``plain`` agent, its internals read from the source)
and every program of ``bench.catalogue.simplicity``, in one event loop, against one
in-process mock and one loopback trace sink. A cell that fails to build or run is a row
with ``works: false`` and its failure; the others go on. ``write_catalogue`` writes the file
(``sort_keys``, a schema version), read back by ``bench.results.load``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.catalogue.customisations import BY_KEY, CUSTOMISATIONS
from bench.catalogue.harness import catalogue_mock, observe_cell
from bench.catalogue.internals import kinds
from bench.catalogue.kit import TraceSink
from bench.catalogue.simplicity import PROGRAMS, run_program
from bench.catalogue.table import CELLS, Cell
from bench.codesize import measure_target
from bench.results.files import CATALOGUE, clean

SCHEMA_VERSION = 1

Progress = Callable[[str], None]


def _sizes(cell: Cell) -> dict[str, Any]:
    if cell.target is None:
        return {"statements": None, "total_statements": None, "baseline_statements": None}
    size, base = measure_target(cell.target), measure_target(cell.baseline_target)
    return {
        "statements": size.statements - base.statements,
        "total_statements": size.statements,
        "baseline_statements": base.statements,
        "nodes": size.nodes - base.nodes,
    }


async def run_cell(cell: Cell, mock: Any, sink: TraceSink) -> dict[str, Any]:
    """One row of ``catalogue.json``'s ``cells``."""
    started = time.perf_counter()
    found = kinds(cell.target) if cell.target is not None else ()
    row: dict[str, Any] = {
        "engine": cell.engine,
        "customisation": cell.customisation,
        "implemented": cell.implemented,
        "internals": list(cell.internals),
        "internals_found": list(found),
        "needs_internals": bool(set(cell.internals) | set(found)),
        "note": cell.note,
        **_sizes(cell),
    }
    failures: list[str] = []
    if not cell.implemented:
        failures.append("not possible with public API: " + cell.note)
    else:
        customisation = BY_KEY[cell.customisation]
        try:
            obs = await observe_cell(cell.engine, customisation, cell.build(), mock, sink)
        except Exception as exc:  # the cell did not even build: a result, not a crash
            failures.append(f"the cell failed: {type(exc).__name__}: {exc}"[:500])
        else:
            failures += customisation.check(obs)
    row["works"] = not failures
    row["failures"] = failures
    row["duration_s"] = round(time.perf_counter() - started, 3)
    return row


async def run_catalogue(
    engines: Iterable[str] | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """Every cell and program of ``engines`` (default: all) → the ``catalogue.json`` data."""
    wanted = None if engines is None else set(engines)
    say = progress or (lambda _: None)
    logging.getLogger("langsmith").setLevel(logging.ERROR)  # the sink is not a real LangSmith
    started_at, started = datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter()
    mock, sink = catalogue_mock(), TraceSink()
    cells, programs = [], []
    try:
        for cell in CELLS:
            if wanted is None or cell.engine in wanted:
                row = await run_cell(cell, mock, sink)
                say(f"{cell.engine} {cell.customisation}: {'works' if row['works'] else 'FAILS'}")
                cells.append(row)
        for program in PROGRAMS:
            if wanted is None or program.engine in wanted:
                result = await run_program(program, mock)
                say(f"{program.engine} {program.case}: {result.statements} statements")
                programs.append(
                    {
                        "engine": program.engine,
                        "case": program.case,
                        "target": program.target,
                        "statements": result.statements,
                        "works": result.works,
                        "failures": result.failures,
                    }
                )
    finally:
        sink.close()
    return {
        "schema_version": SCHEMA_VERSION,
        "started_at": started_at,
        "duration_s": round(time.perf_counter() - started, 2),
        "customisations": [
            {"key": c.key, "title": c.title, "effect": c.effect, "scenario": c.scenario}
            for c in CUSTOMISATIONS
        ],
        "cells": cells,
        "simplicity": programs,
    }


def write_catalogue(directory: Path, data: dict[str, Any]) -> Path:
    """``directory/catalogue.json`` (replaced whole: the catalogue is one measurement)."""
    path = directory / CATALOGUE
    path.write_text(json.dumps(clean(data), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return path
