"""Per-engine aggregates of a run, computed once: the console, ``per_engine.csv``,
``schedbench compare`` and the report all print these.

An engine's **overhead per LLM step** (and CPU per step) is a run's total ÷ its LLM calls,
over the *completed* runs of the *happy-path* (performance) scenarios, of the ``zero``
latency profile when runs were made under several (``performance_profile``); pooled as the
geometric mean over every happy-path scenario with a t-interval over rounds
(``bench.results.pooling``). An engine that lacks one of the scenarios is left out, with
the reason. ``per_engine`` returns the two pools (the report's ratios and verdicts need
them) and one ``EngineSummary`` per engine; ``engine_summary`` only the latter.

The inputs are ``StepRun`` records, from run rows (``step_runs``: a crashed run is an
``error``, a missing profile is ``zero``, a missing overhead is derived by
``bench.results.rows.run_overhead_ms``, as the report's frames derive it) or from the
report's run frame (the same fields in the same order).
"""

from __future__ import annotations

import zlib
from collections.abc import Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from bench.results import stats
from bench.results.pooling import Pool, pool
from bench.results.rows import run_overhead_ms
from bench.results.stats import DEFAULT_SEED, Estimate

PERFORMANCE_PROFILE = "zero"
RESAMPLES = 1000  # the report's resamples (``bench.report.facts.RESAMPLES``)


class StepRun(NamedTuple):
    """The fields of one timed run that the per-engine figures read."""

    engine: str
    scenario: str
    round: Hashable
    status: object  # completed, failed, aborted, error (a crashed run: error)
    profile: object  # the mock's latency profile (None: zero)
    overhead_ms: object
    cpu_ms: object
    llm_calls: object
    prompt_tokens: object


def performance_profile(profiles: Iterable[object]) -> str | None:
    """The latency profile performance numbers use: ``zero`` when runs were made under
    several profiles, one of them ``zero``; None: every run (one profile, or no ``zero``)."""
    found = {p for p in profiles if p is not None and p == p}
    return PERFORMANCE_PROFILE if len(found) > 1 and PERFORMANCE_PROFILE in found else None


def step_runs(rows: Iterable[Any]) -> list[StepRun]:
    """``StepRun`` records of run rows (``bench.results.rows.RunRow``, timed rows)."""
    out = []
    for r in rows:
        out.append(
            StepRun(
                r.engine,
                r.scenario,
                r.round,
                "error" if r.crashed else r.status,
                r.latency or PERFORMANCE_PROFILE,
                run_overhead_ms(r),
                r.cpu_ms,
                r.llm_calls,
                r.prompt_tokens,
            )
        )
    return out


@dataclass(frozen=True)
class EngineSummary:
    """One engine's per-run aggregates over the happy paths."""

    engine: str
    step_ms: Estimate | None  # overhead per LLM step, pooled; None: left out of the pool
    step_cpu_ms: Estimate | None  # CPU per LLM step, pooled likewise
    scenarios: tuple[str, ...]  # the pool: every happy-path scenario of the run
    left_out: str  # why the engine has no pooled figure ('' when it has one)
    runs: int  # the completed happy-path runs the figures read
    llm_calls_per_run: float | None  # median over those runs
    prompt_tokens_per_run: float | None  # median over those runs


@dataclass(frozen=True)
class PerEngine:
    """The pools of the per-step figures and every engine's summary."""

    overhead: Pool  # overhead per LLM step
    cpu: Pool  # CPU per LLM step
    summaries: dict[str, EngineSummary]


def step_seed(run_seed: int) -> int:
    """The pools' seed: one for every engine, so that they share the round draws."""
    return zlib.crc32(f"{run_seed}/step".encode())


def per_engine(
    runs: Iterable[StepRun | tuple[Any, ...]],
    performance: Collection[str],
    *,
    engines: Collection[str] | None = None,
    run_seed: int = DEFAULT_SEED,
    resamples: int = RESAMPLES,
) -> PerEngine:
    """The per-engine figures of ``runs`` (every timed run, any status) over the happy
    paths: the ``performance`` scenarios that ran, by any engine (sorted). ``engines``: the engines to
    summarise (None: all; the report leaves out the outcome-only ones)."""
    records = [StepRun(*r) for r in runs]
    happy = sorted(set(performance) & {r.scenario for r in records})
    every = [r for r in records if engines is None or r.engine in engines]
    attempted: dict[str, set[str]] = {}
    for r in sorted(every, key=lambda r: str(r.engine)):
        attempted.setdefault(str(r.engine), set()).add(r.scenario)
    kept = [r for r in every if r.status == "completed" and r.scenario in happy]
    profile = performance_profile(r.profile for r in kept)
    if profile is not None:
        kept = [r for r in kept if r.profile == profile]
    seed = step_seed(run_seed)
    overhead, cpu = (
        pool(
            _per_step(kept, field),
            happy,
            attempted=attempted,
            resamples=resamples,
            seed=seed,
        )
        for field in ("overhead_ms", "cpu_ms")
    )
    summaries = {}
    for engine in dict.fromkeys([*overhead.figures, *overhead.left_out]):
        mine = [r for r in kept if r.engine == engine]
        summaries[engine] = EngineSummary(
            engine=engine,
            step_ms=_estimate(overhead, engine),
            step_cpu_ms=_estimate(cpu, engine),
            scenarios=overhead.scenarios,
            left_out=overhead.left_out.get(engine, ""),
            runs=len(mine),
            llm_calls_per_run=_median(r.llm_calls for r in mine),
            prompt_tokens_per_run=_median(r.prompt_tokens for r in mine),
        )
    return PerEngine(overhead, cpu, summaries)


def of_folder(
    folder: Any,
    *,
    engines: Collection[str] | None = None,
    performance: Collection[str] | None = None,
) -> dict[str, EngineSummary]:
    """``engine_summary`` of a run folder (``bench.results.folder.RunFolder``): its timed
    runs, its seed; the happy paths from its scenario files unless ``performance`` is given
    (``bench.model.scenarios.performance_scenarios``, as the report reads them)."""
    from bench.model.scenarios import performance_scenarios

    rows = folder.timed_runs
    if performance is None:
        scenario_dir = folder.config.get("scenario_dir")
        performance = performance_scenarios(scenario_dir, {r.scenario for r in rows})
    return engine_summary(step_runs(rows), performance, engines=engines, run_seed=folder.seed)


def engine_summary(
    runs: Iterable[StepRun | tuple[Any, ...]], performance: Collection[str], **options: Any
) -> dict[str, EngineSummary]:
    """engine → its ``EngineSummary`` (``per_engine``, without the pools)."""
    return per_engine(runs, performance, **options).summaries


PER_ENGINE_COLUMNS = [
    "engine",
    "runs",
    "step_overhead_ms",
    "step_overhead_ms_ci_low",
    "step_overhead_ms_ci_high",
    "step_cpu_ms",
    "step_cpu_ms_ci_low",
    "step_cpu_ms_ci_high",
    "llm_calls_per_run",
    "prompt_tokens_per_run",
    "scenarios",
    "left_out",
]


def per_engine_records(summaries: Mapping[str, EngineSummary]) -> list[dict[str, Any]]:
    """per_engine.csv's rows (``PER_ENGINE_COLUMNS``), one per engine."""
    out = []
    for s in summaries.values():
        record: dict[str, Any] = {"engine": s.engine, "runs": s.runs}
        for name, estimate in (("step_overhead_ms", s.step_ms), ("step_cpu_ms", s.step_cpu_ms)):
            record[name] = estimate.point if estimate else None
            record[f"{name}_ci_low"] = estimate.low if estimate else None
            record[f"{name}_ci_high"] = estimate.high if estimate else None
        record["llm_calls_per_run"] = s.llm_calls_per_run
        record["prompt_tokens_per_run"] = s.prompt_tokens_per_run
        record["scenarios"] = "; ".join(s.scenarios)
        record["left_out"] = s.left_out
        out.append(record)
    return out


def _per_step(runs: Iterable[StepRun], field: str) -> list[tuple[str, str, Hashable, float]]:
    out = []
    for r in runs:
        total, calls = stats.number(getattr(r, field)), stats.number(r.llm_calls)
        if total is not None and calls is not None and calls > 0:
            out.append((r.engine, r.scenario, r.round, total / calls))
    return out


def _estimate(pooled: Pool, engine: str) -> Estimate | None:
    figure = pooled.figures.get(engine)
    return figure.estimate if figure is not None else None


def _median(values: Iterable[object]) -> float | None:
    numbers = [n for v in values if (n := stats.number(v)) is not None]
    return stats.median(numbers) if numbers else None


__all__ = [
    "PER_ENGINE_COLUMNS",
    "EngineSummary",
    "PerEngine",
    "StepRun",
    "engine_summary",
    "of_folder",
    "per_engine",
    "per_engine_records",
    "performance_profile",
    "step_runs",
]
