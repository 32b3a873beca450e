"""The LangChain version matrix: does older code run on each LangChain line the run
measured? Each line is probed in fresh interpreters of its environment (``version_probe``),
and the table (``bench.results.versions``) is written to versions.json."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed

from bench.engines.registry import REGISTRY
from bench.model.scenarios import reference_scenario
from bench.results.files import VERSIONS
from bench.results.folder import load_run_folder
from bench.results.rows import UpgradeCell, VersionProbe
from bench.results.versions import version_rows, write_versions
from bench.runner.cache import cached_engine, code_fingerprint, environment_parts, key_of
from bench.runner.metadata import machine_cores
from bench.runner.phases.context import PhaseContext
from bench.runner.phases.version_probe import BROKE, probe
from scenarios import load_scenarios

PROBE_EST_S = 8.0  # one line's probe (two fresh interpreters), for the ETA


def run(ctx: PhaseContext) -> None:
    engines = ctx.config.engines
    specs = [REGISTRY[e] for e in engines if e in REGISTRY and REGISTRY[e].version_line]
    if not specs:
        return
    ctx.progress.phase("versions", PROBE_EST_S * len(specs), len(specs), "probes")
    ctx.progress.describe("does older code run on each LangChain line?")
    probes: dict[str, VersionProbe | str] = {}
    # what every program plays: the reference scenario as the project ships it
    played = load_scenarios()[str(reference_scenario())].model_dump(mode="json")

    def probe_line(name: str, environment: str) -> VersionProbe | str:
        skipped = ctx.workers.env_failure(name)
        if skipped is not None:
            return skipped
        parts = {
            "phase": "versions",
            "engine": name,
            "scenario": played,
            "code": code_fingerprint(),
            "environment": environment_parts(ctx.workers.packages_of(name)),
        }
        key = key_of(parts)
        entry = ctx.cache.get("versions", key) if cached_engine(name) else None
        if entry is not None:
            reused = {**entry["value"], "reused_from": entry["provenance"]}
            return VersionProbe.model_validate(reused)
        try:
            measured = VersionProbe.model_validate(probe(name, ctx.workers.pythons[environment]))
        except Exception as exc:  # a probe that breaks loses its row, not the run
            return f"probe failed: {type(exc).__name__}: {exc}"
        if cached_engine(name) and not any(_broke(cell) for cell in measured.upgrades):
            ctx.cache.put("versions", key, parts, measured.model_dump(mode="json"))
        return measured

    # each probe is a few fresh interpreters importing LangChain (CPU-bound): one per core
    with ThreadPoolExecutor(max_workers=max(1, machine_cores())) as pool:
        futures = {pool.submit(probe_line, s.name, s.environment): s.name for s in specs}
        for future in as_completed(futures):
            probes[futures[future]] = future.result()
            ctx.progress.advance(PROBE_EST_S)
    ctx.store.sync()
    folder = load_run_folder(ctx.store.directory, require_runs=False)
    rows = version_rows(specs, probes, folder.timed_runs, folder.footprint)
    write_versions(ctx.store.path(VERSIONS), rows)


def _broke(cell: UpgradeCell) -> bool:
    """Whether a program's interpreter broke (not the program): no exact result to keep."""
    runs = [cell, cell.fix] if cell.fix is not None else [cell]
    return any((run.error or "").startswith(BROKE) for run in runs)
