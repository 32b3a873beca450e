"""The decision matrix: ``Rating``, one ``rate_*`` per dimension, and ``decision_matrix``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.engines.registry import REGISTRY
from bench.report.analysis import REFERENCE_LLM_LATENCY_MS, overhead_share
from bench.report.facts import Facts, Side, known
from bench.report.rules.common import ms_ci
from bench.report.rules.selection import (
    _shared_statements,
    catalogue_engines,
    debug_engine,
)
from bench.report.rules.thresholds import T, _band_ge, _band_le
from bench.results import fmt


@dataclass(frozen=True)
class Rating:
    dimension: str
    article: tuple[int, int]  # (LangChain, self-built) stars in the article
    stars: tuple[tuple[str, int | None], ...]  # (side label, stars), one per side measured
    basis: str  # the measured numbers
    rule: str

    def of(self, label: str) -> int | None:
        return dict(self.stars).get(label)


ARTICLE_MATRIX: dict[str, tuple[int, int]] = {
    "development speed, simple cases": (5, 3),
    "development speed, complex cases": (2, 4),
    "debuggability": (2, 5),
    "performance": (3, 5),
    "maintainability": (2, 4),
    "flexibility": (2, 5),
    "learning curve": (4, 4),
    "production readiness": (3, 5),
}

RATED = "the production configuration of each side"


def _sides(f: Facts, sides: Sequence[Side] | None) -> Sequence[Side]:
    """The sides rated: the article's two (``Facts.judged``), or those given."""
    return f.judged() if sides is None else sides


def rate_performance(
    f: Facts, sides: Sequence[Side] | None = None, *, under_load: bool = True
) -> Rating:
    """``under_load``: the cores from the load phase when it measured every rated engine
    (else, and with False, the zero-latency suite's for all of them: one basis per table)."""
    rule = (
        "what the user pays, production configurations: the framework's share of a step with a "
        f"{fmt.ms(REFERENCE_LLM_LATENCY_MS, seconds_from=1000)} LLM call (≤0.1 % ★★★★★, "
        "≤0.5 % ★★★★, ≤1 % ★★★, ≤5 % ★★, above ★) and CPU cores per 100 runs/s (≤0.1 ★★★★★, "
        "≤0.25 ★★★★, ≤0.5 ★★★, ≤1 ★★, above ★); the lower of the two. CPU-bound. The cores "
        "are the load phase's (one process, CPU per run of every rated engine at the highest "
        "rate all of them sustained), the figure the summary quotes; without a load phase, "
        "the zero-latency suite's, a lower bound (no HTTP, no concurrency)"
    )
    engines = {side.label: side.production or side.default for side in _sides(f, sides)}
    loaded = f.loaded_cores([e for e in engines.values() if e]) if under_load else None
    stars: list[tuple[str, int | None]] = []
    basis: list[str] = []
    for label, engine in engines.items():
        step = f.step_ms.get(engine or "")
        if not known(step):
            stars.append((label, None))
            continue
        share = overhead_share(step.point, REFERENCE_LLM_LATENCY_MS)
        s = _band_le(share, T.SHARE_BANDS)
        text = f"{engine}: {ms_ci(step)}/step = {fmt.pct(share)} of a 1 s step"
        cpu = f.cpu_run_ms.get(engine or "")
        if loaded is not None:
            rate, by_engine = loaded
            cores = by_engine[engine or ""].point
            text += f", {cores:.2f} cores per 100 runs/s (load phase, at {rate:g} runs/s)"
        elif known(cpu):
            cores = cpu.point * 100 / 1000
            text += f", {cores:.2f} cores per 100 runs/s (zero-latency mock: a lower bound)"
        else:
            cores = None
        if cores is not None:
            s = min(s, _band_le(cores, T.CORES_BANDS))
        stars.append((label, s))
        basis.append(text)
    return Rating(
        "performance",
        ARTICLE_MATRIX["performance"],
        tuple(stars),
        "; ".join(basis) or "no data",
        rule,
    )


def rate_debuggability(f: Facts, sides: Sequence[Side] | None = None) -> Rating:
    rule = (
        "the recall of each side's most useful debug mode (share of a run's key facts found in "
        "its output): ≥0.9 ★★★★★, ≥0.75 ★★★★, ≥0.5 ★★★, ≥0.25 ★★, below ★; one star off when "
        f"its bytes per fact exceed {T.DEBUG_NOISE_FACTOR:g}× the other side's; one star off "
        "when no mode locates the failing call in at least "
        f"{fmt.pct(T.DEBUG_LOCALISED_MIN, decimals=0)} of the fault scenarios"
    )
    engines = {s.label: debug_engine(f, s) for s in _sides(f, sides)}
    bpf = {
        label: f.debug_bytes_per_fact.get(e or "") for label, e in engines.items() if e is not None
    }
    stars: list[tuple[str, int | None]] = []
    basis: list[str] = []
    for label, engine in engines.items():
        if engine is None:
            stars.append((label, None))
            continue
        s = _band_ge(f.debug_recall[engine], T.DEBUG_BANDS)
        mine = bpf.get(label)
        others = [v for k, v in bpf.items() if k != label and v]
        if mine and others and mine > T.DEBUG_NOISE_FACTOR * min(others):
            s -= 1
        located = f.debug_localised.get(engine)
        if located is not None and located < T.DEBUG_LOCALISED_MIN:
            s -= 1
        stars.append((label, max(1, s)))
        basis.append(
            f"{engine} ({f.debug_mode.get(engine, '?')}): recall {f.debug_recall[engine]:.2f}, "
            f"{fmt.count(mine)} bytes/fact, failing call located in "
            f"{fmt.pct(located, decimals=0, missing='n/a')}"
        )
    return Rating(
        "debuggability",
        ARTICLE_MATRIX["debuggability"],
        tuple(stars),
        "; ".join(basis) or "no data",
        rule,
    )


def rate_production(f: Facts, sides: Sequence[Side] | None = None) -> Rating:
    rule = (
        "the share of fault scenarios the production configuration ends the way production "
        "needs (each scenario's base outcome): ≥90 % ★★★★★, ≥70 % ★★★★, ≥50 % ★★★, ≥25 % ★★, "
        "below ★; the custom code it needs is shown beside it"
    )
    stars: list[tuple[str, int | None]] = []
    basis: list[str] = []
    n = f.fault_scenarios
    for side in _sides(f, sides):
        engine = side.production or side.default
        share = f.fault_handled.get(engine or "")
        if not known(share):
            stars.append((side.label, None))
            continue
        stars.append((side.label, _band_ge(share.point, T.PROD_BANDS)))
        text = f"{engine}: {round(share.point * n)}/{n}"
        statements = f.configuration_statements(engine or "")
        if statements:
            text += (
                f" ({statements.get('built-in', 0):,.0f} statements of built-in settings, "
                f"{statements.get('custom', 0):,.0f} of custom code)"
            )
        basis.append(text)
    return Rating(
        "production readiness",
        ARTICLE_MATRIX["production readiness"],
        tuple(stars),
        "; ".join(basis) or "no fault scenarios in this run",
        rule,
    )


def _label(engine: str) -> str:
    return REGISTRY[engine].family_label


def rate_dev_speed(f: Facts, case: str) -> Rating:
    """Development speed from the false-simplicity programs (``case``: simple or complex)."""
    what = (
        "the simplest agent (one tool)"
        if case == "simple"
        else ("the complex agent (memory, three tools, a custom stop condition)")
    )
    rule = (
        f"statements of {what}, the whole program a user writes, passing its test: "
        "LangChain's create_agent and our scheduler. The smaller side (or both, if equal) "
        "★★★★★, the larger by its multiple of the smaller: ≤1.25× ★★★★, ≤1.5× ★★★, ≤2× ★★, "
        "above ★; AgentExecutor shown beside"
    )
    dim = f"development speed, {case} cases"
    sizes = {e: v[case] for e, v in f.simplicity.items() if case in v}
    picked = [
        engines[0]
        for family in ("langchain", "scheduler")
        if (engines := catalogue_engines(family, sizes))
    ]
    if len(picked) < 2:
        return Rating(dim, ARTICLE_MATRIX[dim], (), "false-simplicity programs not run", rule)
    small = max(min(sizes[e] for e in picked), 1)
    basis = "; ".join(f"{e}: {n} statements" for e, n in sizes.items())
    return Rating(
        dim,
        ARTICLE_MATRIX[dim],
        tuple((_label(e), _band_le(sizes[e] / small, T.SIMPLICITY_BANDS)) for e in picked),
        basis,
        rule,
    )


def rate_flexibility(f: Facts) -> Rating:
    rule = (
        "the customisation catalogue: the share of the customisations the side does with "
        "public API only, proved by their effect (100 % ★★★★★, ≥85 % ★★★★, ≥70 % ★★★, ≥50 % ★★, "
        f"below ★); one star off when its cells need more than {T.FLEX_STATEMENTS_FACTOR:g}× "
        "the other side's statements over the customisations both do. LangChain: create_agent "
        "(AgentExecutor shown beside)"
    )
    picked = [
        engines[0]
        for family in ("langchain", "scheduler")
        if (engines := catalogue_engines(family, f.catalogue))
    ]
    if len(picked) < 2:
        return Rating("flexibility", ARTICLE_MATRIX["flexibility"], (), "catalogue not run", rule)
    stars: list[tuple[str, int | None]] = []
    basis: list[str] = []
    for engine in picked:
        s = f.catalogue[engine]
        n = _band_ge(s["public"] / max(s["cells"], 1), T.FLEX_BANDS)
        (other,) = [e for e in picked if e != engine]
        mine, theirs, both = _shared_statements(f, engine, other)
        if both and mine > T.FLEX_STATEMENTS_FACTOR * max(theirs, 1):
            n -= 1
        stars.append((_label(engine), max(1, n)))
        basis.append(f"{engine}: {s['public']}/{s['cells']} with public API, {mine} statements")
    basis += [
        f"{e}: {f.catalogue[e]['public']}/{f.catalogue[e]['cells']} with public API"
        for e in f.catalogue
        if e not in picked
    ]
    return Rating(
        "flexibility", ARTICLE_MATRIX["flexibility"], tuple(stars), "; ".join(basis), rule
    )


def _not_measured(dimension: str, why: str) -> Rating:
    return Rating(dimension, ARTICLE_MATRIX[dimension], (), why, "not measured")


def decision_matrix(f: Facts) -> list[Rating]:
    return [
        rate_dev_speed(f, "simple"),
        rate_dev_speed(f, "complex"),
        rate_debuggability(f),
        rate_performance(f),
        _not_measured(
            "maintainability", "needs change history over time (upgrades, bug rates); not measured"
        ),
        rate_flexibility(f),
        _not_measured("learning curve", "needs people learning each; not measured"),
        rate_production(f),
    ]


# the dimensions whose rule rates any number of sides alike (the others are pairwise:
# LangChain's programs and catalogue cells against ours)
N_SIDED = ("debuggability", "performance", "production readiness")


def frameworks_matrix(f: Facts) -> list[Rating]:
    """The N-sided dimensions rated for every side of the run (``Facts.sides``): ours,
    LangChain and each peer framework, each on its production configuration, by the rules
    of ``decision_matrix``, so that a side's stars do not depend on which others are rated:
    performance takes its cores from the zero-latency suite for every side (the load phase
    measures the headline pair). Debuggability's noise penalty compares a side with the
    least noisy of the others. Empty without a peer framework (the decision matrix has the
    two sides then)."""
    if len(f.sides) < 3:
        return []
    return [
        rate_debuggability(f, f.sides),
        rate_performance(f, f.sides, under_load=False),
        rate_production(f, f.sides),
    ]
