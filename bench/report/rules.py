"""The decision matrix and the claims ledger, computed from one set of ``Facts`` by stated rules.

Every rule reads estimates from ``Facts`` (never typed-in conclusions), compares like with
like (default configuration with default, production with production, streaming with
streaming: ``Facts.langchain`` / ``Facts.self_built``), and states itself in plain words;
the report prints the rule next to the result, and docs/report.md lists them all.
Thresholds live in ``T`` so that a test can push a number across each of them.

A claim is judged in **parts** where the data splits (tool calling vs text ReAct; retries
vs tool guards; the default vs the production configuration): each part is a
``verdicts.Judgement`` — decided on the point estimates and on every bootstrap resample,
*unsettled* when the resamples disagree, with its CPU dependence — and the claim's verdict
combines them (``verdicts.combine``). The matrix rates each side from the same facts, so
the two cannot contradict each other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bench.engines.registry import REGISTRY, REPRESENTATIVE, counterpart
from bench.report.analysis import REFERENCE_LLM_LATENCY_MS, breakeven_latency, overhead_share
from bench.report.facts import Facts, ProviderSwitch, Side, exact, known
from bench.report.frames import RAW
from bench.report.verdicts import Judgement, Verdict, combine, interval_text, judge, ratio
from bench.results import fmt
from bench.results.rows import first_line
from bench.results.stats import Estimate
from bench.results.versions import upgrade_histories


class T:
    """Thresholds of every rule (documented in docs/report.md)."""

    # performance stars: what the user pays at the reference LLM latency
    SHARE_BANDS = ((0.001, 5), (0.005, 4), (0.01, 3), (0.05, 2))  # share <= x -> stars
    CORES_BANDS = ((0.1, 5), (0.25, 4), (0.5, 3), (1.0, 2))  # cores per 100 runs/s <= x
    # debuggability stars: recall of the best debug mode
    DEBUG_BANDS = ((0.9, 5), (0.75, 4), (0.5, 3), (0.25, 2))  # recall >= x -> stars; else 1
    DEBUG_NOISE_FACTOR = 3.0  # one star off when bytes per fact > 3x the other side's
    DEBUG_LOCALISED_MIN = 0.5  # one star off when no mode locates the failure this often
    # production-readiness stars: share of fault scenarios handled as production needs
    PROD_BANDS = ((0.9, 5), (0.7, 4), (0.5, 3), (0.25, 2))  # share >= x -> stars; else 1

    # ledger
    OVERHEAD_RATIO_SUPPORTED = 2.0  # LangChain / self-built overhead per step, like for like
    OVERHEAD_RATIO_REFUTED = 1.25
    OVERHEAD_SHARE_SIGNIFICANT = 0.01  # of a step at REFERENCE_LLM_LATENCY_MS
    OVERHEAD_SHARE_NEGLIGIBLE = 0.001
    CALLBACK_SHARE_SUPPORTED = 0.25  # of a LangChain step spent in callbacks and runnables
    CALLBACK_SHARE_REFUTED = 0.05
    TOKENS_PER_ROUND_MIN = 100.0  # "adds ~200 tokens" holds when an engine adds at least half
    TOKENS_NEGLIGIBLE = 20.0  # fewer than this per request: no framework overhead to speak of
    REFERENCE_TTFT_MS = 300.0  # a hosted model's time to first token
    TTFT_RATIO_SUPPORTED = 2.0
    TTFT_RATIO_REFUTED = 1.25
    TTFT_SHARE_SIGNIFICANT = 0.01  # the extra TTFT must be >= 1 % of REFERENCE_TTFT_MS
    TTFT_SHARE_NEGLIGIBLE = 0.001  # under 0.1 % of it (0.3 ms) the difference is noise
    RETRIES_HANDLED = 0.9  # share of LLM-fault scenarios a "has retries" engine survives
    RETRIES_MISSING = 0.5
    GUARD_GAP_SUPPORTED = 0.25  # self-built minus LangChain built-ins, tool and guard faults
    GUARD_GAP_REFUTED = 0.05
    MODULES_CLAIMED = 50  # modules beyond the bare HTTP loop's
    LINES_CLAIMED = 400
    LINES_TOLERANCE = 1.5  # "~400 lines" holds up to 600 logical lines
    LINES_REFUTED = 2.5  # beyond 1,000 it is refuted
    QPS_CLAIMED = 100.0
    QPS_MARGIN = 0.2  # within ±20 % of 100 runs/s is "about 100": neither side of the claim
    DEBUG_RECALL_GAP_SUPPORTED = 0.2
    DEBUG_RECALL_GAP_REFUTED = 0.05
    DEBUG_NOISE_SUPPORTED = 3.0  # bytes per fact, LangChain / self-built
    DEBUG_NOISE_REFUTED = 1.5
    DEBUG_LOCALISED_GAP_SUPPORTED = 0.5
    DEBUG_LOCALISED_GAP_REFUTED = 0.1
    # multi-model support: statements a switch of provider may change
    SWITCH_STATEMENTS = 5  # "one code base": the chat model and its import, with slack
    SWITCH_REWRITE = 25  # beyond this the agent was rewritten for the provider
    MIN_STEP_MS = 0.01  # floor for denominators (ms)
    # over-abstraction: LangChain's own function calls per LLM step beyond our scheduler's
    ABSTRACTION_SUPPORTED = 100  # "one line hides ~100 lines": a call runs at least one line
    ABSTRACTION_REFUTED = 10  # about as much code as a hand-written loop runs
    # inflexible: share of the catalogue's customisations a LangChain engine does only with
    # internals (private API, subclassing internals, monkeypatching), or not at all
    INFLEXIBLE_SUPPORTED = 0.25  # refuted only at 0: every one with public API
    # flexibility stars: share of the customisations done with public API only
    FLEX_BANDS = ((1.0, 5), (0.85, 4), (0.7, 3), (0.5, 2))  # share >= x -> stars; else 1
    FLEX_STATEMENTS_FACTOR = 1.5  # one star off when its cells need > 1.5x the other's code
    # development speed stars (false simplicity): a program's statements as a multiple of
    # the smaller side's
    SIMPLICITY_BANDS = ((1.0, 5), (1.25, 4), (1.5, 3), (2.0, 2))  # ratio <= x -> stars; else 1


def stars_text(n: int | None) -> str:
    if n is None:
        return "not measured"
    return "★" * n + "☆" * (5 - n) + f" ({n})"


def _band_le(value: float, bands: tuple[tuple[float, int], ...]) -> int:
    for limit, stars in bands:
        if value <= limit:
            return stars
    return 1


def _band_ge(value: float, bands: tuple[tuple[float, int], ...]) -> int:
    for limit, stars in bands:
        if value >= limit:
            return stars
    return 1


def _three_way(value: float, supported: bool, refuted: bool) -> Verdict:
    if not math.isfinite(value):
        return "not measured"
    if supported:
        return "supported"
    if refuted:
        return "refuted"
    return "partly"


def ms_ci(e: Estimate | None) -> str:
    return interval_text(e, fmt.ms, fmt.ms_range)


def ratio_ci(e: Estimate | None) -> str:
    return interval_text(e, lambda v: fmt.ratio(v, digits=1))


def pct_ci(e: Estimate | None) -> str:
    return interval_text(e, fmt.pct)


def latency_text(ms: float) -> str:
    if not math.isfinite(ms) or ms <= 0:
        return "any latency"
    return fmt.ms(ms, seconds_from=1000)


# ---------------------------------------------------------------------------------------------
# claims ledger


@dataclass(frozen=True)
class Part:
    """One judged part of a claim."""

    label: str
    measured: str  # the numbers, with their intervals
    judgement: Judgement
    margin: str = ""  # how far from the threshold; where it would flip

    @property
    def verdict(self) -> Verdict:
        return self.judgement.verdict

    def text(self) -> str:
        extras = [self.margin, self.judgement.cpu_text()]
        if not self.judgement.settled:
            extras.append(self.judgement.uncertainty_text())
        tail = "; ".join(x for x in extras if x)
        return f"{self.label}: {self.measured}" + (f" ({tail})" if tail else "")


@dataclass(frozen=True)
class Claim:
    key: str
    claim: str  # what the article says
    rule: str
    parts: tuple[Part, ...] = ()
    why_not: str = ""  # when nothing could be measured: why

    @property
    def verdict(self) -> Verdict:
        return combine(p.verdict for p in self.parts) if self.parts else "not measured"

    @property
    def measured(self) -> str:
        if not self.parts:
            return self.why_not or "not measured in this run"
        return " · ".join(f"[{p.verdict}] {p.text()}" for p in self.parts)


def _pair(
    facts: Facts, metric: Mapping[str, Estimate], configuration: str
) -> tuple[str, str, str] | None:
    """(LangChain engine, self-built engine, label) of one configuration, both measured in
    ``metric``. Without our plain configuration in the run, LangChain's default is compared
    with our production one — which does more work per step, so the pair never flatters us —
    and the label says so."""
    lc, sb = facts.langchain, facts.self_built
    if lc is None or sb is None:
        return None
    a, b = getattr(lc, configuration), getattr(sb, configuration)
    label = configuration
    if b is None or not known(metric.get(b)):
        if configuration == "default" and sb.production and known(metric.get(sb.production)):
            b, label = sb.production, "default vs our production"
        else:
            return None
    if a is None or not known(metric.get(a)):
        return None
    return a, b, label


def claim_overhead(f: Facts) -> Claim:
    text = "Performance overhead: serialisation and long callback chains make LangChain slow."
    rule = (
        "slower: LangChain ÷ self-built framework overhead per LLM step, default with default "
        f"and production with production (geometric mean over the happy-path scenarios). "
        f"supported ≥ {T.OVERHEAD_RATIO_SUPPORTED:g}×, refuted < {T.OVERHEAD_RATIO_REFUTED:g}×. "
        "matters: LangChain's production overhead as a share of a step with a "
        f"{fmt.ms(REFERENCE_LLM_LATENCY_MS, seconds_from=1000)} LLM call; supported ≥ "
        f"{fmt.pct(T.OVERHEAD_SHARE_SIGNIFICANT)}, refuted < "
        f"{fmt.pct(T.OVERHEAD_SHARE_NEGLIGIBLE)}. Each part on every bootstrap resample too."
    )
    parts = []
    for configuration in ("default", "production"):
        pair = _pair(f, f.step_ms, configuration)
        if pair is None:
            continue
        lc, sb, label = pair
        if label != configuration and f.langchain and f.langchain.production:
            continue  # the production pair is there: no need for an inexact one
        r = ratio(f.step_ms[lc], f.step_ms[sb], T.MIN_STEP_MS)

        def decide(v: Mapping[str, float]) -> Verdict:
            x = v["lc"] / max(v["sb"], T.MIN_STEP_MS)
            return _three_way(x, x >= T.OVERHEAD_RATIO_SUPPORTED, x < T.OVERHEAD_RATIO_REFUTED)

        judgement = judge(
            {"lc": f.step_ms[lc], "sb": f.step_ms[sb]}, decide, cpu_bound=("lc", "sb")
        )
        parts.append(
            Part(
                f"slower ({label})",
                f"{lc} {ms_ci(f.step_ms[lc])} vs {sb} {ms_ci(f.step_ms[sb])} per LLM step: {ratio_ci(r)}",
                judgement,
                f"threshold {T.OVERHEAD_RATIO_SUPPORTED:g}×",
            )
        )
    lc_side = f.langchain
    lc_eng = (lc_side.production or lc_side.default) if lc_side else None
    if lc_eng is not None and known(f.step_ms.get(lc_eng)):
        step = f.step_ms[lc_eng]
        share = Estimate(
            overhead_share(step.point, REFERENCE_LLM_LATENCY_MS),
            overhead_share(step.low, REFERENCE_LLM_LATENCY_MS),
            overhead_share(step.high, REFERENCE_LLM_LATENCY_MS),
            step.resamples / (step.resamples + REFERENCE_LLM_LATENCY_MS),
        )

        def matters(v: Mapping[str, float]) -> Verdict:
            s = overhead_share(v["lc"], REFERENCE_LLM_LATENCY_MS)
            return _three_way(s, s >= T.OVERHEAD_SHARE_SIGNIFICANT, s < T.OVERHEAD_SHARE_NEGLIGIBLE)

        flip = breakeven_latency(step.point, T.OVERHEAD_SHARE_SIGNIFICANT)
        parts.append(
            Part(
                "matters next to an LLM",
                f"{lc_eng}'s overhead is {pct_ci(share)} of a step with a "
                f"{fmt.ms(REFERENCE_LLM_LATENCY_MS, seconds_from=1000)} call",
                judge({"lc": step}, matters, cpu_bound=("lc",)),
                f"under {fmt.pct(T.OVERHEAD_SHARE_SIGNIFICANT)} once calls take more than "
                f"{latency_text(flip)}: the verdict flips at that LLM latency",
            )
        )
    return Claim("overhead", text, rule, tuple(parts), "overhead per step not measured")


def claim_callbacks(f: Facts) -> Claim:
    text = "Long callback chains: each step passes through layers of handlers."
    rule = (
        "the share of a LangChain step's time spent in callback managers, tracers and "
        "runnable plumbing (the profiling probe's samples: inclusive — a callback manager, "
        "tracer or langsmith wrapper anywhere on the stack — plus the runnables' own frames; "
        "self time only for probes that recorded no stacks). supported: ≥ "
        f"{fmt.pct(T.CALLBACK_SHARE_SUPPORTED, decimals=0)}; refuted: < "
        f"{fmt.pct(T.CALLBACK_SHARE_REFUTED, decimals=0)}; otherwise partly"
    )
    shares = f.callback_share
    side = f.langchain
    judged = [e for e in (side.engines if side else ()) if known(shares.get(e))]
    others = [
        e for e in shares if e not in judged and e in REGISTRY and REGISTRY[e].family == "langchain"
    ]
    parts = []
    for engine in judged:
        share = shares[engine]

        def decide(v: Mapping[str, float]) -> Verdict:
            s = v["share"]
            return _three_way(s, s >= T.CALLBACK_SHARE_SUPPORTED, s < T.CALLBACK_SHARE_REFUTED)

        measured = f"{pct_ci(share)} of a run's time in callbacks, tracers and runnables"
        if engine == judged[-1] and others:
            measured += (
                " (other LangChain engines: "
                + ", ".join(f"{e} {fmt.pct(shares[e].point)}" for e in others)
                + ")"
            )
        parts.append(Part(engine, measured, judge({"share": share}, decide)))
    return Claim(
        "callbacks",
        text,
        rule,
        tuple(parts),
        "needs the profiling probe (callbacks and runnables isolated); not in this run",
    )


def claim_tokens(f: Facts) -> Claim:
    text = (
        "LangChain adds ~200 tokens of framework overhead per round; a self-built loop almost none."
    )
    rule = (
        "prompt tokens per request minus the raw loop's on the same scenarios, per LangChain "
        "engine, tool-calling agents and text ReAct judged apart. supported: the engine adds "
        f"≥ {T.TOKENS_PER_ROUND_MIN:.0f}; refuted: < {T.TOKENS_NEGLIGIBLE:.0f}; otherwise partly"
    )
    lcs = {
        e: v
        for e, v in f.token_overhead.items()
        if e in REGISTRY and REGISTRY[e].family == "langchain" and not REGISTRY[e].outcome_only
    }
    parts = []
    for protocol, label in (("tools", "tool-calling agents"), ("react", "text ReAct")):
        mine = {e: v for e, v in lcs.items() if REGISTRY[e].protocol == protocol}
        if not mine:
            continue
        worst = max(mine, key=lambda e: mine[e].point)

        def decide(v: Mapping[str, float]) -> Verdict:
            t = v["tokens"]
            return _three_way(t, t >= T.TOKENS_PER_ROUND_MIN, t < T.TOKENS_NEGLIGIBLE)

        listed = ", ".join(f"{e} {fmt.signed(v.point, fmt.count)}" for e, v in mine.items())
        parts.append(
            Part(
                label,
                f"tokens per request vs raw: {listed}",
                judge({"tokens": mine[worst]}, decide),
            )
        )
    return Claim("tokens", text, rule, tuple(parts), "token overhead not measured")


def claim_streaming(f: Facts) -> Claim:
    text = "Poor streaming: streams pass through layers of interception, adding latency."
    rule = (
        "the TTFT phase: what each engine adds to the time to the first token of the final "
        "answer over what the mock scripted for its own requests (ReAct's text before the "
        "answer is the mock's), less what the bare loop adds (the harness's share, carried by "
        "every engine), LangChain vs self-built of the same configuration. supported: "
        f"LangChain adds ≥ {T.TTFT_RATIO_SUPPORTED:g}× and ≥ "
        f"{fmt.ms(T.TTFT_SHARE_SIGNIFICANT * T.REFERENCE_TTFT_MS)} more (1 % of a "
        f"{fmt.ms(T.REFERENCE_TTFT_MS)} hosted-model TTFT); refuted: < "
        f"{T.TTFT_RATIO_REFUTED:g}× or < {fmt.ms(T.TTFT_SHARE_NEGLIGIBLE * T.REFERENCE_TTFT_MS)} "
        "more; otherwise partly"
    )
    parts = []
    for configuration in ("default", "production"):
        pair = _pair(f, f.ttft_added_ms, configuration)
        if pair is None:
            continue
        lc, sb, label = pair

        def decide(v: Mapping[str, float]) -> Verdict:
            x = max(v["lc"], 0.0) / max(v["sb"], T.MIN_STEP_MS)
            more = v["lc"] - v["sb"]
            return _three_way(
                x,
                x >= T.TTFT_RATIO_SUPPORTED
                and more >= T.TTFT_SHARE_SIGNIFICANT * T.REFERENCE_TTFT_MS,
                x < T.TTFT_RATIO_REFUTED or more < T.TTFT_SHARE_NEGLIGIBLE * T.REFERENCE_TTFT_MS,
            )

        a, b = f.ttft_added_ms[lc], f.ttft_added_ms[sb]
        parts.append(
            Part(
                label,
                f"added to TTFT: {lc} {ms_ci(a)}, {sb} {ms_ci(b)}",
                judge({"lc": a, "sb": b}, decide, cpu_bound=("lc", "sb")),
                f"{fmt.signed(a.point - b.point)} next to a {fmt.ms(T.REFERENCE_TTFT_MS)} TTFT",
            )
        )
    return Claim("streaming", text, rule, tuple(parts), "time to first token not measured")


def _kind_share(f: Facts, engine: str | None, kinds: tuple[str, ...]) -> tuple[int, int] | None:
    counts = f.fault_by_kind.get(engine or "")
    if not counts:
        return None
    ok = sum(counts.get(k, (0, 0))[0] for k in kinds)
    n = sum(counts.get(k, (0, 0))[1] for k in kinds)
    return (ok, n) if n else None


def claim_production(f: Facts) -> Claim:
    text = "Not production-ready: no built-in monitoring, circuit breaking or retries."
    rule = (
        "the fault matrix (each scenario's base outcome). retries: LangChain's default engine "
        "on the LLM faults (HTTP errors, timeouts, broken streams); supported if it survives ≤ "
        f"{fmt.pct(T.RETRIES_MISSING, decimals=0)}, refuted if ≥ "
        f"{fmt.pct(T.RETRIES_HANDLED, decimals=0)}. built-in guards: the tool and guard faults "
        "(failing or hung tools, loops, budgets, confirmations, malformed calls), the "
        "self-built production engine's share minus LangChain's production configuration "
        "with its built-ins only (no custom code); supported if the gap ≥ "
        f"{T.GUARD_GAP_SUPPORTED:.2f}, refuted if ≤ {T.GUARD_GAP_REFUTED:.2f}. Monitoring is "
        "judged under debugging."
    )
    lc, sb = f.langchain, f.self_built
    parts = []
    retries = _kind_share(f, lc.default if lc else None, ("llm",))
    if retries is not None and lc is not None:
        ok, n = retries
        share = exact(ok / n)

        def decide_retries(v: Mapping[str, float]) -> Verdict:
            s = v["share"]
            return _three_way(s, s <= T.RETRIES_MISSING, s >= T.RETRIES_HANDLED)

        parts.append(
            Part(
                "retries",
                f"{lc.default} (defaults) survives {ok}/{n} LLM-fault scenarios",
                judge({"share": share}, decide_retries),
            )
        )
    if lc is not None and sb is not None:
        builtin = lc.builtins or lc.production or lc.default
        theirs = _kind_share(f, builtin, ("tool", "guard"))
        ours = _kind_share(f, sb.production, ("tool", "guard"))
        if theirs is not None and ours is not None:
            gap = exact(ours[0] / ours[1] - theirs[0] / theirs[1])

            def decide_guards(v: Mapping[str, float]) -> Verdict:
                g = v["gap"]
                return _three_way(g, g >= T.GUARD_GAP_SUPPORTED, g <= T.GUARD_GAP_REFUTED)

            measured = (
                f"tool and guard faults handled: {sb.production} {ours[0]}/{ours[1]}; "
                f"{builtin} {theirs[0]}/{theirs[1]}"
            )
            full = _kind_share(f, lc.production, ("tool", "guard"))
            statements = f.configuration_statements(lc.production or "")
            if full is not None and lc.production and lc.production != builtin:
                measured += (
                    f"; with its custom code ({lc.production}, "
                    f"{statements.get('custom', 0):,.0f} statements) {full[0]}/{full[1]}"
                )
            parts.append(Part("built-in guards", measured, judge({"gap": gap}, decide_guards)))
    return Claim("production", text, rule, tuple(parts), "fault scenarios not run")


def claim_footprint(f: Facts) -> Claim:
    text = 'LangChain core "depends on 50+ modules"; the self-built loop is ~400 lines.'
    limit = T.LINES_CLAIMED * T.LINES_TOLERANCE
    rule = (
        f"modules: importing LangChain's default stack loads ≥ {T.MODULES_CLAIMED} modules more "
        "than the bare HTTP loop (raw) in a fresh interpreter; supported or refuted. lines: "
        f"the scheduler's core loop file has ≤ {limit:.0f} logical lines (~{T.LINES_CLAIMED} "
        f"with 50 % tolerance), refuted above {T.LINES_CLAIMED * T.LINES_REFUTED:.0f}; counted "
        "when the run was made, formatting-invariant"
    )
    parts = []
    lc = f.langchain.default if f.langchain else None
    if lc and known(f.modules.get(lc)) and known(f.modules.get(RAW)):
        extra = exact(f.modules[lc].point - f.modules[RAW].point)

        def decide_modules(v: Mapping[str, float]) -> Verdict:
            m = v["extra"]
            return _three_way(m, m >= T.MODULES_CLAIMED, m < T.MODULES_CLAIMED)

        sb = f.self_built.production if f.self_built else None
        measured = (
            f"{lc} loads {f.modules[lc].point:,.0f} modules, raw {f.modules[RAW].point:,.0f} "
            f"(+{extra.point:,.0f})"
        )
        if sb and known(f.modules.get(sb)):
            measured += f"; {sb} {f.modules[sb].point:,.0f}"
        parts.append(Part("50+ modules", measured, judge({"extra": extra}, decide_modules)))
    loop = f.code.get(("scheduler core loop", "code"))
    package = f.code.get(("scheduler", "code"))
    if loop:
        lines = exact(loop["logical_lines"])

        def decide_lines(v: Mapping[str, float]) -> Verdict:
            n = v["lines"]
            return _three_way(n, n <= limit, n > T.LINES_CLAIMED * T.LINES_REFUTED)

        measured = f"the core loop file is {lines.point:,.0f} logical lines"
        if package:
            measured += (
                f"; the whole scheduler/ package (memory, multi-agent, OTel, streaming, "
                f"pools) {package['logical_lines']:,.0f}"
            )
        parts.append(Part("~400-line loop", measured, judge({"lines": lines}, decide_lines)))
    return Claim("footprint", text, rule, tuple(parts), "modules and code sizes not measured")


def claim_qps(f: Facts) -> Claim:
    text = "Production concurrency above 100 QPS needs a custom loop."
    rule = (
        "the open-loop load phase: the highest offered rate (Poisson arrivals, realistic LLM "
        "latency) an engine sustains with its p95 within the latency target, in one process "
        "and on all the machine's cores, LangChain's production configuration against ours. "
        f"supported: LangChain fails at or below {T.QPS_CLAIMED:.0f} runs/s while the "
        f"self-built sustains {T.QPS_CLAIMED:.0f}; refuted: LangChain sustains "
        f"{T.QPS_CLAIMED:.0f}; otherwise partly. Cores per 100 runs/s (the CPU per run measured "
        "under load) say what scaling out costs. Without a load phase: the zero-latency peak "
        "of one process (closed loop)"
    )
    lc_side, sb_side = f.langchain, f.self_built
    if f.capacity and lc_side and sb_side:
        return Claim("qps", text, rule, _qps_from_load(f, lc_side, sb_side))
    low = T.QPS_CLAIMED * (1 - T.QPS_MARGIN)
    high = T.QPS_CLAIMED * (1 + T.QPS_MARGIN)
    parts = []
    if lc_side and sb_side:
        for configuration in ("production", "default"):
            lc, sb = getattr(lc_side, configuration), getattr(sb_side, configuration)
            if not (lc and sb and known(f.peak_rps.get(lc)) and known(f.peak_rps.get(sb))):
                continue
            # as ms of CPU per run, so that a slower CPU scales them like the other times
            a = exact(1000.0 / f.peak_rps[lc].point)
            b = exact(1000.0 / f.peak_rps[sb].point)

            def decide(v: Mapping[str, float]) -> Verdict:
                rate_lc, rate_sb = 1000.0 / v["lc"], 1000.0 / v["sb"]
                return _three_way(
                    rate_lc, rate_lc < low and rate_sb >= T.QPS_CLAIMED, rate_lc >= high
                )

            parts.append(
                Part(
                    f"{configuration}, zero latency (no load phase)",
                    f"one process peaks at {f.peak_rps[lc].point:,.0f} runs/s with {lc}, "
                    f"{f.peak_rps[sb].point:,.0f} with {sb}",
                    judge({"lc": a, "sb": b}, decide, cpu_bound=("lc", "sb")),
                )
            )
            break
    return Claim("qps", text, rule, tuple(parts), "throughput not measured")


def _qps_from_load(f: Facts, lc_side: Side, sb_side: Side) -> tuple[Part, ...]:
    lc = lc_side.production or lc_side.default
    sb = sb_side.production or sb_side.default
    if lc is None or sb is None:
        return ()  # the loop below would find no capacity of a missing engine
    counts = sorted({n for e, n in f.capacity if e in (lc, sb)})
    parts = []
    for processes in counts:
        a, b = f.capacity.get((lc, processes)), f.capacity.get((sb, processes))
        if a is None or b is None:
            continue
        sustained_lc = a.rate if a.rate is not None else 0.0
        fails_lc = a.above if a.above is not None else math.inf
        sustained_sb = b.rate if b.rate is not None else 0.0
        values = {
            "lc": exact(sustained_lc),
            "lc_fails": exact(fails_lc if math.isfinite(fails_lc) else 1e12),
            "sb": exact(sustained_sb),
        }

        def decide(v: Mapping[str, float]) -> Verdict:
            return _three_way(
                v["lc"],
                v["lc_fails"] <= T.QPS_CLAIMED and v["sb"] >= T.QPS_CLAIMED,
                v["lc"] >= T.QPS_CLAIMED,
            )

        def bounds(c: Any) -> str:
            if c.rate is None:
                return f"none of the rates (fails at {c.below_all:g} runs/s)"
            above = f", fails at {c.above:g}" if c.above is not None else " (the highest tried)"
            return f"{c.rate:g} runs/s{above}"

        measured = f"{lc} sustains {bounds(a)}; {sb} {bounds(b)}"
        # CPU per run grows with the rate: in one process both are compared at one common
        # rate (the summary's and the matrix's figure); more processes have no common level
        common = f.loaded_cores((lc, sb)) if processes == 1 else None
        if common is not None:
            rate, by_engine = common
            cores = [(e, by_engine.get(e)) for e in (lc, sb)]
            where = f"measured at {rate:g} runs/s, the highest rate both sustained"
        else:
            cores = [(e, c.cores_for(T.QPS_CLAIMED)) for e, c in ((lc, a), (sb, b))]
            where = "each measured at its own capacity"
        cores_text = ", ".join(
            f"{e} {interval_text(k, lambda v: f'{v:.2f}')}" for e, k in cores if k is not None
        )
        if cores_text:
            measured += f"; cores per {T.QPS_CLAIMED:.0f} runs/s ({where}): {cores_text}"
        if a.contended or b.contended:
            measured += " (other processes loaded the machine during these levels)"
        label = f"{processes} process{'es' if processes > 1 else ''}"
        parts.append(Part(label, measured, judge(values, decide)))
    return tuple(parts)


def debug_engine(f: Facts, side: Side | None) -> str | None:
    if side is None:
        return None
    for engine in (side.production, side.default):
        if engine and engine in f.debug_recall:
            return engine
    return None


def claim_debugging(f: Facts) -> Claim:
    text = "Hard to debug: verbose=True floods the console and the key facts drown in it."
    rule = (
        "each side's most useful debug mode: recall (share of a run's key facts found), bytes "
        "per fact, and the share of fault scenarios whose failing call it locates. supported: "
        f"LangChain's recall ≤ self-built − {T.DEBUG_RECALL_GAP_SUPPORTED:g}, or bytes per fact "
        f"≥ {T.DEBUG_NOISE_SUPPORTED:g}×, or it locates ≥ "
        f"{fmt.pct(T.DEBUG_LOCALISED_GAP_SUPPORTED, decimals=0)} fewer failures; refuted: recall "
        f"≥ self-built − {T.DEBUG_RECALL_GAP_REFUTED:g} and bytes per fact ≤ "
        f"{T.DEBUG_NOISE_REFUTED:g}× and at most "
        f"{fmt.pct(T.DEBUG_LOCALISED_GAP_REFUTED, decimals=0)} fewer located. verbose floods: "
        "bytes per fact of AgentExecutor's verbose=True vs our printed tree; supported ≥ "
        f"{T.DEBUG_NOISE_SUPPORTED:g}×, refuted ≤ {T.DEBUG_NOISE_REFUTED:g}×"
    )
    lc, sb = debug_engine(f, f.langchain), debug_engine(f, f.self_built)
    parts = []
    if lc and sb:
        inputs = {
            "lc": exact(f.debug_recall[lc]),
            "sb": exact(f.debug_recall[sb]),
            "lb": exact(f.debug_bytes_per_fact.get(lc, math.nan)),
            "sbb": exact(f.debug_bytes_per_fact.get(sb, math.nan)),
            "loc_lc": exact(f.debug_localised.get(lc, math.nan)),
            "loc_sb": exact(f.debug_localised.get(sb, math.nan)),
        }
        inputs = {k: v for k, v in inputs.items() if known(v)}

        def decide(v: Mapping[str, float]) -> Verdict:
            noise = v["lb"] / v["sbb"] if "lb" in v and "sbb" in v and v["sbb"] else None
            gap = v["loc_sb"] - v["loc_lc"] if "loc_sb" in v and "loc_lc" in v else None
            supported = (
                v["lc"] <= v["sb"] - T.DEBUG_RECALL_GAP_SUPPORTED
                or (noise is not None and noise >= T.DEBUG_NOISE_SUPPORTED)
                or (gap is not None and gap >= T.DEBUG_LOCALISED_GAP_SUPPORTED)
            )
            refuted = (
                v["lc"] >= v["sb"] - T.DEBUG_RECALL_GAP_REFUTED
                and (noise is None or noise <= T.DEBUG_NOISE_REFUTED)
                and (gap is None or gap <= T.DEBUG_LOCALISED_GAP_REFUTED)
            )
            return _three_way(v["lc"], supported, refuted)

        measured = (
            f"{lc} ({f.debug_mode.get(lc, '?')}) recall {f.debug_recall[lc]:.2f}, "
            f"{sb} ({f.debug_mode.get(sb, '?')}) {f.debug_recall[sb]:.2f}"
        )
        if "lb" in inputs and "sbb" in inputs:
            measured += f"; bytes per fact {inputs['lb'].point:,.0f} vs {inputs['sbb'].point:,.0f}"
        if "loc_lc" in inputs and "loc_sb" in inputs:
            measured += (
                f"; failing call located in {fmt.pct(inputs['loc_lc'].point, decimals=0)} vs "
                f"{fmt.pct(inputs['loc_sb'].point, decimals=0)} of the fault scenarios"
            )
        parts.append(Part("hard to debug", measured, judge(inputs, decide)))
    verbose = _mode_bytes_per_fact(f, "verbose", "langchain")
    tree = _mode_bytes_per_fact(f, "tree", "scheduler")
    if verbose and tree:
        (v_engine, v_bpf), (t_engine, t_bpf) = verbose, tree
        noise = exact(v_bpf / t_bpf)

        def decide_noise(v: Mapping[str, float]) -> Verdict:
            x = v["noise"]
            return _three_way(x, x >= T.DEBUG_NOISE_SUPPORTED, x <= T.DEBUG_NOISE_REFUTED)

        parts.append(
            Part(
                "verbose floods",
                f"{v_engine} verbose=True {v_bpf:,.0f} bytes per fact, {t_engine}'s printed tree "
                f"{t_bpf:,.0f} ({fmt.ratio(noise.point)})",
                judge({"noise": noise}, decide_noise),
            )
        )
    return Claim("debugging", text, rule, tuple(parts), "debuggability not measured")


def _mode_bytes_per_fact(f: Facts, mode: str, family: str) -> tuple[str, float] | None:
    """The first engine of ``family`` in this run with debug mode ``mode``: its bytes/fact."""
    modes = f.debug_modes
    if modes is None or modes.empty:
        return None
    mine = [e for e in f.engines if e in REGISTRY and REGISTRY[e].family == family]
    rows = modes[
        (modes["mode"] == mode) & modes["bytes_per_fact"].notna() & modes["engine"].isin(mine)
    ]
    if rows.empty:
        return None
    row = rows.iloc[0]
    return str(row["engine"]), float(row["bytes_per_fact"])


def catalogue_engines(family: str, facts: Mapping[str, object]) -> list[str]:
    """The engines of ``family`` in a catalogue fact (``facts``), its representative first."""
    mine = [e for e in facts if e in REGISTRY and REGISTRY[e].family == family]
    lead = REPRESENTATIVE.get(family)
    return sorted(mine, key=lambda e: (e != lead, list(REGISTRY).index(e)))


def _shared_statements(f: Facts, engine: str, other: str) -> tuple[int, int, int]:
    """(statements of ``engine``, of ``other``, customisations) over the cells both do."""
    a, b = f.catalogue_statements.get(engine, {}), f.catalogue_statements.get(other, {})
    both = sorted(set(a) & set(b))
    return sum(a[k] for k in both), sum(b[k] for k in both), len(both)


def claim_inflexible(f: Facts) -> Claim:
    text = "Inflexible: deep customisation means patching framework source."
    rule = (
        "the customisation catalogue: each customisation written on the engine with its "
        "public, documented API and proved by its effect against the mock; the share a "
        "LangChain engine does only with private API, subclassing of internals or "
        "monkeypatching (declared per cell, checked against its source), or not at all (not "
        f"possible, or failing its check). supported: ≥ {fmt.pct(T.INFLEXIBLE_SUPPORTED, decimals=0)}; "
        "refuted: none (every customisation with public API); otherwise partly. The statements "
        "the cells need beyond the plain agent, LangChain ÷ self-built over the customisations "
        "both do, are shown beside"
    )
    ours = next(iter(catalogue_engines("scheduler", f.catalogue)), None)
    parts = []
    for engine in catalogue_engines("langchain", f.catalogue):
        s = f.catalogue[engine]
        if not s["cells"]:
            continue
        share = exact((s["cells"] - s["public"]) / s["cells"])

        def decide(v: Mapping[str, float]) -> Verdict:
            x = v["share"]
            return _three_way(x, x >= T.INFLEXIBLE_SUPPORTED, x <= 0.0)

        failing = s["cells"] - s["works"] - s["impossible"]
        measured = (
            f"{s['public']}/{s['cells']} customisations with public API only "
            f"({s['internals']} need internals, {s['impossible']} not possible, "
            f"{failing} failing their check)"
        )
        if ours is not None:
            mine, theirs, n = _shared_statements(f, engine, ours)
            if n:
                measured += (
                    f"; {mine} statements beyond the plain agent for the {n} both do, "
                    f"{ours} {theirs} ({fmt.ratio(mine / max(theirs, 1), digits=2)})"
                )
        parts.append(Part(engine, measured, judge({"share": share}, decide)))
    return Claim(
        "inflexible", text, rule, tuple(parts), "needs the catalogue (schedbench catalogue)"
    )


def claim_false_simplicity(f: Facts) -> Claim:
    text = (
        "False simplicity: little code for simple cases, more than hand-written for complex "
        "ones (memory, several tools, a custom stop condition)."
    )
    rule = (
        "statements of the whole program a user writes (imports not counted, formatting-"
        "invariant), each passing its test against its scenario: the simplest agent (one tool) "
        "and the article's complex one (conversation memory, three tools, a custom stop "
        "condition), LangChain engine vs our scheduler. supported: LangChain needs fewer for "
        "the simple agent and more for the complex one (the gap reverses); refuted: fewer in "
        "both; otherwise partly"
    )
    both = {e: v for e, v in f.simplicity.items() if "simple" in v and "complex" in v}
    ours = next(iter(catalogue_engines("scheduler", both)), None)
    parts = []
    for engine in catalogue_engines("langchain", both) if ours else ():
        mine, theirs = both[engine], both[ours]  # type: ignore[index]
        inputs = {
            "lc_simple": exact(mine["simple"]),
            "lc_complex": exact(mine["complex"]),
            "sb_simple": exact(theirs["simple"]),
            "sb_complex": exact(theirs["complex"]),
        }

        def decide(v: Mapping[str, float]) -> Verdict:
            fewer_simple = v["lc_simple"] < v["sb_simple"]
            if fewer_simple and v["lc_complex"] > v["sb_complex"]:
                return "supported"
            if fewer_simple and v["lc_complex"] < v["sb_complex"]:
                return "refuted"
            return "partly"

        measured = (
            f"simple agent {mine['simple']} statements vs {ours} {theirs['simple']}; complex "
            f"agent {mine['complex']} vs {theirs['complex']} "
            f"({fmt.signed(mine['simple'] - theirs['simple'], fmt.count)} → "
            f"{fmt.signed(mine['complex'] - theirs['complex'], fmt.count)})"
        )
        parts.append(Part(engine, measured, judge(inputs, decide)))
    why = "needs the false-simplicity programs (schedbench catalogue)"
    if f.simplicity_failing:
        why += "; failing their test: " + ", ".join(f.simplicity_failing)
    return Claim("false_simplicity", text, rule, tuple(parts), why)


def _switch_text(switch: ProviderSwitch, *, named: bool = False) -> str:
    ok, n = switch.as_expected
    text = (
        f"{switch.engine + ' ' if named else ''}→ {switch.provider}: the chat model alone "
        f"({switch.statements:,} statements) {ok}/{n} scenarios as expected"
    )
    if not switch.works and switch.note:
        text += f" ({switch.note})"
    if switch.fixed_statements is not None:
        works = "works" if switch.fixed_works else "does not work"
        text += f"; with the fix ({switch.fixed_statements:,} statements) it {works}"
        if switch.fixed_note:
            text += f" ({switch.fixed_note})"
    return text


def _self_built_beside(engine: str, names: Mapping[str, object]) -> str | None:
    """Among ``names``: our scheduler in ``engine``'s streaming mode, its counterpart first."""
    pair = counterpart(engine)
    if pair is not None and pair.other in names:
        return pair.other
    streams = REGISTRY[engine].streams
    return next(
        (
            n
            for n in names
            if n in REGISTRY and REGISTRY[n].role == "self-built" and REGISTRY[n].streams == streams
        ),
        None,
    )


def _beside(f: Facts, engine: str) -> ProviderSwitch | None:
    """Our scheduler's switch in the same streaming mode as ``engine``."""
    name = _self_built_beside(engine, f.provider_switches)
    return None if name is None else f.provider_switches[name]


def _decide_switch(v: Mapping[str, float]) -> Verdict:
    if v["works"] and v["statements"] <= T.SWITCH_STATEMENTS:
        return "supported"
    working = [v["statements"]] if v["works"] else []
    if v["fixed_works"]:
        working.append(v["fixed_statements"])
    if working and min(working) <= T.SWITCH_REWRITE:
        return "partly"
    return "refuted"


def claim_multimodel(f: Facts) -> Claim:
    text = (
        'Multi-model support (a strength): "one code base across OpenAI, Anthropic and open '
        'models".'
    )
    scenarios = ", ".join(f.switch_scenarios) or "its scenarios"
    rule = (
        "each LangChain engine switched from OpenAI to Anthropic's Messages API and run on "
        f"{scenarios} against the mock (schedbench multimodel). supported: changing its chat "
        f"model alone (≤ {T.SWITCH_STATEMENTS} statements) is enough for every scenario to end "
        "as the benchmark expects; partly: it works only after more code, ≤ "
        f"{T.SWITCH_REWRITE} statements in all; refuted: it does not work, or needs more (a "
        "rewrite). Statements: an ast diff of the provider-specific code against the OpenAI "
        "code it replaces. Not measured for an engine whose OpenAI run fails. Our scheduler "
        "is shown beside each part (same streaming mode), not judged"
    )
    parts = []
    for engine, switch in f.provider_switches.items():
        known_engine = REGISTRY.get(engine)
        if known_engine is None or known_engine.family != "langchain":
            continue
        measured = _switch_text(switch)
        beside = _beside(f, engine)
        if beside is not None:
            measured += f"; beside it, {_switch_text(beside, named=True)}"
        if not switch.baseline_works:
            judgement = judge({}, _decide_switch)
            measured = f"{engine} does not work on OpenAI either: the check is void ({measured})"
        else:
            inputs = {
                "works": exact(float(switch.works)),
                "statements": exact(switch.statements),
                "fixed_works": exact(float(bool(switch.fixed_works))),
                "fixed_statements": exact(switch.fixed_statements or 0),
            }
            judgement = judge(inputs, _decide_switch)
        margin = f"supported up to {T.SWITCH_STATEMENTS}, a rewrite above {T.SWITCH_REWRITE}"
        parts.append(Part(engine, measured, judgement, margin))
    return Claim("multimodel", text, rule, tuple(parts), "multi-model check not run")


def _probed_self_built(f: Facts, engine: str) -> str | None:
    """Our scheduler in ``engine``'s streaming mode among the probed engines."""
    return _self_built_beside(engine, f.framework_calls)


def claim_over_abstraction(f: Facts) -> Claim:
    text = "Over-abstraction: one line of code hides ~100 lines of framework logic."
    rule = (
        "the profiling probe counts the Python function calls a run executes, by package: the "
        "framework's own calls per LLM step (LangChain's packages, or our scheduler's; the "
        "provider SDK, httpx, pydantic and the standard library are left out, a hand-written "
        "loop pays them too), geometric mean over the happy-path scenarios, LangChain engine "
        "minus our scheduler in the same streaming mode. A call runs at least one line. "
        f"supported: ≥ {T.ABSTRACTION_SUPPORTED} more calls per step; refuted: ≤ "
        f"{T.ABSTRACTION_REFUTED} more; otherwise partly. Call counts are deterministic "
        "(exact); the stack depth to the HTTP send is shown beside"
    )
    parts = []
    for engine, calls in f.framework_calls.items():
        spec = REGISTRY.get(engine)
        if spec is None or spec.family != "langchain":
            continue
        ours = _probed_self_built(f, engine)
        if ours is None:
            continue
        # rounded: a geometric mean of whole counts carries float noise past the threshold
        excess = exact(round(calls.point - f.framework_calls[ours].point, 6))

        def decide(v: Mapping[str, float]) -> Verdict:
            x = v["excess"]
            return _three_way(x, x >= T.ABSTRACTION_SUPPORTED, x <= T.ABSTRACTION_REFUTED)

        measured = (
            f"{fmt.count(round(calls.point))} framework calls per LLM step vs {ours} "
            f"{fmt.count(round(f.framework_calls[ours].point))} "
            f"({fmt.signed(round(excess.point), fmt.count)})"
        )
        depth, depth_ours = f.send_depth.get(engine), f.send_depth.get(ours)
        if depth is not None and depth_ours is not None:
            measured += f"; {depth:.0f} frames to the HTTP send vs {depth_ours:.0f}"
        parts.append(Part(engine, measured, judge({"excess": excess}, decide)))
    return Claim(
        "over_abstraction",
        text,
        rule,
        tuple(parts),
        "needs the profiling probe (schedbench probe) of a LangChain engine and our scheduler",
    )


def claim_versions(f: Facts) -> Claim:
    text = "Unstable versions: breaking changes between releases."
    rule = (
        "the reference agent written as each LangChain line's docs wrote it, run unchanged on "
        "every newer line measured, each a fresh install of that line (the upgrade direction "
        "of the version matrix). Per line the code was written for: supported when it fails "
        "on a newer line (a breaking change; the measured fix, and whether a deprecation "
        "warning of the line before named what broke, are shown); partly when it runs on every newer line but "
        "warns of deprecations; refuted when it runs on every newer line with no deprecation "
        "warning. Code that does not run on its own line is left out. Lines combine as "
        "everywhere. Releases within a line are not measured"
    )
    measured_lines = [r.line for r in f.versions if not r.error]
    newest = measured_lines[-1] if measured_lines else None
    parts = []
    for history in upgrade_histories(f.versions):
        own = history.on(history.written_for)
        if not history.newer or (own is not None and not own.ran):
            continue
        broken = history.first_break
        warned = sum(len(c.deprecations) for c in history.newer)

        def decide(v: Mapping[str, float]) -> Verdict:
            if v["broken"]:
                return "supported"
            return "partly" if v["warns"] else "refuted"

        if broken is not None:
            before = history.before_break
            measured = f"fails on {broken.run_on} ({first_line(broken.error, 120)})"
            if before is not None:
                measured += f" after {before.deprecations_text} on {before.run_on}"
                measured += "" if history.announced else " (none naming what broke)"
            fix = broken.fix
            measured += f"; fix: {fix.summary}" if fix is not None else "; no fix declared"
        else:
            measured = (
                f"runs unchanged up to {history.newer[-1].run_on}, with {warned:,} deprecation "
                "warnings"
            )
        inputs = {"broken": exact(float(broken is not None)), "warns": exact(float(warned > 0))}
        label = f"LangChain {history.written_for} code → {newest}"
        parts.append(Part(label, measured, judge(inputs, decide)))
    why_not = "needs the LangChain version matrix (code of an older line run on a newer one)"
    if any(r.backport is not None for r in f.versions):
        why_not = (
            "not measured in the upgrade direction: this run's versions.json is a legacy table "
            "(today's baseline back-ported to older lines), which does not show whether code "
            "written for a line runs on a newer one"
        )
    return Claim("versions", text, rule, tuple(parts), why_not)


CLAIM_RULES: tuple[Callable[[Facts], Claim], ...] = (
    claim_overhead,
    claim_callbacks,
    claim_tokens,
    claim_streaming,
    claim_production,
    claim_footprint,
    claim_qps,
    claim_debugging,
    claim_inflexible,
    claim_false_simplicity,
    claim_multimodel,
    claim_over_abstraction,
    claim_versions,
)

UNMEASURED_CLAIMS = (
    "Confusing documentation — not measured: no number here could refute it.",
    "Weak prompt management — not measured: no number here could refute it.",
)


def claims_ledger(f: Facts) -> list[Claim]:
    return [rule(f) for rule in CLAIM_RULES]


# ---------------------------------------------------------------------------------------------
# decision matrix


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


def _sides(f: Facts) -> list[Side]:
    return f.sides()


def rate_performance(f: Facts) -> Rating:
    rule = (
        "what the user pays, production configurations: the framework's share of a step with a "
        f"{fmt.ms(REFERENCE_LLM_LATENCY_MS, seconds_from=1000)} LLM call (≤0.1 % ★★★★★, "
        "≤0.5 % ★★★★, ≤1 % ★★★, ≤5 % ★★, above ★) and CPU cores per 100 runs/s (≤0.1 ★★★★★, "
        "≤0.25 ★★★★, ≤0.5 ★★★, ≤1 ★★, above ★); the lower of the two. CPU-bound. The cores "
        "are the load phase's (one process, CPU per run of every rated engine at the highest "
        "rate all of them sustained), the figure the summary quotes; without a load phase, "
        "the zero-latency suite's, a lower bound (no HTTP, no concurrency)"
    )
    engines = {side.label: side.production or side.default for side in _sides(f)}
    loaded = f.loaded_cores([e for e in engines.values() if e])
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


def rate_debuggability(f: Facts) -> Rating:
    rule = (
        "the recall of each side's most useful debug mode (share of a run's key facts found in "
        "its output): ≥0.9 ★★★★★, ≥0.75 ★★★★, ≥0.5 ★★★, ≥0.25 ★★, below ★; one star off when "
        f"its bytes per fact exceed {T.DEBUG_NOISE_FACTOR:g}× the other side's; one star off "
        "when no mode locates the failing call in at least "
        f"{fmt.pct(T.DEBUG_LOCALISED_MIN, decimals=0)} of the fault scenarios"
    )
    engines = {s.label: debug_engine(f, s) for s in _sides(f)}
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


def rate_production(f: Facts) -> Rating:
    rule = (
        "the share of fault scenarios the production configuration ends the way production "
        "needs (each scenario's base outcome): ≥90 % ★★★★★, ≥70 % ★★★★, ≥50 % ★★★, ≥25 % ★★, "
        "below ★; the custom code it needs is shown beside it"
    )
    stars: list[tuple[str, int | None]] = []
    basis: list[str] = []
    n = f.fault_scenarios
    for side in _sides(f):
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
