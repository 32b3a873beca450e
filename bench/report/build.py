"""Assemble the report: charts -> facts -> rules -> sections -> report.md and report.html."""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.report import charts as charts_mod
from bench.report import load_section, multimodel, sections
from bench.report.catalogue import catalogue_section
from bench.report.document import Block, Document, Figure, Note, Section, to_html, to_markdown
from bench.report.facts import Facts, compute_facts
from bench.report.frames import RunData
from bench.report.rules import (
    Claim,
    Rating,
    claims_ledger,
    decision_matrix,
    frameworks_matrix,
)
from bench.report.versions_section import versions_section
from bench.report.write import real_dir, replace_file


@dataclass(frozen=True)
class Report:
    """What ``build_report`` produced."""

    document: Document
    markdown: Path
    html: Path
    charts: tuple[Path, ...]  # PNG and SVG files written
    skipped: tuple[tuple[str, str], ...]  # (chart key, reason)
    facts: Facts
    matrix: tuple[Rating, ...]
    ledger: tuple[Claim, ...]


# what the chart processes draw from: set before they fork, inherited (never pickled)
_DRAWING: tuple[RunData, Path] | None = None


def _draw(index: int) -> tuple[Path, Path] | str:
    """Chart ``index`` of ``charts.CHARTS`` drawn from ``_DRAWING``: its files, or why not."""
    assert _DRAWING is not None
    data, charts_dir = _DRAWING
    spec = charts_mod.CHARTS[index]
    try:
        return charts_mod.save(spec, data, charts_dir)
    except charts_mod.NoData as exc:
        return str(exc)
    except Exception as exc:  # a chart bug must not cost the whole report
        reason = f"failed to draw ({type(exc).__name__}: {exc})"
        print(f"schedbench report: chart {spec.key}: {reason}", file=sys.stderr)
        return reason


def render_charts(
    data: RunData, charts_dir: Path, *, jobs: int | None = None
) -> tuple[dict[str, Figure | Note], list[Path], list[tuple[str, str]]]:
    """Every chart of ``charts.CHARTS`` as PNG + SVG; a missing input skips it with a note.

    Drawn in ``jobs`` forked processes (default: one per core, at most 4; each chart is
    independent, and a forked child reads the run's frames without copying them); one job,
    or a platform without ``fork``, draws them here in turn."""
    global _DRAWING
    indices = range(len(charts_mod.CHARTS))
    jobs = min(4, os.cpu_count() or 1) if jobs is None else jobs
    _DRAWING = (data, charts_dir)
    try:
        if jobs > 1 and "fork" in multiprocessing.get_all_start_methods():
            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                results = list(pool.map(_draw, indices))
        else:
            results = [_draw(i) for i in indices]
    finally:
        _DRAWING = None
    slots: dict[str, Figure | Note] = {}
    files: list[Path] = []
    skipped: list[tuple[str, str]] = []
    for spec, result in zip(charts_mod.CHARTS, results, strict=True):
        if isinstance(result, str):
            skipped.append((spec.key, result))
            slots[spec.key] = Note(f"Chart '{spec.title}' skipped: {result}.")
        else:
            png, svg = result
            slots[spec.key] = Figure(spec.key, spec.title, spec.caption, png, svg)
            files.extend([png, svg])
    return slots, files, skipped


def build_document(
    data: RunData,
    slots: dict[str, Figure | Note],
    skipped: Sequence[tuple[str, str]],
    *,
    compare: Sequence[Block] | None = None,
    baseline_label: str = "the baseline run",
) -> tuple[Document, Facts, list[Rating], list[Claim]]:
    facts = compute_facts(data)
    matrix = decision_matrix(facts)
    ledger = claims_ledger(facts)
    everyone = sections.frameworks_matrix(facts, frameworks_matrix(facts))
    body: list[Section] = [
        sections.executive_summary(data, facts, matrix, ledger),
        sections.decision_matrix(matrix),
        *([everyone] if everyone is not None else []),
        sections.claims_ledger(ledger),
        sections.when_to_choose(data, facts, slots),
        sections.performance(data, slots),
        sections.where_time_goes(data, slots),
        load_section.load_phase(data, slots),
        sections.tokens(data, slots),
        sections.footprint(data, facts, slots),
        sections.debuggability(data, slots),
        sections.faults(data, slots),
        catalogue_section(data.catalogue),
        multimodel.section(data),
        versions_section(data.versions),
        sections.per_scenario(data),
    ]
    if compare is not None:
        body.append(sections.comparison(compare, baseline_label))
    body.extend([sections.environment(data), sections.caveats(data, skipped)])
    meta = data.meta or {}
    run_id = str(meta.get("run_id") or (data.run_dir.name if data.run_dir else "synthetic"))
    machine = _machine(meta)
    subtitle = f"run {run_id}" + (f" on {machine}" if machine else "")
    doc = Document(
        title="schedbench: LangChain or our own agent loop?",
        subtitle=subtitle,
        sections=tuple(body),
        footer=(
            "Generated by schedbench report on "
            f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}. Every rating and verdict is "
            "computed from the run's files by the rules printed next to it (docs/report.md)."
        ),
        meta={"generator": "schedbench report", "schedbench-run": run_id},
    )
    return doc, facts, matrix, ledger


def _machine(meta: dict) -> str:
    """'AMD EPYC, 2 logical CPUs, git 8685c60 (dirty)' from meta.json, as far as known."""
    raw_machine = meta.get("machine")
    machine = raw_machine if isinstance(raw_machine, dict) else {}
    parts = []
    if machine.get("cpu_model"):
        parts.append(str(machine["cpu_model"]))
    if machine.get("cpu_logical"):
        parts.append(f"{machine['cpu_logical']} logical CPUs")
    raw_git = meta.get("git")
    git = raw_git if isinstance(raw_git, dict) else {}
    if git.get("sha"):
        parts.append(f"git {str(git['sha'])[:8]}" + (" (dirty)" if git.get("dirty") else ""))
    shards = shards_of(meta)
    if shards:
        hosts = ", ".join(dict.fromkeys(str(s.get("host")) for s in shards))
        parts[:2] = [f"{len(shards)} shards on {hosts} (every ratio within one host)"]
    return ", ".join(parts)


def shards_of(meta: dict) -> list[dict]:
    """The shards of a merged run (``schedbench merge``): meta.json's ``shards``, or []."""
    shards = meta.get("shards")
    return [s for s in shards if isinstance(s, dict)] if isinstance(shards, list) else []


def build_report(
    data: RunData,
    out_dir: Path,
    *,
    compare: Sequence[Block] | None = None,
    baseline_label: str = "the baseline run",
) -> Report:
    """Write ``charts/``, ``report.md`` and ``report.html`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    slots, files, skipped = render_charts(data, real_dir(out_dir / "charts"))
    doc, facts, matrix, ledger = build_document(
        data, slots, skipped, compare=compare, baseline_label=baseline_label
    )
    md = out_dir / "report.md"
    html = out_dir / "report.html"
    replace_file(md, to_markdown(doc, base=out_dir))
    replace_file(html, to_html(doc))
    return Report(doc, md, html, tuple(files), tuple(skipped), facts, tuple(matrix), tuple(ledger))
