"""Run the whole catalogue and the false-simplicity programs; the rows of ``catalogue.json``.

``run_catalogue()`` runs every cell of ``bench.catalogue.table`` (its effect checked, its
statements counted beyond its family's ``plain`` agent, its internals read from the source)
and every program of ``bench.catalogue.simplicity``, in one event loop, against one
in-process mock and one loopback trace sink. A peer's engine runs the same way inside its
own virtualenv (``bench.envs``; ``python -m bench.catalogue.catalogue_worker ENGINE...`` prints its
rows as JSON); an environment that cannot be built leaves its engines ``skipped``, with the
reason. A cell that fails to build or run is a row
with ``works: false`` and its failure; the others go on. ``write_catalogue`` writes the file
(``sort_keys``, a schema version), read back by ``bench.results.folder``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import PROJECT_ROOT
from bench.catalogue.customisations import BY_KEY, CUSTOMISATIONS
from bench.catalogue.harness import catalogue_mock, observe_cell
from bench.catalogue.internals import kinds
from bench.catalogue.kit import TraceSink
from bench.catalogue.simplicity import PROGRAMS, run_program
from bench.catalogue.table import CELLS, FAMILIES, Cell
from bench.engines.codesize import measure_target
from bench.results.files import CATALOGUE, clean
from bench.runner.channel import last_message

SCHEMA_VERSION = 1
WORKER_TIMEOUT_S = 600.0  # a peer environment's whole catalogue: seconds, unless it hangs

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


def environment_of(engine: str) -> str:
    """The virtualenv ``engine`` runs in (the registry's ``environment``)."""
    from bench.engines.registry import REGISTRY
    from bench.envs import MAIN

    spec = REGISTRY.get(engine)
    return spec.environment if spec is not None else MAIN


def run_in_environment(environment: str, engines: list[str], say: Progress) -> dict[str, Any]:
    """Run ``engines``' cells and programs in ``environment``'s interpreter (a subprocess of
    ``bench.catalogue.catalogue_worker``); their rows, or ``skipped`` with the reason."""
    from bench.envs import EnvironmentUnavailable, ensure

    try:
        python = ensure(environment).python
    except EnvironmentUnavailable as exc:
        return {"skipped": [{"engine": e, "reason": exc.reason} for e in engines]}
    done = subprocess.run(
        [python, "-m", "bench.catalogue.catalogue_worker", *engines],
        capture_output=True,
        text=True,
        timeout=WORKER_TIMEOUT_S,
        cwd=PROJECT_ROOT,
    )
    for line in done.stderr.splitlines():
        say(line)
    message = last_message(done.stdout, "catalogue")
    if done.returncode != 0 or message is None:
        reason = f"the {environment} worker exited {done.returncode}: {done.stderr[-500:]}"
        return {"skipped": [{"engine": e, "reason": reason} for e in engines]}
    return dict(message["data"])


async def run_catalogue(
    engines: Iterable[str] | None = None,
    progress: Progress | None = None,
    *,
    in_process: bool = False,
) -> dict[str, Any]:
    """Every cell and program of ``engines`` (default: all) → the ``catalogue.json`` data.
    An engine of another environment runs in that environment's interpreter, unless
    ``in_process`` (the worker, already there)."""
    wanted = list(FAMILIES) if engines is None else list(engines)
    say = progress or (lambda _: None)
    logging.getLogger("langsmith").setLevel(logging.ERROR)  # the sink is not a real LangSmith
    started_at, started = datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter()
    here = [e for e in wanted if in_process or environment_of(e) == "main"]
    elsewhere: dict[str, list[str]] = {}
    for engine in wanted:
        if engine not in here:
            elsewhere.setdefault(environment_of(engine), []).append(engine)
    mock, sink = catalogue_mock(), TraceSink()
    cells, programs, skipped = [], [], []
    try:
        for cell in CELLS:
            if cell.engine in here:
                row = await run_cell(cell, mock, sink)
                say(f"{cell.engine} {cell.customisation}: {'works' if row['works'] else 'FAILS'}")
                cells.append(row)
        for program in PROGRAMS:
            if program.engine in here:
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
                        "note": program.note,
                    }
                )
    finally:
        sink.close()
    for environment, group in elsewhere.items():
        data = await asyncio.to_thread(run_in_environment, environment, group, say)
        cells += data.get("cells", [])
        programs += data.get("simplicity", [])
        skipped += data.get("skipped", [])
    order = {e: i for i, e in enumerate(wanted)}
    cells.sort(key=lambda r: order[r["engine"]])  # stable: each engine's cells in table order
    programs.sort(key=lambda r: order[r["engine"]])
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
        "skipped": skipped,
    }


def write_catalogue(directory: Path, data: dict[str, Any]) -> Path:
    """``directory/catalogue.json`` (replaced whole: the catalogue is one measurement)."""
    path = directory / CATALOGUE
    path.write_text(json.dumps(clean(data), indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return path
