"""The report's sections, built from a run's data, its facts and its rendered charts.

Each function returns a ``Section`` of plain-text blocks (see ``bench.report.document``);
nothing here formats HTML or Markdown. Every sentence that states a number reads it from
the data, and every judgement comes from ``bench.report.rules``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd

from bench.engines.registry import REGISTRY
from bench.model.scenarios import reference_scenario
from bench.report import analysis
from bench.report.analysis import SHARE_THRESHOLDS, breakeven_latency
from bench.report.document import (
    Block,
    Bullets,
    Cell,
    Code,
    Excerpt,
    Figure,
    Note,
    Paragraph,
    Section,
    Strong,
    Table,
    slug,
)
from bench.report.facts import Facts, Side, known
from bench.report.frames import RunData, is_langchain, order_engines
from bench.report.rules import (
    RATED,
    UNMEASURED_CLAIMS,
    Claim,
    Rating,
    debug_engine,
    latency_text,
    ms_ci,
    ratio_ci,
    stars_text,
)
from bench.report.verdicts import interval_text
from bench.results import fmt, metrics, stats

P = Paragraph.of
ChartSlot = Figure | Note


WAITS_NOTE = (
    "waits / run: time a run slept by its own choice (retry backoff, Retry-After) outside tool "
    "bodies, never framework overhead; – : unknown (runs recorded before waited_ms, whose "
    "overhead still includes their waits)."
)


def _latency_text(ms: float) -> str:
    if not math.isfinite(ms):
        return "n/a"
    if ms <= 0:
        return "any"
    return fmt.ms(ms, seconds_from=1000)


def _slot(charts: Mapping[str, ChartSlot], key: str) -> list[Block]:
    slot = charts.get(key)
    return [slot] if slot is not None else []


# ---------------------------------------------------------------------------------------------


def _side_engine(side: Side | None, configuration: str) -> str | None:
    return getattr(side, configuration) if side is not None else None


def executive_summary(
    data: RunData, facts: Facts, matrix: Sequence[Rating], ledger: Sequence[Claim]
) -> Section:
    """The recommendation a tech lead can act on, the few numbers that decide it (with their
    intervals), what could not be measured, then the figures."""
    n_scen = len(set(data.runs["scenario"].dropna()))
    blocks: list[Block] = [
        P(
            f"{len(data.runs):,} timed runs of {n_scen} scenarios on {len(data.engines)} engines, "
            "all against the same scripted mock LLM. Like is compared with like: LangChain's "
            "docs default with our loop's plain configuration, each production configuration "
            "with the other, streaming with streaming."
        ),
        *_recommendation(facts),
    ]
    items = _headline_numbers(facts)
    counts = pd.Series([c.verdict for c in ledger]).value_counts()
    verdicts = ", ".join(
        f"{counts[v]} {v}"
        for v in ("supported", "partly", "refuted", "unsettled", "not measured")
        if v in counts
    )
    items.append(
        P(Strong("The article's claims. "), f"Of {len(ledger)} claims judged here: {verdicts}.")
    )
    blocks.append(Bullets(tuple(items)))
    blocks.extend(P(Strong("Pooled figures. "), note) for note in facts.notes)
    blocks.append(
        P(
            Strong("Not measured. "),
            "How fast a team builds and maintains either over months, the learning curve, "
            "documentation quality and prompt management: a benchmark cannot time people. "
            "All numbers are from one machine"
            + (
                f" (yardstick {fmt.ms(facts.yardstick_ms)}: a fixed pure-Python loop, which "
                "compares machines' tight-loop speed, not a framework's: another CPU can "
                "change a framework's times by a different factor, so compare ratios within "
                "a run and read another machine's absolute numbers as that machine's)"
                if facts.yardstick_ms
                else ""
            )
            + ".",
        )
    )
    return Section("Executive summary", "executive-summary", tuple(blocks))


def _recommendation(facts: Facts) -> list[Block]:
    lc, sb = facts.langchain, facts.self_built
    lc_prod, sb_prod = _side_engine(lc, "production"), _side_engine(sb, "production")
    lc_eng = lc_prod or _side_engine(lc, "default")
    step = facts.step_ms.get(lc_eng or "")
    if lc_eng is None or not known(step):
        return [P("Not enough data for a recommendation: no LangChain engine completed.")]
    l1 = breakeven_latency(step.point, 0.01)
    l10 = breakeven_latency(step.point, 0.10)
    cpu = facts.cpu_run_ms.get(lc_eng)
    sb_cpu = facts.cpu_run_ms.get(sb_prod or "")
    lines: list[str] = []
    text = (
        f"If each LLM call takes more than {latency_text(l1)} (hosted models: 0.3–3 s), "
        f"LangChain's framework time ({lc_eng}: {ms_ci(step)} per LLM step) is under 1 % of a "
        "step: choose on features, team and ecosystem, not speed."
    )
    lines.append(text)
    loaded = _load_cores(facts, lc_eng, sb_prod)
    if loaded is not None:
        lines.append(
            f"It costs CPU, though: {loaded} under production-shaped load (the load phase, "
            f"one process); with a fast local model (calls under {latency_text(l10)}) the "
            "framework is more than 10 % of each step."
        )
    elif known(cpu):
        cores = cpu.point * 100 / 1000
        text = (
            f"It costs CPU, though: about {cores:.2f} cores per 100 runs/s of {lc_eng}"
            + (f" against {sb_cpu.point * 100 / 1000:.2f} for {sb_prod}" if known(sb_cpu) else "")
            + f" (zero-latency mock); with a fast local model (calls under {latency_text(l10)}) "
            "the framework is more than 10 % of each step."
        )
        lines.append(text)
    n = facts.fault_scenarios
    builtins = lc.builtins if lc else None
    if n and lc_prod and sb_prod and known(facts.fault_handled.get(lc_prod)):
        ours = (
            round(facts.fault_handled[sb_prod].point * n)
            if sb_prod in facts.fault_handled
            else None
        )
        theirs = round(facts.fault_handled[lc_prod].point * n)
        custom = facts.configuration_statements(lc_prod).get("custom", 0)
        text = f"Production guards: {lc_prod} handles {theirs}/{n} fault scenarios"
        if builtins and known(facts.fault_handled.get(builtins)):
            text += (
                f" ({round(facts.fault_handled[builtins].point * n)}/{n} with LangChain's "
                "built-in middleware alone"
            )
            text += (
                f", the rest with {custom:,.0f} statements of custom middleware)" if custom else ")"
            )
        if ours is not None:
            text += f"; our scheduler {ours}/{n}, built in."
        lines.append(text)
    return [P(Strong("Recommendation. "), " ".join(lines))]


def _load_cores(facts: Facts, lc: str, ours: str | None) -> str | None:
    """Cores per 100 runs/s of both engines from the load phase (``Facts.loaded_cores``),
    or None."""
    if not ours:
        return None
    found = facts.loaded_cores([lc, ours])
    if found is None:
        return None
    rate, cores = found
    first, second = (
        f"{interval_text(cores[e], lambda v: f'{v:.2f}', _cores_range)} for {e}" for e in (lc, ours)
    )
    return (
        f"about {first.replace(' for ', ' cores per 100 runs/s for ', 1)} against {second} "
        f"(CPU per run of both measured at {rate:g} runs/s, the highest rate both sustained)"
    )


def _cores_range(low: float, high: float) -> str:
    return f"{low:.2f}–{high:.2f}"


def _pooled_ratio_text(facts: Facts, a: str, b: str) -> str:
    """a ÷ b over the step pool: paired within rounds, with its per-scenario spread and the
    scenarios it pools (the plain ratio of the two estimates when the pool lacks one)."""
    pool = facts.step_pool
    if pool is None or a not in pool.figures or b not in pool.figures:
        return ratio_ci(facts.step_ratio(a, b))
    r = pool.ratio(a, b)
    spread = r.spread
    text = f"{ratio_ci(r.estimate)}"
    if math.isfinite(spread.low) and spread.lowest and spread.highest:
        text += (
            f" (per scenario {fmt.ratio(spread.low)} on {spread.lowest} to "
            f"{fmt.ratio(spread.high)} on {spread.highest}; all {len(r.scenarios)} happy paths)"
        )
    return text


SDK_ENGINE = "openai-sdk"  # the hand-written loop on the openai SDK that LangChain also uses


def _sdk_share(facts: Facts, engine: str) -> str:
    """LangChain's ratio to the openai SDK loop: how much of its cost is LangChain's own
    (both send through the openai SDK); empty when either has no pooled figure."""
    pool = facts.step_pool
    if not is_langchain(engine) or pool is None:
        return ""
    if engine not in pool.figures or SDK_ENGINE not in pool.figures:
        return ""
    r = pool.ratio(engine, SDK_ENGINE)
    return (
        f" Against the plain loop on the openai SDK that LangChain itself sends through "
        f"({SDK_ENGINE}): {ratio_ci(r.estimate)}, the part of the cost that is LangChain's own."
    )


def _ttft_basis(facts: Facts) -> str:
    """What the added TTFT is measured over (the bare loop when it ran)."""
    floor = facts.ttft_floor_ms
    if floor is None:
        return "over what the mock scripted"
    return (
        f"over the bare loop, which itself adds {fmt.ms(floor.point)} to what the mock "
        "scripted: the harness's share, carried by every engine"
    )


def _headline_numbers(facts: Facts) -> list[Paragraph]:
    items: list[Paragraph] = []
    lc, sb = facts.langchain, facts.self_built
    for configuration in ("default", "production"):
        a, b = _side_engine(lc, configuration), _side_engine(sb, configuration)
        if a and b and known(facts.step_ms.get(a)) and known(facts.step_ms.get(b)):
            items.append(
                P(
                    Strong(f"Speed, {configuration} configurations. "),
                    f"{a} {ms_ci(facts.step_ms[a])} per LLM step, {b} {ms_ci(facts.step_ms[b])}: "
                    f"{_pooled_ratio_text(facts, a, b)}.{_sdk_share(facts, a)}",
                )
            )
    spread = facts.step_spread.get(_side_engine(lc, "default") or "")
    if spread is not None and math.isfinite(spread.low):
        items.append(
            P(
                Strong("It depends on the scenario. "),
                f"{_side_engine(lc, 'default')}'s overhead per step ranges from "
                f"{fmt.ms(spread.low)} ({spread.lowest}) to {fmt.ms(spread.high)} "
                f"({spread.highest}): it grows with context size and answer length.",
            )
        )
    tool_calling = {
        e: v.point
        for e, v in facts.token_overhead.items()
        if is_langchain(e) and REGISTRY.get(e) is not None and REGISTRY[e].protocol == "tools"
    }
    react = facts.token_overhead.get("lc-react")
    if tool_calling:
        text = (
            "Tool-calling LangChain agents send the raw loop's tokens "
            f"({', '.join(f'{e} {fmt.signed(v, fmt.count)}' for e, v in tool_calling.items())} "
            "per request)"
        )
        if known(react):
            text += f"; only text ReAct adds {fmt.signed(react.point, fmt.count)} per request"
        items.append(P(Strong("Tokens. "), text + "."))
    for configuration in ("default", "production"):
        a, b = _side_engine(lc, configuration), _side_engine(sb, configuration)
        if a and b and known(facts.ttft_added_ms.get(a)) and known(facts.ttft_added_ms.get(b)):
            items.append(
                P(
                    Strong(f"Streaming, {configuration}. "),
                    f"to the first token of the answer {a} adds {ms_ci(facts.ttft_added_ms[a])}, "
                    f"{b} {ms_ci(facts.ttft_added_ms[b])} ({_ttft_basis(facts)}).",
                )
            )
    lc_dbg, sb_dbg = debug_engine(facts, lc), debug_engine(facts, sb)
    if lc_dbg and sb_dbg:
        items.append(
            P(
                Strong("Debugging. "),
                f"the most useful debug output of {lc_dbg} ({facts.debug_mode.get(lc_dbg)}) "
                f"holds {fmt.pct(facts.debug_recall[lc_dbg], decimals=0)} of a run's key facts, "
                f"{sb_dbg}'s ({facts.debug_mode.get(sb_dbg)}) "
                f"{fmt.pct(facts.debug_recall[sb_dbg], decimals=0)}.",
            )
        )
    lc_def = _side_engine(lc, "default")
    if lc_def and known(facts.modules.get(lc_def)):
        text = f"importing {lc_def} loads {facts.modules[lc_def].point:,.0f} modules"
        if known(facts.import_ms.get(lc_def)):
            text += f" in {fmt.ms(facts.import_ms[lc_def].point)}"
        sb_prod = _side_engine(sb, "production")
        if sb_prod and known(facts.modules.get(sb_prod)):
            text += f"; {sb_prod} {facts.modules[sb_prod].point:,.0f}"
        items.append(P(Strong("Footprint. "), text + "."))
    return items


def decision_matrix(matrix: Sequence[Rating]) -> Section:
    labels = list(dict.fromkeys(label for r in matrix for label, _ in r.stars))
    rows: list[tuple[str | Cell, ...]] = []
    for r in matrix:
        measured = bool(r.stars)
        css = "stars" if measured else "not-measured"
        rows.append(
            (
                r.dimension,
                f"{r.article[0]} / {r.article[1]}",
                *(Cell(stars_text(r.of(label)), css) for label in labels),
                r.basis,
                r.rule,
            )
        )
    table = Table(
        (
            "dimension",
            "article (LangChain / self-built)",
            *(f"{label}, measured" for label in labels),
            "measured numbers",
            "rule",
        ),
        tuple(rows),
        caption="Stars from our numbers by the rule in the last column; 'not measured' where "
        "this benchmark has no data. The article's stars are its own (docs/article.md).",
        css="decision-matrix",
    )
    return Section(
        "Decision matrix",
        "decision-matrix",
        (
            P(
                "The article's matrix, re-rated from the same facts as the claims ledger. Each "
                f"side is rated on {RATED} (LangChain's create_agent with its middleware, our "
                "scheduler with its guards). Dimensions that depend on people and time are not "
                "measured here and say so."
            ),
            table,
        ),
    )


def frameworks_matrix(facts: Facts, matrix: Sequence[Rating]) -> Section | None:
    """Every side of the run on the dimensions whose rules rate any number of sides
    (``rules.frameworks_matrix``): ours, LangChain and each peer framework."""
    if not matrix:
        return None
    sides = list(facts.sides)
    header = []
    for side in sides:
        engine = side.production or side.default
        spec = REGISTRY.get(engine or "")
        streams = " (streams)" if spec is not None and spec.streams else ""
        header.append(f"{side.label}: {engine}{streams}")
    rows: list[tuple[str | Cell, ...]] = [
        (
            r.dimension,
            *(Cell(stars_text(r.of(side.label)), "stars") for side in sides),
            r.basis,
        )
        for r in matrix
    ]
    table = Table(
        ("dimension", *header, "measured numbers"),
        tuple(rows),
        caption="Each side on its production configuration (its default where it has none), "
        "by the decision matrix's rules; debuggability's noise penalty compares a side with "
        "the least noisy of the others. '(streams)': that engine streams its replies, which "
        "costs CPU per step; the like-for-like pairs are in the performance tables. "
        "Performance takes its cores from the zero-latency suite for every side (a lower "
        "bound: the load phase measures only the headline pair), so a star here can differ "
        "from the decision matrix's.",
        css="frameworks-matrix",
    )
    return Section(
        "Every framework on the same rules",
        "frameworks-matrix",
        (
            P(
                f"The {len(sides)} sides of this run — ours, LangChain and each peer framework — "
                "on the matrix dimensions whose rules rate any number of sides alike. "
                "Development speed and flexibility are pairwise (LangChain's programs and "
                "catalogue cells against ours) and stay in the decision matrix."
            ),
            table,
        ),
    )


def claims_ledger(ledger: Sequence[Claim]) -> Section:
    rows = tuple(
        (
            str(i),
            c.claim,
            c.measured,
            Cell(c.verdict, f"verdict-{slug(c.verdict)}"),
            c.rule,
        )
        for i, c in enumerate(ledger, 1)
    )
    table = Table(
        (
            "#",
            "the article says",
            "measured (each part: [verdict] numbers [95 % interval])",
            "verdict",
            "rule",
        ),
        rows,
        caption="Each part is decided on the point estimates and on 1,000 bootstrap resamples; "
        "'unsettled' when fewer than 95 % of the resamples agree. A CPU-bound part says on how "
        "much slower (or faster) a CPU it would read otherwise.",
        css="claims-ledger",
    )
    return Section(
        "Claims ledger",
        "claims-ledger",
        (
            P("Each measurable claim of the article, the numbers we measured, and the verdict."),
            table,
            P("Claims this benchmark does not (yet) measure:"),
            Bullets(tuple(P(t) for t in UNMEASURED_CLAIMS)),
        ),
    )


def when_to_choose(data: RunData, facts: Facts, charts: Mapping[str, ChartSlot]) -> Section:
    if not facts.step_ms:
        return Section(
            "When to choose which",
            "when-to-choose-which",
            (Note("No completed happy-path runs: nothing to derive."),),
        )
    rows = []
    for engine in order_engines(facts.step_ms):
        step = facts.step_ms[engine]
        cpu = facts.cpu_run_ms.get(engine)
        rows.append(
            (
                engine,
                _role(engine),
                ms_ci(step),
                *(
                    _latency_text(analysis.breakeven_latency(step.point, s))
                    for s in reversed(SHARE_THRESHOLDS)
                ),
                fmt.ms(cpu.point) if known(cpu) else "–",
                fmt.num(cpu.point * 100 / 1000, "{:.2f}") if known(cpu) else "–",
                fmt.count(facts.peak_rps[engine].point) if engine in facts.peak_rps else "–",
            )
        )
    table = Table(
        (
            "engine",
            "role",
            "overhead / LLM step [95 %]",
            "LLM latency for < 10 %",
            "< 5 %",
            "< 1 %",
            f"CPU per run ({reference_scenario()})",
            "cores per 100 runs/s",
            "measured peak runs/s (1 process)",
        ),
        tuple(rows),
        caption="Overhead per step: geometric mean over every happy-path scenario of each "
        "scenario's median, t-interval over rounds. Overhead share = o ÷ (o + L); the "
        "latency columns solve for L. Cores per 100 runs/s = CPU ms per run × 100 ÷ 1000.",
        numeric=(2, 3, 4, 5, 6, 7, 8),
    )
    blocks: list[Block] = [
        P(
            "The framework's cost is fixed per step; the LLM's is not. The slower your model, "
            "the less the framework matters — these are the latencies and loads where it stops "
            "(or starts) mattering."
        ),
        table,
        Bullets(tuple(_choose_bullets(facts))),
        *_slot(charts, "overhead_share"),
    ]
    return Section("When to choose which", "when-to-choose-which", tuple(blocks))


def _role(engine: str) -> str:
    spec = REGISTRY.get(engine)
    if spec is None:
        return "–"
    return spec.role_label + (", streams" if spec.streams else "")


def _choose_bullets(facts: Facts) -> list[Paragraph]:
    lc, sb = facts.langchain, facts.self_built
    out: list[Paragraph] = []
    for configuration in ("default", "production"):
        a = _side_engine(lc, configuration)
        if a is None or not known(facts.step_ms.get(a)):
            continue
        step = facts.step_ms[a].point
        l1, l10 = (analysis.breakeven_latency(step, s) for s in (0.01, 0.10))
        out.append(
            P(
                Strong(f"Latency ({configuration}). "),
                f"{a}'s overhead is under 1 % of a step when each LLM call takes more than "
                f"{_latency_text(l1)}, under 10 % above {_latency_text(l10)}.",
            )
        )
    react = facts.token_overhead.get("lc-react")
    if known(react) and react.point >= 50:
        out.append(
            P(
                Strong("Tokens. "),
                f"Text ReAct prompts cost {fmt.signed(react.point, fmt.count)} tokens per request; "
                "tool-calling agents do not. Prefer tool calling, whichever loop you use.",
            )
        )
    n = facts.fault_scenarios
    lc_prod, sb_prod = _side_engine(lc, "production"), _side_engine(sb, "production")
    if (
        n
        and lc_prod
        and sb_prod
        and lc_prod in facts.fault_handled
        and sb_prod in facts.fault_handled
    ):
        theirs = round(facts.fault_handled[lc_prod].point * n)
        ours = round(facts.fault_handled[sb_prod].point * n)
        custom = facts.configuration_statements(lc_prod).get("custom", 0)
        if theirs >= ours:
            text = (
                f"Configured for production, {lc_prod} handles the fault scenarios as well as "
                f"{sb_prod} ({theirs}/{n} vs {ours}/{n})"
            )
        else:
            text = f"{sb_prod} handles {ours}/{n} fault scenarios, {lc_prod} {theirs}/{n}"
        if custom:
            text += f"; LangChain's needs {custom:,.0f} statements of custom middleware"
        out.append(P(Strong("Fault handling. "), text + " (see the fault matrix)."))
    return out


def performance(data: RunData, charts: Mapping[str, ChartSlot]) -> Section:
    steps = analysis.step_overhead(data)
    blocks: list[Block] = [*_slot(charts, "overhead_per_step")]
    if not steps.empty:
        blocks.append(
            Table(
                (
                    "engine",
                    "runs",
                    "overhead / step (median)",
                    "p25",
                    "p75",
                    "p95",
                    "CPU / step",
                    "waits / run",
                ),
                tuple(
                    (
                        r["engine"],
                        str(r["runs"]),
                        fmt.ms(r["median_ms"]),
                        fmt.ms(r["p25_ms"]),
                        fmt.ms(r["p75_ms"]),
                        fmt.ms(r["p95_ms"]),
                        fmt.ms(r["cpu_median_ms"]),
                        fmt.ms(r["waited_median_ms"]),
                    )
                    for _, r in steps.iterrows()
                ),
                caption="Completed runs of the happy-path scenarios; overhead = run time − mock "
                "latency − tool time − waits by choice − the in-process mock's own time, divided "
                "by LLM calls. " + WAITS_NOTE,
                numeric=(1, 2, 3, 4, 5, 6, 7),
            )
        )
    for engine, why in analysis.no_completed_run(data).items():
        blocks.append(
            P(Strong("No completed run: "), Code(engine), f" ({why or 'no reason recorded'}).")
        )
    blocks.extend(_slot(charts, "latency"))
    blocks.extend(_slot(charts, "throughput"))
    if data.throughput is not None:
        blocks.extend(_throughput_tables(data.throughput))
    blocks.extend(_slot(charts, "ttft"))
    return Section("Performance", "performance", tuple(blocks))


def where_time_goes(data: RunData, charts: Mapping[str, ChartSlot]) -> Section:
    """The profiling probe: calls per step, stack depths, and time by package."""
    from bench.report.probe import distortion_table, profile_table

    title, anchor = "Where the time goes", "where-the-time-goes"
    if not data.profile:
        return Section(title, anchor, (Note("No profiling probe in this run (schedbench probe)."),))
    rows = list(data.profile)
    blocks: list[Block] = [
        P(
            "A separate probe run (never the timed suite): Python function calls per LLM step, "
            "the frames between the caller's call and the HTTP send or the tool body, and a "
            "sampling profile of each engine's time grouped by package. It answers where "
            "LangChain's milliseconds go, and whether callbacks and runnable plumbing are "
            "where they go (claim 2)."
        ),
        *_slot(charts, "package_breakdown"),
        profile_table(rows),
        distortion_table(rows),
    ]
    return Section(title, anchor, tuple(blocks))


def _throughput_tables(tp: pd.DataFrame) -> list[Block]:
    """One table per latency profile: engines down, concurrency levels across."""
    out: list[Block] = []
    profiles = [p for p in ("zero", "realistic") if p in set(tp["latency_profile"])]
    profiles += sorted(set(tp["latency_profile"].dropna()) - set(profiles))
    for profile in profiles:
        g = tp[tp["latency_profile"] == profile]
        levels = sorted(g["concurrency"].dropna().unique())
        rows = []
        for engine in order_engines(g["engine"]):
            e = g[g["engine"] == engine].set_index("concurrency")
            errors, runs = e["errors"].fillna(0).sum(), e["runs"].fillna(0).sum()
            row: list[str] = [engine, f"{int(errors)}/{int(runs)}" if runs else "–"]
            for c in levels:
                if c in e.index:
                    r = e.loc[c]
                    row += [fmt.num(r["runs_per_s"]), fmt.ms(r["p95_ms"])]
                else:
                    row += ["–", "–"]
            rows.append(tuple(row))
        columns = ["engine", "errors"]
        for c in levels:
            columns += [f"runs/s @{c:g}", f"p95 @{c:g}"]
        out.append(
            Table(
                tuple(columns),
                tuple(rows),
                caption=f"Throughput sweep, latency profile '{profile}': one engine process, "
                "@N = N runs in flight; runs/s counts completed runs only; errors = runs that "
                "did not complete over all levels.",
                numeric=tuple(range(1, len(columns))),
            )
        )
    return out


def tokens(data: RunData, charts: Mapping[str, ChartSlot]) -> Section:
    tok = analysis.token_stats(data)
    blocks: list[Block] = [*_slot(charts, "tokens")]
    if not tok.empty:
        blocks.append(
            Table(
                (
                    "engine",
                    "prompt tokens / request",
                    "overhead / request vs raw",
                    "scenarios compared",
                ),
                tuple(
                    (
                        r["engine"],
                        fmt.count(r["tokens_per_request"]),
                        fmt.signed(r["overhead_per_request"], fmt.count),
                        fmt.count(r.get("scenarios")),
                    )
                    for _, r in tok.iterrows()
                ),
                caption="Tokens counted with tiktoken cl100k_base on the request bodies the mock "
                "received.",
                numeric=(1, 2, 3),
            )
        )
    return Section("Tokens", "tokens", tuple(blocks))


def _ownership_text(code_size: pd.DataFrame) -> str:
    """The code a team maintains with each choice, from the ownership rows of meta.json
    (``bench.engines.codesize``): the self-built loop's whole package and its tests, each
    framework production engine's custom code."""
    from bench.engines.codesize import OWNERSHIP_PREFIX

    rows = code_size[code_size["component"].astype(str).str.startswith(OWNERSHIP_PREFIX)]
    if rows.empty:
        return ""
    parts = []
    for component, g in rows.groupby("component", sort=False):
        who = str(component).removeprefix(OWNERSHIP_PREFIX)
        pieces = ", ".join(
            f"{fmt.count(r['logical_lines'])} logical lines of {r['part']} ({r['path']})"
            for _, r in g.iterrows()
        )
        parts.append(f"{who}: {pieces}")
    return (
        "The self-built loop is all production code its team maintains; a framework's "
        "production configuration is the framework plus its custom code. " + "; ".join(parts) + "."
    )


def footprint(data: RunData, facts: Facts, charts: Mapping[str, ChartSlot]) -> Section:
    blocks: list[Block] = [*_slot(charts, "footprint")]
    fp = data.footprint
    if fp is not None:
        fp = fp.set_index("engine").loc[order_engines(fp["engine"])].reset_index()
        blocks.append(
            Table(
                ("engine", "import time", "modules", "RSS (MB)"),
                tuple(
                    (
                        r["engine"],
                        fmt.ms(r["import_ms"]),
                        fmt.count(r["modules"]),
                        fmt.count(r["rss_mb"]),
                    )
                    for _, r in fp.iterrows()
                ),
                numeric=(1, 2, 3),
            )
        )
    if data.code_size is not None:
        owned = _ownership_text(data.code_size)
        if owned:
            blocks.append(P(Strong("What each choice makes you own. "), owned))
        blocks.append(
            Table(
                ("code", "part", "path", "files", "statements", "logical lines"),
                tuple(
                    (
                        str(r["component"]),
                        str(r["part"]),
                        str(r["path"]),
                        fmt.count(r["files"]),
                        fmt.count(r["statements"]),
                        fmt.count(r["logical_lines"]),
                    )
                    for _, r in data.code_size.iterrows()
                ),
                caption="Counted when the run was made (meta.json), formatting-invariant: syntax-"
                "tree statements and logical lines, docstrings and comments excluded.",
                numeric=(3, 4, 5),
            )
        )
    return Section("Footprint and code size", "footprint-and-code-size", tuple(blocks))


def debuggability(data: RunData, charts: Mapping[str, ChartSlot]) -> Section:
    blocks: list[Block] = [*_slot(charts, "debuggability")]
    dbg = data.debuggability
    if dbg is not None:
        agg = analysis.debug_modes(data)
        order = {e: i for i, e in enumerate(order_engines(agg["engine"]))}
        agg = agg.sort_values(
            ["engine", "mode"], key=lambda s: s.map(order) if s.name == "engine" else s
        )
        blocks.append(
            Table(
                (
                    "engine",
                    "mode",
                    "scenarios",
                    "recall",
                    "bytes",
                    "bytes / fact",
                    "failing call located",
                    "cost of the mode",
                ),
                tuple(
                    (
                        r["engine"],
                        str(r["mode"]),
                        fmt.count(r["scenarios"]),
                        fmt.num(r["recall"], "{:.2f}"),
                        fmt.count(r["bytes"]),
                        fmt.count(r["bytes_per_fact"]),
                        fmt.pct(r["localised"], decimals=0),
                        fmt.ms(r["mode_cost_ms"]),
                    )
                    for _, r in agg.iterrows()
                ),
                caption="Recall: mean over scenarios; failing call located: share of the fault "
                "scenarios with a failure whose failing call a reader can identify from the "
                "output (the tool or LLM call, its error and its position, matched by content "
                "whatever the format: docs/debuggability.md); bytes: median.",
                numeric=(2, 3, 4, 5, 6, 7),
            )
        )
    subsections = _debug_excerpts(data) if dbg is not None else ()
    return Section("Debuggability", "debuggability", tuple(blocks), subsections)


def _debug_excerpts(data: RunData) -> tuple[Section, ...]:
    """Each engine's most useful mode on one fault scenario, as printed, next to its score."""
    dbg = data.debuggability
    if dbg is None or "excerpt" not in dbg:
        return ()
    faulty = dbg[dbg["failure_call"].notna()] if "failure_call" in dbg else dbg.iloc[0:0]
    if faulty.empty:
        return ()
    scenarios = list(dict.fromkeys(faulty["scenario"]))
    scenario = "tool_flaky" if "tool_flaky" in scenarios else scenarios[0]
    best = analysis.debug_best(data).set_index("engine")["mode"].to_dict()
    blocks: list[Block] = [
        P(
            f"What a reader sees in each engine's most useful debug mode on {scenario}: about "
            "ten lines around the statement that decided the score, and where the whole "
            "output is in the run folder."
        )
    ]
    for engine in order_engines(faulty["engine"]):
        rows = faulty[
            (faulty["engine"] == engine)
            & (faulty["scenario"] == scenario)
            & (faulty["mode"] == best.get(engine))
        ]
        if rows.empty:
            continue
        r = rows.iloc[0]
        located = "located" if _truthy_cell(r.get("localised")) else "not located"
        how = r.get("loc_how")
        caption = (
            f"{engine}, {r['mode']}: recall {fmt.num(r['recall'], '{:.2f}')}, failing call "
            f"{located}" + (f" ({how})" if isinstance(how, str) and how else "")
        )
        path = r.get("output_path")
        if isinstance(path, str) and path:
            caption += f"; full output: {path}"
        text = r.get("excerpt")
        blocks.append(Excerpt(text if isinstance(text, str) else "(no output)", caption))
    return (
        Section(
            "What the debug outputs look like",
            "debug-excerpts",
            tuple(blocks),
            collapsed=True,
        ),
    )


def _truthy_cell(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes")
    return bool(value) and not (isinstance(value, float) and math.isnan(value))


def faults(data: RunData, charts: Mapping[str, ChartSlot]) -> Section:
    blocks: list[Block] = [*_slot(charts, "fault_matrix")]
    fm = analysis.fault_matrix(data)
    if not fm.empty:
        engines = order_engines(fm["engine"])
        scen = sorted(fm["scenario"].unique())
        cells = fm.set_index(["engine", "scenario"])
        rows = []
        for s in scen:
            row: list[str | Cell] = [s]
            for e in engines:
                if (e, s) in cells.index:
                    c = cells.loc[(e, s)]
                    mark = "✓" if c["as_expected"] else "✗"
                    term = f" ({c['termination']})" if c["termination"] else ""
                    row.append(f"{mark} {c['outcome']}{term}")
                else:
                    row.append("not run")
            rows.append(tuple(row))
        blocks.append(
            Table(
                ("fault scenario", *engines),
                tuple(rows),
                caption="✓: ends the way the scenario's base expectation says a production agent "
                "should; the termination reason in brackets.",
                css="fault-matrix",
            )
        )
        misses = fm[~fm["as_expected"]]
        if len(misses):
            blocks.append(
                Table(
                    ("engine", "fault scenario", "outcome", "why it is not what production needs"),
                    tuple(
                        (r["engine"], r["scenario"], r["outcome"], r["why"])
                        for _, r in misses.iterrows()
                    ),
                    caption="Every ✗ of the matrix, with the difference from the scenario's base "
                    "expectation.",
                )
            )
        sc = data.scenarios.set_index("scenario")
        blocks.append(
            Bullets(
                tuple(
                    P(
                        Code(s),
                        f" — expected: {sc.loc[s, 'expect_status']}. {sc.loc[s, 'description'] or ''}",
                    )
                    for s in scen
                )
            )
        )
    return Section("Faults", "faults", tuple(blocks))


class Column(NamedTuple):
    """A column of a table of cells: its header and its text for one cell's row."""

    header: str
    cell: Callable[[pd.Series], str]
    numeric: bool = True  # right-aligned


# The per-scenario tables' measured columns: one line per column, reading the cell's row of
# ``analysis.scenario_stats`` (a median per run of a metric listed in
# ``bench.results.metrics.MEDIAN_METRICS`` is there under its own name).
SCENARIO_TABLE = (
    Column("median", lambda r: fmt.ms(r["median_ms"])),
    Column("95 % CI", lambda r: fmt.ms_range(r["ci_low_ms"], r["ci_high_ms"], digits=4)),
    Column("IQR", lambda r: fmt.ms_range(r["p25_ms"], r["p75_ms"]), numeric=False),
    Column("p95", lambda r: fmt.ms(r["p95_ms"])),
    Column("overhead / step", lambda r: fmt.ms(r["overhead_step_ms"])),
    Column("waits / run", lambda r: fmt.ms(r["waited_ms"])),
    Column("CPU", lambda r: fmt.ms(r["cpu_ms"])),
    Column("LLM calls", lambda r: fmt.num(r["llm_calls"], "{:g}")),
    Column("tool calls", lambda r: fmt.num(r["tool_calls"], "{:g}")),
    Column("prompt tokens / run", lambda r: fmt.count(r["prompt_tokens"])),
    Column("tokens / req", lambda r: fmt.count(r["tokens_per_request"])),
    Column("Δ tokens vs raw", lambda r: fmt.signed(r["token_overhead"], fmt.count)),
    Column("TTFT", lambda r: fmt.ms(r["ttft_ms"])),
)


def per_scenario(data: RunData) -> Section:
    cells_table = analysis.scenario_stats(data)
    if cells_table.empty:
        return Section("Per-scenario results", "per-scenario-results", (Note("No runs."),))
    sc = data.scenarios.set_index("scenario")
    answers = _sample_answers(data)
    reasons = analysis.failure_reasons(data)
    missed = _missed_cells(data)
    subs = []
    for scenario in sorted(cells_table["scenario"].unique()):
        g = cells_table[cells_table["scenario"] == scenario]
        blocks: list[Block] = []
        if scenario in sc.index:
            row = sc.loc[scenario]
            tags = ", ".join(row["tags"]) if isinstance(row["tags"], (tuple, list)) else ""
            if row["description"]:
                blocks.append(P(str(row["description"])))
            blocks.append(
                P(
                    f"tags: {tags or '–'}; expected status: {row['expect_status']}"
                    + (" (fault scenario)" if row["fault"] else "")
                )
            )
        rows = [
            (
                r["engine"],
                r["status"],
                *(column.cell(r) for column in SCENARIO_TABLE),
                _short(answers.get((r["engine"], scenario), "")),
            )
            for _, r in g.iterrows()
        ]
        blocks.append(
            Table(
                (
                    "engine",
                    "outcomes",
                    *(c.header for c in SCENARIO_TABLE),
                    "final answer (first run)",
                ),
                tuple(rows),
                caption="Medians per run. An engine that retries inside its tool node saves LLM "
                "calls and prompt tokens (compare the columns); its backoff is in waits / run, "
                "not in the overhead. " + WAITS_NOTE,
                numeric=tuple(i for i, c in enumerate(SCENARIO_TABLE, start=2) if c.numeric),
            )
        )
        blocks.extend(_missed_notes(missed, reasons, scenario))
        subs.append(Section(scenario, f"scenario-{slug(scenario)}", tuple(blocks), collapsed=True))
    overview = _scenario_overview(data, cells_table)
    return Section(
        "Per-scenario results",
        "per-scenario-results",
        (
            P(
                "Wall time per run: median with a bootstrap 95 % confidence interval, IQR and "
                "p95. The overview gives the median per engine (✗: the engine's runs did not all "
                "meet the scenario's expectations for that engine); the HTML report folds each "
                "scenario's full table under its name."
            ),
            overview,
            *_missed_notes(missed, reasons),
        ),
        tuple(subs),
    )


def _missed_cells(data: RunData) -> list[tuple[str, str]]:
    """The (engine, scenario) cells marked ✗: not every run met its expectations."""
    ok = data.runs.groupby(["engine", "scenario"], sort=False)["expect_ok"].agg(
        lambda s: bool(s.dropna().astype(bool).all()) if s.notna().any() else True
    )
    order = {e: i for i, e in enumerate(order_engines(data.runs["engine"].dropna().unique()))}
    return sorted(
        ((str(e), str(s)) for (e, s), fine in ok.items() if not fine),
        key=lambda k: (k[1], order.get(k[0], len(order))),
    )


def _missed_notes(
    missed: Sequence[tuple[str, str]], reasons: Mapping[tuple[str, str], str], scenario: str = ""
) -> list[Block]:
    """One footnote per ✗ (of ``scenario``, or of every scenario): ``metrics.missed_line``."""
    lines = [
        P(metrics.missed_line(e, s, reasons.get((e, s))))
        for e, s in missed
        if not scenario or s == scenario
    ]
    return [Bullets(tuple(lines))] if lines else []


def _scenario_overview(data: RunData, cells_table: pd.DataFrame) -> Table:
    engines = order_engines(cells_table["engine"])
    faults = set(data.fault_scenarios)
    missed = set(_missed_cells(data))
    cells = cells_table.set_index(["engine", "scenario"])
    rows = []
    for scenario in sorted(cells_table["scenario"].unique(), key=lambda s: (s in faults, s)):
        row: list[str] = [scenario + (" (fault)" if scenario in faults else "")]
        for engine in engines:
            if (engine, scenario) not in cells.index:
                row.append("–")
                continue
            mark = " ✗" if (engine, scenario) in missed else ""
            row.append(fmt.ms(cells.loc[(engine, scenario), "median_ms"]) + mark)
        rows.append(tuple(row))
    return Table(
        ("scenario", *engines),
        tuple(rows),
        caption="Median wall time per run.",
        numeric=tuple(range(1, len(engines) + 1)),
    )


def _sample_answers(data: RunData) -> dict[tuple[str, str], str]:
    out: dict[tuple[str, str], str] = {}
    for r in data.runs.itertuples():
        key = (str(r.engine), str(r.scenario))
        if key not in out:
            answer = r.final_answer if isinstance(r.final_answer, str) else ""
            if not answer and isinstance(r.error, str):
                answer = f"[error] {r.error}"
            out[key] = answer
    return out


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def environment(data: RunData) -> Section:
    meta = data.meta or {}
    if not meta:
        return Section(
            "Environment", "environment", (Note("meta.json missing: environment unknown."),)
        )
    flat: list[tuple[str, str]] = []
    packages: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            if prefix.split(".")[-1] in ("packages", "versions", "package_versions"):
                packages.update({str(k): str(v) for k, v in value.items()})
                return
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, list | tuple):
            text = (
                ", ".join(f"{v:.3g}" if isinstance(v, float) else str(v) for v in value)
                if all(not isinstance(v, Mapping | list) for v in value)
                else json.dumps(value, sort_keys=True, default=str)
            )
            flat.append((prefix, text))
        else:
            flat.append((prefix, str(value)))

    walk("", meta)
    values = dict(flat)
    headline = [
        ("CPU", values.get("machine.cpu_model")),
        ("logical CPUs", values.get("machine.cpu_logical")),
        ("memory (MB)", values.get("machine.memory_total_mb")),
        ("OS", values.get("machine.os")),
        ("load average at start", values.get("machine.load_average")),
        ("other processes during the run (cores)", values.get("machine.other_cores")),
        ("Python", values.get("python.version")),
        ("git", _git_text(values)),
        ("started", values.get("started_at")),
        ("measuring time (s)", values.get("duration_s")),
        ("rounds × transport", _join(values.get("config.rounds"), values.get("config.transport"))),
        ("latency profiles", values.get("config.latencies")),
        ("complete", values.get("complete")),
        *((name, packages.get(name)) for name in ("langchain", "langchain-core",
          "langchain-classic", "langchain-openai", "langgraph", "openai", "httpx")),
    ]  # fmt: skip
    blocks: list[Block] = [
        Table(
            ("", "value"),
            tuple((k, _short(str(v), 160)) for k, v in headline if v not in (None, "", "None")),
            css="environment",
        )
    ]
    subs = [
        Section(
            "Everything in meta.json",
            "environment-meta",
            (Table(("key", "value"), tuple((k, _short(v, 160)) for k, v in flat)),),
            collapsed=True,
        )
    ]
    if packages:
        key_pkgs = (
            "langchain",
            "langchain-core",
            "langchain-classic",
            "langchain-openai",
            "langgraph",
            "openai",
            "httpx",
            "httpx2",
            "tiktoken",
            "pydantic",
            "numpy",
            "pandas",
            "matplotlib",
        )
        wanted = [p for p in key_pkgs if p in packages]
        rest = sorted(p for p in packages if p not in wanted)
        subs.append(
            Section(
                "Packages",
                "environment-packages",
                (
                    Table(
                        ("package", "version"),
                        tuple((p, packages[p]) for p in wanted + rest),
                        caption=f"{len(packages)} packages installed when the run was made.",
                    ),
                ),
                collapsed=True,
            )
        )
    return Section("Environment", "environment", tuple(blocks), tuple(subs))


def _git_text(values: Mapping[str, str]) -> str | None:
    sha = values.get("git.sha")
    if not sha:
        return None
    return sha[:12] + (" (uncommitted changes)" if values.get("git.dirty") == "True" else "")


def _join(*parts: object) -> str | None:
    kept = [str(p) for p in parts if p not in (None, "", "None")]
    return " × ".join(kept) or None


def caveats(data: RunData, skipped: Sequence[tuple[str, str]]) -> Section:
    items = [
        "The LLM is a scripted mock. Real models vary their answers, their latency and their "
        "token counts; the mock isolates the framework's own cost, which is what is measured.",
        "Zero mock latency by default: overhead is measured alone. Shares of end-to-end time at "
        "real latencies are derived from it, not measured end to end.",
        "Timings come from one machine, possibly shared and noisy; engines run in their own "
        "worker processes and are interleaved in rounds so drift hits all alike, but absolute "
        "numbers will differ on other hardware. Ratios travel better than milliseconds.",
        "Not measured: maintainability, learning curve, documentation quality, version "
        "stability, real-network behaviour. Development speed and flexibility are measured as "
        "code (statements of programs and customisations that pass their tests), not as the "
        "time people take.",
        "Fault handling is judged against each scenario's base expectation (what a production "
        "agent should do); the LangChain agents run with the settings LangChain's docs use.",
    ]
    runs = data.runs
    cells = runs.groupby(["engine", "scenario"]).size()
    if len(cells) and cells.min() < 10:
        items.append(
            f"Few repeats: some engine × scenario cells have only {cells.min()} runs; "
            "percentiles beyond p95 are not meaningful there."
        )
    ok = runs[runs["status"] == "completed"]
    if len(ok):
        cv = [
            stats.coefficient_of_variation(g["wall_ms"])
            for _, g in ok.groupby(["engine", "scenario"])
        ]
        noisy = [v for v in cv if v > 0.5]
        if noisy:
            items.append(
                f"Noisy cells: {len(noisy)} engine × scenario cells have a coefficient of "
                "variation above 50 % — prefer medians and the confidence intervals."
            )
    with_ttft = sorted(set(runs.loc[runs["ttft_ms"].notna(), "engine"]))
    if with_ttft:
        without = [e for e in order_engines(runs["engine"]) if e not in with_ttft]
        items.append(
            "Time to first token is reported by "
            + ", ".join(order_engines(with_ttft))
            + (f" only; not by {', '.join(without)}." if without else ".")
        )
    for key, reason in skipped:
        items.append(f"Chart '{key}' skipped: {reason}.")
    items.extend(data.notes)
    return Section("Caveats", "caveats", (Bullets(tuple(P(t) for t in items)),))


def comparison(blocks: Sequence[Block], baseline_label: str) -> Section:
    return Section(f"Comparison with {baseline_label}", "comparison", tuple(blocks))
