"""Every number the decision matrix and the claims ledger decide on, with its uncertainty.

Each fact is a ``bench.results.stats.Estimate``: a point, a 95 % interval, and the statistic
on every bootstrap resample, so a rule can be evaluated resample by resample
(``bench.report.verdicts``) and say when the data does not settle it. How each is made:

- **overhead and CPU per LLM step** (``step_ms``, ``step_cpu_ms``): per happy-path scenario
  and round, the median of each run's (framework overhead ÷ LLM calls), completed runs,
  zero latency; pooled as the *geometric mean over every happy-path scenario* (each weighted
  once, whatever its run count); an engine that lacks one is left out of the pool, with the
  reason (``step_pool.left_out``). The interval is a t-interval over the per-round values
  (a round is a fresh worker process per engine, shared by every scenario), its resamples
  shared by all engines so that ratios are paired within rounds (``bench.results.pooling``;
  ``step_pool.ratio(a, b)`` has the exact paired interval and the per-scenario spread).
  ``step_spread`` keeps the per-scenario values (the overhead grows with context size and
  answer length; a single number hides that).
- **CPU per run** (``cpu_run_ms``): median CPU of one ``customer_returns`` run, the same
  t-interval over rounds (a pool of that one scenario).
- **tokens per request over raw** (``token_overhead``): exact (the bodies are deterministic).
- **time to first token added by the engine** (``ttft_added_ms``): the TTFT phase's median of
  TTFT minus what the mock scripted for the requests that engine sent (its protocol: for
  ReAct, the "Thought: … Final Answer:" text streamed before the answer is the mock's, not
  the engine's), resampled over runs; then less the bare loop's own (``ttft_floor_ms``: the
  harness's share, which every engine carries), so that the claim judges the framework.
- **fault handling** (``fault_handled``): the share of fault scenarios whose usual outcome
  meets the scenario's base outcome (``analysis.fault_matrix``); exact, per kind too.
- **footprint, code sizes, debug scores**: as measured (exact).
- **the customisation catalogue** (``catalogue``, ``catalogue_statements``): per engine, of the
  customisations tried, how many work, how many with public API only, how many need
  internals, how many are not possible; the statements each working cell needs beyond the
  engine's plain agent. **False simplicity** (``simplicity``): the statements of each
  engine's simple and complex program that passed its test. All exact (counts).
- **over-abstraction** (``framework_calls``, ``send_depth``): from the profiling probe, each
  engine's framework-own Python function calls per LLM step (``bench.engines.packages.
  FRAMEWORK_GROUPS``; geometric mean over its scenarios) and the frames between its caller
  and the HTTP send; call counts are deterministic (exact).
- **the LangChain version matrix** (``versions``): versions.json's rows as measured (exact).
- **switching provider** (``provider_switches``): per engine of the multi-model check
  (``multimodel.json``), whether its plain switch to Anthropic works, the statements it
  changed, and the same for the switch with its fix where there is one; exact.

Engines are named by the registry; the representatives of each side (``Sides``) are the
engines a verdict compares, like with like (``bench.engines.registry.counterpart``).
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np
import pandas as pd

from bench.engines.registry import REGISTRY, REPRESENTATIVE, engines_where
from bench.model.scenarios import reference_scenario
from bench.report import analysis
from bench.report.frames import RAW, RunData
from bench.results import per_engine, pooling, stats
from bench.results.folder import run_seed
from bench.results.metrics import CAPACITY_RATE, common_rate
from bench.results.stats import Estimate

RESAMPLES = per_engine.RESAMPLES  # every interval of the report, the per-engine figures' too


def exact(value: float | None, resamples: int = RESAMPLES) -> Estimate:
    """A number known without sampling error (a count, a deterministic token total)."""
    point = math.nan if value is None else float(value)
    return Estimate(point, point, point, np.full(resamples, point))


def difference(a: Estimate, b: Estimate) -> Estimate:
    """a − b of two independent estimates, resample by resample."""
    drawn = a.resamples - b.resamples
    low, high = stats.interval(drawn)
    return Estimate(a.point - b.point, low, high, drawn)


def known(estimate: Estimate | None) -> TypeGuard[Estimate]:
    return estimate is not None and math.isfinite(estimate.point)


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a family, and its engines for each configuration."""

    family: str  # registry family: "scheduler", "langchain", ...
    label: str  # "self-built scheduler", "LangChain"
    default: str | None  # the engine of the docs' default (ours: guards off)
    production: str | None  # the production configuration
    builtins: str | None = None  # the production configuration without its custom code

    @property
    def engines(self) -> tuple[str, ...]:
        return tuple(e for e in (self.default, self.production) if e is not None)


def _side(family: str, engines: set[str]) -> Side | None:
    """The representative engines of ``family`` that ran (registry: REPRESENTATIVE, then the
    same family's engines of each configuration, streaming like the representative)."""
    specs = [s for s in REGISTRY.values() if s.family == family and s.name in engines]
    if not specs:
        return None
    lead = REPRESENTATIVE.get(family)
    lead_spec = REGISTRY.get(lead) if lead else None
    streams = lead_spec.streams if lead_spec is not None else False

    def pick(configuration: str) -> str | None:
        names = [s.name for s in specs if s.configuration == configuration and not s.outcome_only]
        if lead in names:
            return lead
        # the representative's own production variant first (lc-create-agent -> ...-prod),
        # then an engine that streams as the representative does, then any
        preferred = [n for n in names if lead and n.startswith(lead)]
        alike = [n for n in names if REGISTRY[n].streams == streams]
        candidates = preferred or alike or names
        return candidates[0] if candidates else None

    production = pick("production")
    builtins = next((s.name for s in specs if s.outcome_only and s.variant_of == production), None)
    label = specs[0].family_label
    return Side(family, label, pick("default"), production, builtins)


SIDE_ROLES = ("self-built", "framework")  # registry roles that make a side (not the floor)


def sides_of(engines: set[str]) -> tuple[Side, ...]:
    """A side for every family of a judged role with an engine among ``engines``: the
    self-built scheduler first, LangChain next, then the peer frameworks in registry order."""
    families = dict.fromkeys(s.family for s in REGISTRY.values() if s.role in SIDE_ROLES)
    first = [f for f in ("scheduler", "langchain") if f in families]
    ordered = first + [f for f in families if f not in first]
    return tuple(side for f in ordered if (side := _side(f, engines)) is not None)


@dataclass(frozen=True)
class ProviderSwitch:
    """One engine switched from OpenAI to another provider (``schedbench multimodel``)."""

    engine: str
    provider: str
    baseline_works: bool  # the same engine on OpenAI, unchanged
    works: bool  # the plain switch: only the chat model changed
    statements: int
    as_expected: tuple[int, int]  # (scenarios as expected, scenarios checked), plain switch
    note: str = ""
    fixed_works: bool | None = None  # the switch with the code it needed (None: none tried)
    fixed_statements: int | None = None
    fixed_note: str = ""


@dataclass(frozen=True)
class Facts:
    """The judged numbers of one run (see the module docstring)."""

    engines: tuple[str, ...]
    # every judged side of the run (``sides_of``): ours, LangChain, then each peer framework
    sides: tuple[Side, ...] = ()
    step_ms: dict[str, Estimate] = field(default_factory=dict)
    step_cpu_ms: dict[str, Estimate] = field(default_factory=dict)
    step_spread: dict[str, stats.Spread] = field(default_factory=dict)
    step_scenarios: tuple[str, ...] = ()  # the scenarios the step figures pool
    # the pools themselves: who is left out and why, per-round values, paired ratios
    step_pool: pooling.Pool | None = None
    step_cpu_pool: pooling.Pool | None = None
    # engine → its per-engine aggregates (bench.results.per_engine, as the console prints them)
    engine_summaries: dict[str, per_engine.EngineSummary] = field(default_factory=dict)
    cpu_run_ms: dict[str, Estimate] = field(default_factory=dict)
    token_overhead: dict[str, Estimate] = field(default_factory=dict)
    ttft_added_ms: dict[str, Estimate] = field(default_factory=dict)
    ttft_floor_ms: Estimate | None = None  # what the bare loop itself adds (the harness)
    ttft_ms: dict[str, Estimate] = field(default_factory=dict)
    fault_handled: dict[str, Estimate] = field(default_factory=dict)
    fault_by_kind: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)
    fault_scenarios: int = 0
    fault_missed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    modules: dict[str, Estimate] = field(default_factory=dict)
    import_ms: dict[str, Estimate] = field(default_factory=dict)
    rss_mb: dict[str, Estimate] = field(default_factory=dict)
    code: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    peak_rps: dict[str, Estimate] = field(default_factory=dict)
    # the load phase: (engine, processes) -> bench.results.metrics.Capacity
    capacity: dict[tuple[str, int], Any] = field(default_factory=dict)
    # share of a step's time in callback managers and runnable plumbing (profiling probe)
    callback_share: dict[str, Estimate] = field(default_factory=dict)
    # over-abstraction (the probe): engine -> its framework's own function calls per LLM step
    framework_calls: dict[str, Estimate] = field(default_factory=dict)
    # engine -> frames between the caller's run and the HTTP send (median over scenarios)
    send_depth: dict[str, float] = field(default_factory=dict)
    versions: tuple[Any, ...] = ()  # the LangChain version matrix (VersionRow), oldest first
    debug_recall: dict[str, float] = field(default_factory=dict)
    debug_bytes_per_fact: dict[str, float] = field(default_factory=dict)
    debug_mode: dict[str, str] = field(default_factory=dict)
    debug_localised: dict[str, float] = field(default_factory=dict)
    debug_modes: pd.DataFrame | None = None
    # the customisation catalogue: engine -> {cells, works, public, internals, impossible}
    catalogue: dict[str, dict[str, int]] = field(default_factory=dict)
    # engine -> customisation -> statements beyond the plain agent (working cells)
    catalogue_statements: dict[str, dict[str, int]] = field(default_factory=dict)
    # false simplicity: engine -> {"simple": n, "complex": m} (programs that passed their test)
    simplicity: dict[str, dict[str, int]] = field(default_factory=dict)
    simplicity_failing: tuple[str, ...] = ()  # "engine case" of programs that failed
    provider_switches: dict[str, ProviderSwitch] = field(default_factory=dict)
    switch_scenarios: tuple[str, ...] = ()  # the scenarios the multi-model check ran
    yardstick_ms: float | None = None  # the machine's speed (bench.runner.metadata.yardstick_ms)
    yardstick_end_ms: float | None = None
    notes: tuple[str, ...] = ()

    def side(self, family: str) -> Side | None:
        """The side of a registry family (``scheduler``, ``langchain``, ``pydantic-ai``, …)."""
        return next((s for s in self.sides if s.family == family), None)

    @property
    def self_built(self) -> Side | None:
        return self.side("scheduler")

    @property
    def langchain(self) -> Side | None:
        return self.side("langchain")

    def step_ratio(self, a: str, b: str) -> Estimate:
        """a ÷ b of the overhead per LLM step, as every part of the report prints it: paired
        within rounds over the step pool (``pooling.Pool.ratio``); the ratio of the two
        estimates when the pool lacks one of them."""
        pool = self.step_pool
        if pool is not None and a in pool.figures and b in pool.figures:
            return pool.ratio(a, b).estimate
        return stats.ratio_of_estimates(self.step_ms[a], self.step_ms[b])

    def judged(self) -> list[Side]:
        """The article's two sides, as the claims and the decision matrix judge them."""
        return [s for s in (self.self_built, self.langchain) if s is not None]

    def loaded_cores(self, engines: Sequence[str]) -> tuple[float, dict[str, Estimate]] | None:
        """Cores per 100 runs/s of each engine under production-shaped load (the load
        phase, one process), from the CPU per run each measured at one common rate (the
        highest rate all of them sustained: CPU per run grows with the rate), as
        (that rate, engine → cores); None when the load phase lacks one of them."""
        found = [self.capacity.get((engine, 1)) for engine in engines]
        sweeps = [sweep for sweep in found if sweep is not None]
        if not engines or len(sweeps) != len(found):
            return None
        rate = common_rate(*sweeps)
        if rate is None:
            return None
        cores = {
            e: s.cores_for(CAPACITY_RATE, measured_at=rate)
            for e, s in zip(engines, sweeps, strict=True)
        }
        if any(c is None or not known(c) for c in cores.values()):
            return None
        return rate, {e: c for e, c in cores.items() if c is not None}

    def configuration_statements(self, engine: str) -> dict[str, float]:
        """Statements of an engine's production configuration: {"built-in": n, "custom": m}."""
        out: dict[str, float] = {}
        for (component, part), size in self.code.items():
            if component == f"{engine} configuration":
                out[part] = out.get(part, 0.0) + size.get("statements", 0.0)
        return out


def _seed(data: RunData, *names: object) -> int:
    return zlib.crc32("/".join(map(str, (run_seed(data.meta), *names))).encode())


def _measured_engines(data: RunData) -> list[str]:
    return [e for e in data.engines if not (e in REGISTRY and REGISTRY[e].outcome_only)]


def _step_facts(data: RunData) -> per_engine.PerEngine:
    """Overhead and CPU per LLM step pooled over every happy-path scenario
    (``bench.results.per_engine``, the figures the console, per_engine.csv and compare print
    too): an engine that lacks one is left out, with the reason."""
    fields = [
        "engine",
        "scenario",
        "round",
        "status",
        "latency_profile",
        "overhead_ms",
        "cpu_ms",
        "llm_calls",
        "prompt_tokens",
    ]
    return per_engine.per_engine(
        data.runs[fields].itertuples(index=False, name=None),
        data.happy_scenarios,
        engines=set(_measured_engines(data)),
        run_seed=run_seed(data.meta),
        resamples=RESAMPLES,
    )


def _cpu_run_facts(data: RunData) -> dict[str, Estimate]:
    """CPU of one reference-scenario run: the median, its t-interval over rounds."""
    reference = reference_scenario()
    assert reference is not None  # without arguments: the built-in one (or it raises)
    runs = analysis.perf_runs(data)
    runs = runs[runs["scenario"] == reference].dropna(subset=["cpu_ms"])
    return pooling.pool(
        runs[["engine", "scenario", "round", "cpu_ms"]].itertuples(index=False, name=None),
        (reference,),
        resamples=RESAMPLES,
        seed=_seed(data, "cpu_run"),
    ).estimates()


def _ttft_facts(data: RunData) -> tuple[dict[str, Estimate], dict[str, Estimate]]:
    if data.ttft is None:
        return {}, {}
    runs = data.ttft[data.ttft["status"] == "completed"].dropna(subset=["ttft_ms"])
    added, total = {}, {}
    for engine, g in runs.groupby("engine"):
        own = g["ttft_overhead_ms"].dropna()
        if own.empty:  # an older run: only the common floor is known
            own = (g["ttft_ms"] - g["floor_ttft_ms"].fillna(0.0)).dropna()
        added[str(engine)] = stats.bootstrap(
            own.tolist(), resamples=RESAMPLES, seed=_seed(data, engine, "ttft_added")
        )
        total[str(engine)] = stats.bootstrap(
            g["ttft_ms"].tolist(), resamples=RESAMPLES, seed=_seed(data, engine, "ttft")
        )
    return added, total


def _over_floor(added: dict[str, Estimate]) -> tuple[dict[str, Estimate], Estimate | None]:
    """Each engine's added TTFT less the bare loop's (the harness every engine carries);
    unchanged when the floor was not measured."""
    floor_engine = next(iter(engines_where(role="floor")), None)
    floor = added.get(floor_engine) if floor_engine else None
    if floor is None or not known(floor):
        return added, None
    over = {
        e: stats.difference_of_estimates(v, floor) for e, v in added.items() if e != floor_engine
    }
    return over, floor


def _fault_facts(
    data: RunData,
) -> tuple[dict[str, Estimate], dict[str, dict[str, tuple[int, int]]], dict[str, tuple[str, ...]]]:
    fm = analysis.fault_matrix(data)
    if fm.empty:
        return {}, {}, {}
    kinds = data.scenarios.set_index("scenario")["fault_kind"].to_dict()
    handled, by_kind, missed = {}, {}, {}
    for engine, g in fm.groupby("engine"):
        engine = str(engine)
        handled[engine] = exact(float(g["as_expected"].mean()))
        counts: dict[str, tuple[int, int]] = {}
        for row in g.itertuples():
            kind = str(kinds.get(row.scenario) or "guard")
            ok, n = counts.get(kind, (0, 0))
            counts[kind] = (ok + bool(row.as_expected), n + 1)
        by_kind[engine] = counts
        missed[engine] = tuple(
            f"{r.scenario} ({r.outcome})" for r in g.itertuples() if not r.as_expected
        )
    return handled, by_kind, missed


def _code(data: RunData) -> dict[tuple[str, str], dict[str, float]]:
    cs = data.code_size
    if cs is None:
        return {}
    out: dict[tuple[str, str], dict[str, float]] = {}
    for row in cs.to_dict("records"):
        if isinstance(row.get("error"), str):
            continue
        key = (str(row["component"]), str(row.get("part") or "code"))
        entry = out.setdefault(key, {"statements": 0.0, "logical_lines": 0.0, "files": 0.0})
        for name in entry:
            value = stats.number(row.get(name))
            entry[name] += value or 0.0
    return out


def _footprint(data: RunData, column: str) -> dict[str, Estimate]:
    fp = data.footprint
    if fp is None or column not in fp:
        return {}
    values = fp.set_index("engine")[column].to_dict()
    return {str(e): exact(v) for e, v in values.items() if stats.number(v) is not None}


def _peak(data: RunData) -> dict[str, Estimate]:
    peak = analysis.peak_throughput(data)
    return {str(r.engine): exact(r.runs_per_s) for r in peak.itertuples()}


def _framework_calls(data: RunData) -> tuple[dict[str, Estimate], dict[str, float]]:
    """Per probed engine of a family with framework groups: its framework's own Python
    function calls per LLM step (geometric mean over scenarios; counts are deterministic, so
    exact) and the stack depth to the HTTP send."""
    from bench.engines.packages import FRAMEWORK_GROUPS
    from bench.results.metrics import probe_rows, profile_by_engine

    rows = probe_rows(data.profile)
    calls: dict[str, Estimate] = {}
    depth: dict[str, float] = {}
    for engine in dict.fromkeys(r.engine for r in rows):
        spec = REGISTRY.get(engine)
        groups = FRAMEWORK_GROUPS.get(spec.family if spec else "")
        per_step = [
            sum(r.calls_by_group.get(g, 0) for g in groups) / r.llm_calls
            for r in rows
            if groups and r.engine == engine and r.llm_calls and r.calls_by_group
        ]
        positive = [v for v in per_step if v > 0]
        if positive:
            calls[engine] = exact(stats.geometric_mean(positive))
    for entry in profile_by_engine(list(data.profile)):
        value = stats.number(entry.get("send_depth"))
        if value is not None and math.isfinite(value):
            depth[str(entry["engine"])] = value
    return calls, depth


def _callback_shares(data: RunData) -> dict[str, Estimate]:
    """Per engine: the share of a run's sampled time in callbacks, tracers and runnables
    (the profiling probe; inclusive: ``metrics.inclusive_callback_share``), with its
    sampling error as a normal parametric bootstrap."""
    from bench.engines.packages import CALLBACK_RUNNABLE_GROUPS
    from bench.results.metrics import (
        inclusive_callback_share,
        profile_shares,
        share_standard_error,
    )

    rows = [r for r in data.profile if getattr(r, "status", None) == "ok"]
    out = {}
    for engine in dict.fromkeys(r.engine for r in rows):
        mine = [r for r in rows if r.engine == engine]
        shares = profile_shares(mine)
        if not shares:
            continue
        inclusive = inclusive_callback_share(mine)
        if inclusive is not None:
            point, se = inclusive
        else:  # a probe that recorded no stacks: self time
            point = sum(shares.get(g, 0.0) for g in CALLBACK_RUNNABLE_GROUPS)
            se = share_standard_error(mine, CALLBACK_RUNNABLE_GROUPS)
        rng = np.random.default_rng(_seed(data, engine, "callback_share"))
        drawn = point + rng.normal(0.0, se if math.isfinite(se) else 0.0, RESAMPLES)
        low, high = stats.interval(drawn)
        out[str(engine)] = Estimate(point, low, high, drawn)
    return out


def _catalogue_facts(
    data: RunData,
) -> tuple[
    dict[str, dict[str, int]], dict[str, dict[str, int]], dict[str, dict[str, int]], tuple[str, ...]
]:
    record = data.catalogue
    if record is None:
        return {}, {}, {}, ()
    summary: dict[str, dict[str, int]] = {}
    statements: dict[str, dict[str, int]] = {}
    for cell in record.cells:
        s = summary.setdefault(
            cell.engine, {"cells": 0, "works": 0, "public": 0, "internals": 0, "impossible": 0}
        )
        s["cells"] += 1
        s["works"] += cell.works
        s["public"] += cell.works and cell.implemented and not cell.needs_internals
        s["internals"] += cell.needs_internals
        s["impossible"] += not cell.implemented
        if cell.works and cell.statements is not None:
            statements.setdefault(cell.engine, {})[cell.customisation] = cell.statements
    sizes: dict[str, dict[str, int]] = {}
    failing = []
    for program in record.simplicity:
        if program.works:
            sizes.setdefault(program.engine, {})[program.case] = program.statements
        else:
            failing.append(f"{program.engine} {program.case}")
    return summary, statements, sizes, tuple(failing)


def _capacities(data: RunData) -> dict[tuple[str, int], Any]:
    from bench.results.metrics import capacities

    return dict(capacities(data.load_levels)) if data.load_levels else {}


def _provider_switches(data: RunData) -> dict[str, ProviderSwitch]:
    """Per engine of the multi-model check: its plain switch, and its fix if it has one."""
    document = data.multimodel
    if document is None:
        return {}
    out = {}
    for engine in dict.fromkeys(r.engine for r in document.rows):
        mine = [r for r in document.rows if r.engine == engine]
        plain = next((r for r in mine if r.provider != "openai" and not r.fixed), None)
        if plain is None:
            continue
        baseline = next((r for r in mine if r.provider == "openai"), None)
        fixed = next((r for r in mine if r.provider == plain.provider and r.fixed), None)
        out[engine] = ProviderSwitch(
            engine=engine,
            provider=plain.provider,
            baseline_works=baseline is not None and baseline.works,
            works=plain.works,
            statements=plain.statements_changed,
            as_expected=(sum(c.ok for c in plain.checks), len(plain.checks)),
            note=plain.note,
            fixed_works=None if fixed is None else fixed.works,
            fixed_statements=None if fixed is None else fixed.statements_changed,
            fixed_note="" if fixed is None else fixed.note,
        )
    return out


def _machine(meta: Mapping[str, Any], key: str) -> float | None:
    raw = meta.get("machine")
    machine = raw if isinstance(raw, dict) else {}
    return stats.number(machine.get(key))


def compute_facts(data: RunData) -> Facts:
    """Gather the judged numbers of a run."""
    engines = tuple(data.engines)
    present = set(engines)
    steps = _step_facts(data)
    step_pool, cpu_pool = steps.overhead, steps.cpu
    added, ttft = _ttft_facts(data)
    added, ttft_floor = _over_floor(added)
    handled, by_kind, missed = _fault_facts(data)
    tokens = analysis.token_stats(data).set_index("engine")["overhead_per_request"].to_dict()
    dbg = analysis.debug_best(data).set_index("engine")
    catalogue, catalogue_statements, simplicity, simplicity_failing = _catalogue_facts(data)
    framework_calls, send_depth = _framework_calls(data)
    notes = []
    if step_pool.left_out:
        notes.append(
            f"Per-step figures pool all {len(step_pool.scenarios)} happy-path scenarios ("
            + ", ".join(step_pool.scenarios)
            + "); left out: "
            + "; ".join(f"{e}: {why}" for e, why in step_pool.left_out.items())
            + "."
        )
    return Facts(
        engines=engines,
        sides=sides_of(present),
        step_ms=step_pool.estimates(),
        step_cpu_ms=cpu_pool.estimates(),
        step_spread={e: f.spread for e, f in step_pool.figures.items()},
        step_scenarios=step_pool.scenarios,
        step_pool=step_pool,
        step_cpu_pool=cpu_pool,
        engine_summaries=steps.summaries,
        cpu_run_ms=_cpu_run_facts(data),
        token_overhead={str(e): exact(v) for e, v in tokens.items() if stats.number(v) is not None},
        ttft_added_ms=added,
        ttft_floor_ms=ttft_floor,
        ttft_ms=ttft,
        fault_handled=handled,
        fault_by_kind=by_kind,
        fault_scenarios=len(data.fault_scenarios),
        fault_missed=missed,
        modules=_footprint(data, "modules"),
        import_ms=_footprint(data, "import_ms"),
        rss_mb=_footprint(data, "rss_mb"),
        code=_code(data),
        peak_rps=_peak(data),
        callback_share=_callback_shares(data),
        framework_calls=framework_calls,
        send_depth=send_depth,
        versions=tuple(data.versions),
        capacity=_capacities(data),
        debug_recall={str(k): float(v) for k, v in dbg["recall"].dropna().items()},
        debug_bytes_per_fact={str(k): float(v) for k, v in dbg["bytes_per_fact"].dropna().items()},
        debug_mode={str(k): str(v) for k, v in dbg["mode"].items()},
        debug_localised={str(k): float(v) for k, v in dbg["localised_best"].dropna().items()},
        debug_modes=analysis.debug_modes(data),
        catalogue=catalogue,
        catalogue_statements=catalogue_statements,
        simplicity=simplicity,
        simplicity_failing=simplicity_failing,
        provider_switches=_provider_switches(data),
        switch_scenarios=tuple(data.multimodel.scenarios) if data.multimodel else (),
        yardstick_ms=_machine(data.meta or {}, "yardstick_ms"),
        yardstick_end_ms=_machine(data.meta or {}, "yardstick_end_ms"),
        notes=tuple(notes),
    )


__all__ = [
    "RAW",
    "Facts",
    "ProviderSwitch",
    "Side",
    "compute_facts",
    "difference",
    "exact",
    "known",
]
