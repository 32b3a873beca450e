"""The LangChain version matrix as data: ``versions.json`` in a run folder.

Two measurements per LangChain line the run measured (the registry's ``version_line``
engines), one ``VersionRow`` each:

- **upgrades** — the reference agent written as each line's docs wrote it
  (``bench.engines.lc_versions.PROGRAMS``), run *unchanged* on this line by
  ``bench.envs.versions`` in a fresh interpreter of the line's environment: did it run as
  the scenario expects, what did it warn, and — where it failed — how big the change is that
  makes it run (``Fix``: statements changed between the program as written and the program
  that runs, and the packages it adds);
- **today's per-step cost** — today's AgentExecutor baseline back-ported to the line (the
  ``lc-agentexecutor@<line>`` engine): its framework overhead per LLM step and import
  footprint from the run's own rows. Same code on every line, so it shows how the
  AgentExecutor stack's cost changed; it says nothing about compatibility.

``upgrade_histories`` turns the rows into one ``UpgradeHistory`` per program (its cells in
line order), which the report section and the claim both read. The runner writes the file at
the end of a run; ``read_versions`` reads it back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

VERSIONS = "versions.json"
PACKAGES = ("langchain", "langchain-core", "langchain-classic", "langchain-openai", "openai")


def line_key(line: str) -> tuple[int, ...]:
    """Sort key of a LangChain line ("0.3" < "1")."""
    return tuple(int(part) for part in line.split("."))


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def first_line(text: str | None, limit: int = 90) -> str:
    """The first line of an error, cut to ``limit`` characters."""
    lines = (text or "").strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class WarningSeen(BaseModel):
    """One distinct warning (category, message, where it was raised) and how often."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    category: str
    message: str
    where: str  # module path relative to site-packages (or the program's file), and line
    count: int = Field(ge=1)
    deprecation: bool  # a DeprecationWarning, PendingDeprecationWarning or FutureWarning

    @property
    def langchain_deprecation(self) -> bool:
        """LangChain's own announcement that an API the code uses goes away
        (``LangChainDeprecationWarning`` and its pending form, which LangChain shows by
        default) — not another library's deprecation raised inside LangChain."""
        return self.deprecation and self.category.startswith("LangChain")


class ProgramRun(BaseModel):
    """One run of a program (as written, or fixed) in one environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ran: bool  # it ended as the scenario expects
    error: str | None = None  # the exception, or how the run missed the expectations
    warnings: list[WarningSeen] = Field(default_factory=list)

    @property
    def deprecations(self) -> list[WarningSeen]:
        """LangChain's deprecation warnings of the run (``WarningSeen.langchain_deprecation``)."""
        return [w for w in self.warnings if w.langchain_deprecation]

    @property
    def deprecations_text(self) -> str:
        return plural(len(self.deprecations), "deprecation warning")


class Fix(ProgramRun):
    """The change that makes a program that failed on a line run there, and its run."""

    statements: int = Field(ge=0)  # ast statements changed, program as written → fixed
    edits: list[str] = Field(default_factory=list)  # each "old → new", as declared
    packages: list[str] = Field(default_factory=list)  # distributions it adds to the install

    @property
    def summary(self) -> str:
        """ "1 statement + langchain-classic" (and, when even the fix fails, why)."""
        text = plural(self.statements, "statement")
        if self.packages:
            text += " + " + ", ".join(self.packages)
        return text if self.ran else f"{text}, still fails: {first_line(self.error)}"


class UpgradeCell(ProgramRun):
    """A program written for one line, run unchanged on one (newer or same) line."""

    written_for: str
    run_on: str
    fix: Fix | None = None  # when it failed and a fix is declared for this line


class VersionProbe(BaseModel):
    """What ``python -m bench.envs.versions ENGINE`` saw in one line's environment."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    engine: str
    line: str
    packages: dict[str, str | None] = Field(default_factory=dict)
    upgrades: list[UpgradeCell] = Field(default_factory=list)


class VersionRow(BaseModel):
    """One LangChain line in the version table."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: str
    engine: str
    environment: str
    packages: dict[str, str | None]
    upgrades: list[UpgradeCell] = Field(default_factory=list)  # the programs run on this line
    # today's AgentExecutor baseline back-ported to this line (lc-agentexecutor@<line>)
    overhead_per_step_ms: float | None = None  # median over its scenarios
    overhead_per_step_ms_by_scenario: dict[str, float] = Field(default_factory=dict)
    import_ms: float | None = None  # the stack probe (a pristine interpreter), median
    import_modules: float | None = None
    peak_rss_mb: float | None = None  # its workers, median
    error: str | None = None  # why it was not probed (then ``upgrades`` is empty)


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
            table.append(VersionRow(packages=packages, upgrades=list(probe.upgrades), **common))
        else:
            table.append(VersionRow(packages={}, error=probe, **common))
    return table


def write_versions(path: Path, rows: Sequence[VersionRow]) -> None:
    data = {"versions": [row.model_dump(mode="json") for row in rows]}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def read_versions(directory: Path | str) -> list[VersionRow] | None:
    """The version table of a run folder (None: the run measured no LangChain line).

    Raises ``ValueError`` naming the file and the reason when versions.json is not a
    version table (the run-folder loader turns that into a ``Skipped``)."""
    path = Path(directory) / VERSIONS
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rows = data["versions"] if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise ValueError("no list under 'versions'")
        return [VersionRow.model_validate(row) for row in rows]
    except (ValueError, UnicodeDecodeError, ValidationError) as exc:
        raise ValueError(f"{path.name}: not a version table ({exc})".splitlines()[0]) from None
