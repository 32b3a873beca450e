"""The report's sections, built from a run's data, its facts and its rendered charts.

Each function returns a ``Section`` of plain-text blocks (see ``bench.report.document``);
nothing here formats HTML or Markdown. Every sentence that states a number reads it from
the data, and every judgement comes from ``bench.report.rules``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from bench.report import analysis
from bench.report.analysis import REFERENCE_LLM_LATENCY_MS, SHARE_THRESHOLDS, Facts
from bench.report.document import (
    Block,
    Bullets,
    Cell,
    Code,
    Figure,
    Note,
    Paragraph,
    Section,
    Strong,
    Table,
    slug,
)
from bench.report.model import RAW, RunData, is_langchain, order_engines
from bench.report.rules import UNMEASURED_CLAIMS, Claim, Rating, stars_text
from bench.results import fmt, stats

P = Paragraph.of
ChartSlot = Figure | Note


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


def executive_summary(
    data: RunData, facts: Facts, matrix: Sequence[Rating], ledger: Sequence[Claim]
) -> Section:
    lc, sb = facts.langchain, facts.self_built
    n_scen = len(set(data.runs["scenario"].dropna()))
    n_runs = len(data.runs)
    blocks: list[Block] = [
        P(
            f"{n_runs:,} timed runs of {n_scen} scenarios on {len(data.engines)} engines "
            f"({', '.join(data.engines)}), all against the same scripted mock LLM. What the "
            "numbers say, in plain words:"
        )
    ]
    items: list[Paragraph] = []
    lc_step, sb_step = facts.step_ms.get(lc or ""), facts.step_ms.get(sb or "")
    raw_step = facts.step_ms.get(RAW)
    if lc_step is not None and sb_step is not None:
        text = (
            f"Framework time: LangChain's {lc} spends {fmt.ms(lc_step)} per LLM step, "
            f"{fmt.ratio(lc_step / max(sb_step, 1e-3))} the self-built {sb} ({fmt.ms(sb_step)})"
        )
        if raw_step is not None:
            text += f" and {fmt.ratio(lc_step / max(raw_step, 1e-3))} a bare httpx loop ({fmt.ms(raw_step)})"
        items.append(P(Strong("Speed. "), text + "."))
        share = analysis.overhead_share(lc_step, REFERENCE_LLM_LATENCY_MS)
        l1 = analysis.breakeven_latency(lc_step, 0.01)
        items.append(
            P(
                Strong("Next to an LLM. "),
                f"With {fmt.ms(REFERENCE_LLM_LATENCY_MS)} per LLM call that overhead is "
                f"{fmt.pct(share)} of end-to-end time; it stays under 1 % whenever calls take "
                f"longer than {_latency_text(l1)}.",
            )
        )
    lc_peak = {e: v for e, v in facts.peak_rps.items() if is_langchain(e)}
    if lc_peak and sb in facts.peak_rps:
        best = max(lc_peak, key=lc_peak.get)
        items.append(
            P(
                Strong("Throughput. "),
                f"One process peaks at {lc_peak[best]:,.0f} runs/s with {best} (the best "
                f"LangChain engine) and {facts.peak_rps[sb]:,.0f} runs/s with {sb}, on the "
                "zero-latency mock (pure CPU).",
            )
        )
    elif lc in facts.cpu_run_ms and sb in facts.cpu_run_ms:
        items.append(
            P(
                Strong("CPU. "),
                f"A run costs {fmt.ms(facts.cpu_run_ms[lc])} of CPU with {lc} and "
                f"{fmt.ms(facts.cpu_run_ms[sb])} with {sb}.",
            )
        )
    lc_tokens = {e: v for e, v in facts.token_overhead.items() if is_langchain(e)}
    if lc_tokens:
        parts = ", ".join(f"{e} {fmt.signed(v, fmt.count)}" for e, v in lc_tokens.items())
        items.append(
            P(Strong("Tokens. "), f"Extra prompt tokens per request over the raw loop: {parts}.")
        )
    if facts.fault_scenarios and lc in facts.fault_handled and sb in facts.fault_handled:
        n = facts.fault_scenarios
        items.append(
            P(
                Strong("Faults. "),
                f"Of {n} fault scenarios, {sb} ended {round(facts.fault_handled[sb] * n)} the way a "
                f"production agent should, {lc} {round(facts.fault_handled[lc] * n)}.",
            )
        )
    lc_ttft, sb_ttft = facts.ttft_ms.get(lc or ""), facts.ttft_ms.get("scheduler-stream")
    if lc_ttft is not None and sb_ttft is not None:
        lc_x = facts.ttft_extra_ms.get(lc or "", lc_ttft)
        sb_x = facts.ttft_extra_ms.get("scheduler-stream", sb_ttft)
        items.append(
            P(
                Strong("Streaming. "),
                f"The first token of the answer reaches the caller after {fmt.ms(lc_ttft)} "
                f"through {lc} and {fmt.ms(sb_ttft)} through scheduler-stream: "
                f"{fmt.ms(lc_x)} and {fmt.ms(sb_x)} more than through the raw loop.",
            )
        )
    if lc in facts.debug_recall and sb in facts.debug_recall:
        text = (
            f"The most useful debug output of {lc} ({facts.debug_mode.get(lc or '', '?')}) shows "
            f"{fmt.pct(facts.debug_recall[lc], decimals=0)} of a run's key facts, {sb}'s "
            f"({facts.debug_mode.get(sb or '', '?')}) {fmt.pct(facts.debug_recall[sb], decimals=0)}"
        )
        loc_lc, loc_sb = facts.debug_localised.get(lc or ""), facts.debug_localised.get(sb or "")
        if loc_lc is not None and loc_sb is not None:
            text += (
                f"; the failing step of a fault can be located in {fmt.pct(loc_lc, decimals=0)} of the fault "
                f"scenarios with {lc}, {fmt.pct(loc_sb, decimals=0)} with {sb}"
            )
        items.append(P(Strong("Debugging. "), text + "."))
    if lc in facts.modules:
        text = f"Importing {lc} loads {facts.modules[lc]:,.0f} modules"
        if lc in facts.import_ms:
            text += f" in {fmt.ms(facts.import_ms[lc])}"
        if sb in facts.modules:
            text += f"; {sb} loads {facts.modules[sb]:,.0f}"
        if facts.scheduler_lines:
            text += f"; scheduler/ is {facts.scheduler_lines:,} lines of code"
        items.append(P(Strong("Footprint. "), text + "."))
    counts = pd.Series([c.verdict for c in ledger]).value_counts()
    verdicts = ", ".join(
        f"{counts[v]} {v}"
        for v in ("supported", "partly", "refuted", "not measured")
        if v in counts
    )
    items.append(
        P(Strong("The article's claims. "), f"Of {len(ledger)} measurable claims: {verdicts}.")
    )
    blocks.append(Bullets(tuple(items)))
    return Section("Executive summary", "executive-summary", tuple(blocks))


def decision_matrix(matrix: Sequence[Rating]) -> Section:
    rows = []
    for r in matrix:
        css = "stars" if r.langchain is not None or r.self_built is not None else "not-measured"
        rows.append(
            (
                r.dimension,
                f"{r.article[0]} / {r.article[1]}",
                Cell(stars_text(r.langchain), css),
                Cell(stars_text(r.self_built), css),
                r.basis,
                r.rule,
            )
        )
    table = Table(
        (
            "dimension",
            "article (LangChain / self-built)",
            "LangChain, measured",
            "self-built, measured",
            "measured numbers",
            "rule",
        ),
        tuple(rows),
        caption="Stars from our numbers by the rule in the last column; 'not measured' where "
        "this benchmark has no data. The article's stars are its own (see ARTICLE.md).",
        css="decision-matrix",
    )
    return Section(
        "Decision matrix",
        "decision-matrix",
        (
            P(
                "The article's matrix, re-rated from measurements. 'LangChain' is the default "
                "AgentExecutor (as LangChain's docs write it); 'self-built' is our scheduler with "
                "all production features on. Dimensions that depend on people and time are not "
                "measured here and say so."
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
        ("#", "the article says", "measured", "verdict", "rule"),
        rows,
        caption="Each verdict is computed from the measured numbers by the stated rule.",
        css="claims-ledger",
    )
    return Section(
        "Claims ledger",
        "claims-ledger",
        (
            P("Each measurable claim of the article, the number we measured, and the verdict."),
            table,
            P("Claims this benchmark does not measure:"),
            Bullets(tuple(P(t) for t in UNMEASURED_CLAIMS)),
        ),
    )


def when_to_choose(data: RunData, facts: Facts, charts: Mapping[str, ChartSlot]) -> Section:
    steps = analysis.step_overhead(data)
    if steps.empty:
        return Section(
            "When to choose which",
            "when-to-choose-which",
            (Note("No completed happy-path runs: nothing to derive."),),
        )
    cpu = analysis.cpu_per_run(data).set_index("engine")["cpu_ms"].to_dict()
    basis = analysis.cpu_per_run(data)["basis"].iloc[0] if cpu else "n/a"
    rows = []
    for _, r in steps.iterrows():
        e, o = r["engine"], r["median_ms"]
        c = cpu.get(e)
        rows.append(
            (
                e,
                fmt.ms(o),
                *(
                    _latency_text(analysis.breakeven_latency(o, s))
                    for s in reversed(SHARE_THRESHOLDS)
                ),
                fmt.ms(c),
                fmt.count(1000 / c if c else None),
                fmt.count(facts.peak_rps.get(e)),
            )
        )
    table = Table(
        (
            "engine",
            "overhead / LLM step",
            "LLM latency for < 10 %",
            "< 5 %",
            "< 1 %",
            f"CPU per run ({basis})",
            "runs/s that fill one core",
            "measured peak runs/s",
        ),
        tuple(rows),
        caption="Derived: overhead share = o ÷ (o + L) per LLM step; the latency columns solve "
        "for L. 'runs/s that fill one core' = 1000 ÷ CPU ms per run.",
        numeric=(1, 2, 3, 4, 5, 6, 7),
    )
    blocks: list[Block] = [
        P(
            "The framework's cost is fixed per step; the LLM's is not. The slower your model, "
            "the less the framework matters — these are the latencies and loads where it stops "
            "(or starts) mattering."
        ),
        table,
    ]
    sb = facts.self_built
    sb_step = facts.step_ms.get(sb or "")
    extra_rows = []
    if sb_step is not None:
        for e, o in facts.step_ms.items():
            if not is_langchain(e):
                continue
            c_e, c_s = cpu.get(e), cpu.get(sb)
            extra_cpu = (c_e - c_s) if c_e is not None and c_s is not None else None
            extra_rows.append(
                (
                    e,
                    fmt.ms(o - sb_step),
                    *(
                        _latency_text(analysis.breakeven_extra_latency(o, sb_step, s))
                        for s in reversed(SHARE_THRESHOLDS)
                    ),
                    fmt.count(1000 / extra_cpu if extra_cpu and extra_cpu > 0 else None),
                )
            )
    if extra_rows:
        blocks.append(
            Table(
                (
                    "LangChain engine",
                    f"extra per step over {sb}",
                    "extra < 10 % above",
                    "extra < 5 % above",
                    "extra < 1 % above",
                    "runs/s at which the extra CPU fills a core",
                ),
                tuple(extra_rows),
                caption=f"What moving from {sb} to a LangChain engine costs: extra ÷ (o + L).",
                numeric=(1, 2, 3, 4, 5),
            )
        )
    blocks.append(Bullets(tuple(_choose_bullets(facts, cpu))))
    blocks.extend(_slot(charts, "overhead_share"))
    return Section("When to choose which", "when-to-choose-which", tuple(blocks))


def _choose_bullets(facts: Facts, cpu: Mapping[str, float]) -> list[Paragraph]:
    lc, sb = facts.langchain, facts.self_built
    out: list[Paragraph] = []
    lc_step = facts.step_ms.get(lc or "")
    if lc_step is not None:
        l1, l10 = (analysis.breakeven_latency(lc_step, s) for s in (0.01, 0.10))
        out.append(
            P(
                Strong("Latency. "),
                f"{lc}'s overhead stops mattering (under 1 % of a step) when each LLM call takes "
                f"more than {_latency_text(l1)}, and is under 10 % above {_latency_text(l10)}. "
                "Hosted models usually take 300 ms – 3 s per call.",
            )
        )
    c = cpu.get(lc or "")
    if c:
        text = f"{lc} fills one CPU core at about {1000 / c:,.0f} runs/s"
        if cpu.get(sb):
            text += f"; {sb} at about {1000 / cpu[sb]:,.0f} runs/s"
        out.append(
            P(
                Strong("Load. "),
                text + ". Python runs one core per process, so beyond "
                "that you add processes — or a lighter loop.",
            )
        )
    react = facts.token_overhead.get("lc-react")
    if react is not None and react >= 50:
        out.append(
            P(
                Strong("Tokens. "),
                f"Text ReAct prompts cost {fmt.signed(react, fmt.count)} tokens per request; tool-calling agents "
                "do not have that cost. Prefer tool calling, whichever loop you use.",
            )
        )
    if facts.fault_scenarios and lc in facts.fault_handled and sb in facts.fault_handled:
        gap = facts.fault_handled[sb] - facts.fault_handled[lc]
        n = facts.fault_scenarios
        if gap > 0:
            out.append(
                P(
                    Strong("Fault handling. "),
                    f"{sb} ended {round(facts.fault_handled[sb] * n)} of {n} fault scenarios the "
                    f"way production needs, {lc} {round(facts.fault_handled[lc] * n)} (see the "
                    "fault matrix): with LangChain, budget for the missing retries, timeouts, "
                    "breakers and guards yourself.",
                )
            )
        else:
            out.append(
                P(Strong("Fault handling. "), f"{lc} handled the fault scenarios as well as {sb}.")
            )
    return out


def performance(data: RunData, charts: Mapping[str, ChartSlot]) -> Section:
    steps = analysis.step_overhead(data)
    blocks: list[Block] = [*_slot(charts, "overhead_per_step")]
    if not steps.empty:
        blocks.append(
            Table(
                ("engine", "runs", "overhead / step (median)", "p25", "p75", "p95", "CPU / step"),
                tuple(
                    (
                        r["engine"],
                        str(r["runs"]),
                        fmt.ms(r["median_ms"]),
                        fmt.ms(r["p25_ms"]),
                        fmt.ms(r["p75_ms"]),
                        fmt.ms(r["p95_ms"]),
                        fmt.ms(r["cpu_median_ms"]),
                    )
                    for _, r in steps.iterrows()
                ),
                caption="Completed runs of the happy-path scenarios; overhead = run time − mock "
                "latency − tool time, divided by LLM calls.",
                numeric=(1, 2, 3, 4, 5, 6),
            )
        )
    blocks.extend(_slot(charts, "latency"))
    blocks.extend(_slot(charts, "throughput"))
    if data.throughput is not None:
        blocks.extend(_throughput_tables(data.throughput))
    blocks.extend(_slot(charts, "ttft"))
    return Section("Performance", "performance", tuple(blocks))


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
            row: list[str] = [engine]
            for c in levels:
                if c in e.index:
                    r = e.loc[c]
                    row += [fmt.num(r["runs_per_s"]), fmt.ms(r["p95_ms"])]
                else:
                    row += ["–", "–"]
            rows.append(tuple(row))
        columns = ["engine"]
        for c in levels:
            columns += [f"runs/s @{c:g}", f"p95 @{c:g}"]
        out.append(
            Table(
                tuple(columns),
                tuple(rows),
                caption=f"Throughput sweep, latency profile '{profile}': one engine process, "
                "@N = N runs in flight.",
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
                    "failing step localised",
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
                caption="Recall and localisation: mean over scenarios; bytes: median.",
                numeric=(2, 3, 4, 5, 6, 7),
            )
        )
    return Section("Debuggability", "debuggability", tuple(blocks))


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


def per_scenario(data: RunData) -> Section:
    cells_table = analysis.scenario_stats(data)
    if cells_table.empty:
        return Section("Per-scenario results", "per-scenario-results", (Note("No runs."),))
    sc = data.scenarios.set_index("scenario")
    answers = _sample_answers(data)
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
        rows = []
        for _, r in g.iterrows():
            rows.append(
                (
                    r["engine"],
                    r["status"],
                    fmt.ms(r["median_ms"]),
                    fmt.ms_range(r["ci_low_ms"], r["ci_high_ms"], digits=4),
                    fmt.ms_range(r["p25_ms"], r["p75_ms"]),
                    fmt.ms(r["p95_ms"]),
                    fmt.ms(r["overhead_step_ms"]),
                    fmt.ms(r["cpu_ms"]),
                    fmt.num(r["llm_calls"], "{:g}"),
                    fmt.num(r["tool_calls"], "{:g}"),
                    fmt.count(r["tokens_per_request"]),
                    fmt.signed(r["token_overhead"], fmt.count),
                    fmt.ms(r["ttft_ms"]),
                    _short(answers.get((r["engine"], scenario), "")),
                )
            )
        blocks.append(
            Table(
                (
                    "engine",
                    "outcomes",
                    "median",
                    "95 % CI",
                    "IQR",
                    "p95",
                    "overhead / step",
                    "CPU",
                    "LLM calls",
                    "tool calls",
                    "tokens / req",
                    "Δ tokens vs raw",
                    "TTFT",
                    "final answer (first run)",
                ),
                tuple(rows),
                numeric=(2, 3, 5, 6, 7, 8, 9, 10, 11, 12),
            )
        )
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
        ),
        tuple(subs),
    )


def _scenario_overview(data: RunData, cells_table: pd.DataFrame) -> Table:
    engines = order_engines(cells_table["engine"])
    faults = set(data.fault_scenarios)
    ok = (
        data.runs.groupby(["engine", "scenario"])["expect_ok"].agg(
            lambda s: bool(s.dropna().astype(bool).all()) if s.notna().any() else True
        )
        if "expect_ok" in data.runs
        else pd.Series(dtype=bool)
    )
    cells = cells_table.set_index(["engine", "scenario"])
    rows = []
    for scenario in sorted(cells_table["scenario"].unique(), key=lambda s: (s in faults, s)):
        row: list[str] = [scenario + (" (fault)" if scenario in faults else "")]
        for engine in engines:
            if (engine, scenario) not in cells.index:
                row.append("–")
                continue
            mark = "" if ok.get((engine, scenario), True) else " ✗"
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
        "Not measured: development speed on complex agents, maintainability, flexibility, "
        "learning curve, documentation quality, version stability, real-network behaviour.",
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
