"""The LangChain version matrix as data: ``versions.json`` in a run folder.

Two measurements per LangChain line the run measured (the registry's ``version_line``
engines), one ``VersionRow`` each:

- **upgrades** — the reference agent written as each line's docs wrote it
  (``bench.engines.lc_versions.PROGRAMS``), run *unchanged* on this line by
  ``bench.runner.phases.version_probe`` in a fresh interpreter of the line's environment: did
  it run as the scenario expects, what did it warn, and — where it failed — how big the change is that
  makes it run (``Fix``: statements changed between the program as written and the program
  that runs, and the packages it adds);
- **today's per-step cost** — today's AgentExecutor baseline back-ported to the line (the
  ``lc-agentexecutor@<line>`` engine): its framework overhead per LLM step and import
  footprint from the run's own rows. Same code on every line, so it shows how the
  AgentExecutor stack's cost changed; it says nothing about compatibility.

``upgrade_histories`` turns the rows into one ``UpgradeHistory`` per program (its cells in
line order), which the report section and the claim both read. The runner writes the file at
the end of a run; ``bench.results.folder.read_versions`` reads it back (a legacy table too:
the back-port direction). The rows themselves are ``bench.results.rows.VersionRow``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.results.rows import UpgradeCell, VersionProbe, VersionRow, line_key

PACKAGES = ("langchain", "langchain-core", "langchain-classic", "langchain-openai", "openai")


@dataclass(frozen=True)
class UpgradeHistory:
    """One program across the lines it was run on, oldest first."""

    written_for: str
    cells: tuple[UpgradeCell, ...]

    @property
    def newer(self) -> tuple[UpgradeCell, ...]:
        """The cells of the lines after the one it was written for."""
        return tuple(c for c in self.cells if line_key(c.run_on) > line_key(self.written_for))

    @property
    def first_break(self) -> UpgradeCell | None:
        """The first newer line it does not run on unchanged (None: it runs on all)."""
        return next((c for c in self.newer if not c.ran), None)

    @property
    def before_break(self) -> UpgradeCell | None:
        """The cell of the line just before ``first_break`` (None: none was measured)."""
        broken = self.first_break
        if broken is None:
            return None
        earlier = [c for c in self.cells if line_key(c.run_on) < line_key(broken.run_on)]
        return earlier[-1] if earlier else None

    @property
    def announced(self) -> bool | None:
        """Whether a LangChain deprecation warning on the line before the break named what
        broke: a name the error quotes (``'AgentExecutor'``, ``'langchain_community'``)
        appears in the warning's text (None: no break, or no line before it measured)."""
        broken, before = self.first_break, self.before_break
        if broken is None or before is None:
            return None
        names = {_plain(name) for name in re.findall(r"'([^'\s]+)'", broken.error or "")}
        texts = [_plain(w.message) for w in before.deprecations]
        return any(name in text for name in names for text in texts)

    def on(self, line: str) -> UpgradeCell | None:
        return next((c for c in self.cells if c.run_on == line), None)


def _plain(text: str) -> str:
    return text.lower().replace("-", "_")


def upgrade_histories(rows: Iterable[VersionRow]) -> list[UpgradeHistory]:
    """Every program's cells, gathered from the lines' rows; programs oldest first."""
    by_program: dict[str, list[UpgradeCell]] = {}
    for row in rows:
        for cell in row.upgrades:
            by_program.setdefault(cell.written_for, []).append(cell)
    return [
        UpgradeHistory(line, tuple(sorted(cells, key=lambda c: line_key(c.run_on))))
        for line, cells in sorted(by_program.items(), key=lambda item: line_key(item[0]))
    ]


def overhead_by_scenario(rows: Iterable[Any], engine: str) -> dict[str, float]:
    """Median framework overhead per LLM step of ``engine``'s measured runs, per scenario."""
    # here, not at the top: the probe imports this module in the lines' environments, which
    # lack numpy; and metrics reads run folders (no cycle)
    from bench.results import stats
    from bench.results.metrics import step_overhead_ms

    per: dict[str, list[float]] = {}
    for row in rows:
        if row.engine != engine or row.phase != "timed" or getattr(row, "crashed", False):
            continue
        value = step_overhead_ms(row)
        if value is not None and row.status == "completed":
            per.setdefault(row.scenario, []).append(value)
    return {scenario: stats.median(values) for scenario, values in per.items()}


def version_rows(
    specs: Sequence[Any],
    probes: dict[str, VersionProbe | str],
    runs: Sequence[Any],
    footprint: Sequence[Any],
) -> list[VersionRow]:
    """The table: one row per version engine (``specs``), from its probe (or the reason it
    has none) and the run's rows."""
    from bench.results import stats
    from bench.results.metrics import footprint_by_engine

    prints = {entry["engine"]: entry for entry in footprint_by_engine(list(footprint))}
    table = []
    for spec in specs:
        probe = probes.get(spec.name)
        by_scenario = overhead_by_scenario(runs, spec.name)
        fp = prints.get(spec.name, {})
        common: dict[str, Any] = {
            "line": spec.version_line,
            "engine": spec.name,
            "environment": spec.environment,
            "overhead_per_step_ms": stats.median(by_scenario.values()) if by_scenario else None,
            "overhead_per_step_ms_by_scenario": by_scenario,
            "import_ms": stats.number(fp.get("stack_import_ms")),
            "import_modules": stats.number(fp.get("stack_modules")),
            "peak_rss_mb": stats.number(fp.get("peak_rss_mb")),
        }
        if isinstance(probe, VersionProbe):
            packages = {name: probe.packages.get(name) for name in PACKAGES}
            table.append(
                VersionRow(
                    packages=packages,
                    upgrades=list(probe.upgrades),
                    reused_from=probe.reused_from,
                    **common,
                )
            )
        else:
            table.append(VersionRow(packages={}, error=probe, **common))
    return table


def write_versions(path: Path, rows: Sequence[VersionRow]) -> None:
    """versions.json in the upgrade direction (a legacy ``backport`` is never written)."""
    data = {"versions": [row.model_dump(mode="json", exclude={"backport"}) for row in rows]}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
