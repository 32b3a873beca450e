"""The LangChain version matrix as data: ``versions.json`` in a run folder.

For each LangChain line the run measured (the registry's ``version_line`` engines), one
``VersionRow``: the packages of its environment, whether today's AgentExecutor baseline runs
there unchanged (``bench.envs.versions`` probes it in a fresh interpreter of that
environment), the size in statements of the smallest change that makes it run (the
registry's ``adapter_code``, counted by ``bench.codesize``), the warnings the adapted code
emits (deprecations counted apart), and its per-step overhead and import footprint from the
run's own rows. The runner writes it at the end of a run; ``read_versions`` reads it back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bench.results import stats
from bench.results.files import read_regular

VERSIONS = "versions.json"
PACKAGES = ("langchain", "langchain-core", "langchain-classic", "langchain-openai", "openai")


class WarningSeen(BaseModel):
    """One distinct warning (category, message, where it was raised) and how often."""

    model_config = ConfigDict(frozen=True)

    category: str
    message: str
    where: str  # module path relative to site-packages, and line
    count: int = Field(ge=1)
    deprecation: bool  # a DeprecationWarning, PendingDeprecationWarning or FutureWarning


class VersionProbe(BaseModel):
    """What ``python -m bench.envs.versions`` saw in one environment."""

    model_config = ConfigDict(frozen=True)

    engine: str
    unchanged: bool  # today's code ran the reference scenario as expected, as is
    unchanged_error: str | None = None
    adapted: bool  # the registry's engine (with its line's changes) did
    adapted_error: str | None = None
    packages: dict[str, str | None] = Field(default_factory=dict)
    warnings: list[WarningSeen] = Field(default_factory=list)  # of the adapted run
    unchanged_warnings: list[WarningSeen] = Field(default_factory=list)


class VersionRow(BaseModel):
    """One LangChain line in the version table."""

    model_config = ConfigDict(frozen=True)

    line: str
    engine: str
    environment: str
    packages: dict[str, str | None]
    runs_unchanged: bool | None  # None: not probed (its environment could not be built)
    unchanged_error: str | None = None
    runs_adapted: bool | None = None
    adapted_error: str | None = None
    statements_changed: int  # the adapter's statements (0: runs unchanged)
    adapter_parts: list[str] = Field(default_factory=list)
    deprecation_warnings: int | None = None  # distinct ones, of the adapted run
    warnings: list[WarningSeen] = Field(default_factory=list)  # every one of the adapted run
    unchanged_warnings: list[WarningSeen] = Field(default_factory=list)  # before it failed
    overhead_per_step_ms: float | None = None  # median over its scenarios
    overhead_per_step_ms_by_scenario: dict[str, float] = Field(default_factory=dict)
    import_ms: float | None = None  # the stack probe (a pristine interpreter), median
    import_modules: float | None = None
    peak_rss_mb: float | None = None  # its workers, median
    error: str | None = None  # why it was not probed


def overhead_by_scenario(rows: Iterable[Any], engine: str) -> dict[str, float]:
    """Median framework overhead per LLM step of ``engine``'s measured runs, per scenario."""
    from bench.results.metrics import step_overhead_ms  # metrics reads run folders: no cycle

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
    statements: dict[str, int],
) -> list[VersionRow]:
    """The table: one row per version engine (``specs``), from its probe (or the reason it
    has none), the run's rows and the adapter sizes (target → statements)."""
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
            "statements_changed": sum(statements[t] for t in spec.adapter_code),
            "adapter_parts": [t.split("::")[-1] for t in spec.adapter_code],
            "overhead_per_step_ms": stats.median(by_scenario.values()) if by_scenario else None,
            "overhead_per_step_ms_by_scenario": by_scenario,
            "import_ms": stats.number(fp.get("stack_import_ms")),
            "import_modules": stats.number(fp.get("stack_modules")),
            "peak_rss_mb": stats.number(fp.get("peak_rss_mb")),
        }
        if isinstance(probe, VersionProbe):
            warnings = list(probe.warnings)
            table.append(
                VersionRow(
                    packages={name: probe.packages.get(name) for name in PACKAGES},
                    runs_unchanged=probe.unchanged,
                    unchanged_error=probe.unchanged_error,
                    runs_adapted=probe.adapted,
                    adapted_error=probe.adapted_error,
                    deprecation_warnings=sum(1 for w in warnings if w.deprecation),
                    warnings=warnings,
                    unchanged_warnings=list(probe.unchanged_warnings),
                    **common,
                )
            )
        else:
            table.append(VersionRow(packages={}, runs_unchanged=None, error=probe, **common))
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
        data = json.loads(read_regular(path).decode("utf-8"))
        rows = data["versions"] if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise ValueError("no list under 'versions'")
        return [VersionRow.model_validate(row) for row in rows]
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot be read ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError, ValidationError) as exc:
        raise ValueError(f"{path.name}: not a version table ({exc})".splitlines()[0]) from None
