"""The LangChain version matrix as data: ``versions.json`` in a run folder.

For each LangChain line the run measured (the registry's ``version_line`` engines), one
``VersionRow``: the packages of its environment, whether today's AgentExecutor baseline runs
there unchanged (``bench.runner.phases.version_probe`` probes it in a fresh interpreter of that
environment), the size in statements of the smallest change that makes it run (the
registry's ``adapter_code``, counted by ``bench.engines.codesize``), the warnings the adapted code
emits (deprecations counted apart), and its per-step overhead and import footprint from the
run's own rows. The runner writes it at the end of a run; ``bench.results.folder.read_versions``
reads it back. The rows themselves are ``bench.results.rows.VersionRow``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from bench.results import stats
from bench.results.metrics import footprint_by_engine, step_overhead_ms
from bench.results.rows import VersionProbe, VersionRow

PACKAGES = ("langchain", "langchain-core", "langchain-classic", "langchain-openai", "openai")


def overhead_by_scenario(rows: Iterable[Any], engine: str) -> dict[str, float]:
    """Median framework overhead per LLM step of ``engine``'s measured runs, per scenario."""
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
