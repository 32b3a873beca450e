"""The decision matrix and the claims ledger: ratings and verdicts computed by stated rules.

Every rule reads numbers from ``Facts`` (never typed-in conclusions) and states itself in
plain words; the report prints the rule next to the result, and docs/report.md lists them
all. Thresholds live in ``T`` so that a test can push a number across each of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from bench.report.analysis import REFERENCE_LLM_LATENCY_MS, Facts
from bench.report.model import RAW
from bench.results import fmt

Verdict = Literal["supported", "partly", "refuted", "not measured"]


class T:
    """Thresholds of every rule (documented in docs/report.md)."""

    # performance stars: overhead per LLM step as a multiple of the raw loop's
    PERF_BANDS = ((2.0, 5), (5.0, 4), (15.0, 3), (50.0, 2))  # ratio <= x -> stars; else 1
    # debuggability stars: recall of the best debug mode
    DEBUG_BANDS = ((0.9, 5), (0.75, 4), (0.5, 3), (0.25, 2))  # recall >= x -> stars; else 1
    DEBUG_NOISE_FACTOR = 3.0  # one star off when bytes per fact > 3x the other side's
    DEBUG_LOCALISED_MIN = 0.5  # one star off when no mode locates the failing step this often
    # production-readiness stars: share of fault scenarios handled as production needs
    PROD_BANDS = ((0.9, 5), (0.7, 4), (0.5, 3), (0.25, 2))  # share >= x -> stars; else 1
    # development speed (simple) stars: code lines, the larger side as a multiple of the smaller
    LOC_BANDS = ((1.0, 5), (1.5, 4), (3.0, 3), (10.0, 2))  # ratio <= x -> stars; else 1

    # ledger
    OVERHEAD_RATIO_SUPPORTED = 2.0  # LangChain / self-built overhead per step
    OVERHEAD_RATIO_REFUTED = 1.25
    OVERHEAD_SHARE_SIGNIFICANT = 0.01  # of end-to-end time at REFERENCE_LLM_LATENCY_MS
    CALLBACK_RATIO_SUPPORTED = 3.0  # LangChain / self-built CPU per LLM step
    CALLBACK_RATIO_REFUTED = 1.5
    CALLBACK_STREAM_FACTOR = 1.5  # streaming AgentExecutor / its non-streaming twin
    TOKENS_PER_ROUND_CLAIMED = 200.0
    TOKENS_PER_ROUND_MIN = 100.0  # an engine "adds ~200" when it adds at least half of it
    TTFT_RATIO_SUPPORTED = 2.0  # LangChain / self-built time to first token
    TTFT_RATIO_REFUTED = 1.25
    REFERENCE_TTFT_MS = 300.0  # a hosted model's time to first token
    TTFT_SHARE_SIGNIFICANT = 0.01  # the extra TTFT must be >= 1 % of REFERENCE_TTFT_MS
    TTFT_SHARE_NEGLIGIBLE = 0.001  # under 0.1 % of it (0.3 ms) the difference is noise
    FAULT_GAP_SUPPORTED = 0.25  # self-built handled share - LangChain handled share
    FAULT_GAP_REFUTED = 0.05
    MODULES_CLAIMED = 50
    LINES_CLAIMED = 400
    LINES_TOLERANCE = 1.5  # "~400 lines" holds up to 600
    QPS_CLAIMED = 100.0
    QPS_MARGIN = 0.2  # within ±20 % of 100 runs/s is "about 100": neither side of the claim
    DEBUG_RECALL_GAP_SUPPORTED = 0.2
    DEBUG_RECALL_GAP_REFUTED = 0.05
    DEBUG_NOISE_SUPPORTED = 3.0  # bytes per fact, LangChain / self-built
    DEBUG_NOISE_REFUTED = 1.5
    DEBUG_LOCALISED_GAP_SUPPORTED = 0.5  # share of failures located, self-built - LangChain
    DEBUG_LOCALISED_GAP_REFUTED = 0.1
    MIN_STEP_MS = 0.01  # floor for denominators (ms)


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


# ---------------------------------------------------------------------------------------------
# decision matrix


@dataclass(frozen=True)
class Rating:
    dimension: str
    article: tuple[int, int]  # (LangChain, self-built) stars in the article
    langchain: int | None  # None: not measured
    self_built: int | None
    basis: str  # the measured numbers
    rule: str


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


def _get(d: dict[str, float], key: str | None) -> float | None:
    if key is None:
        return None
    v = d.get(key)
    return v if v is not None and math.isfinite(v) else None


def rate_performance(f: Facts) -> Rating:
    rule = (
        "stars from overhead per LLM step as a multiple of the raw loop's: "
        "≤2× ★★★★★, ≤5× ★★★★, ≤15× ★★★, ≤50× ★★, above ★"
    )
    raw = _get(f.step_ms, RAW)
    lc, sb = _get(f.step_ms, f.langchain), _get(f.step_ms, f.self_built)
    if raw is None or (lc is None and sb is None):
        return Rating("performance", ARTICLE_MATRIX["performance"], None, None, "no data", rule)
    raw = max(raw, T.MIN_STEP_MS)

    def stars(v: float | None) -> int | None:
        return None if v is None else _band_le(v / raw, T.PERF_BANDS)

    basis = (
        f"{f.langchain}: {fmt.ms(lc)}/step ({fmt.ratio(lc / raw if lc else None)} raw); "
        f"{f.self_built}: {fmt.ms(sb)}/step ({fmt.ratio(sb / raw if sb else None)} raw); "
        f"raw {fmt.ms(raw)}/step"
    )
    others = [
        (e, _band_le(v / raw, T.PERF_BANDS))
        for e, v in f.step_ms.items()
        if e in f.langchain_engines and e != f.langchain
    ]
    if others:
        basis += "; other LangChain engines: " + ", ".join(f"{e} {s}★" for e, s in others)
    return Rating("performance", ARTICLE_MATRIX["performance"], stars(lc), stars(sb), basis, rule)


def rate_debuggability(f: Facts) -> Rating:
    rule = (
        "stars from the recall of each side's most useful debug mode (share of the key facts "
        "of a run found in its output; the mode with the fewest bytes per fact among those "
        "within 0.05 of the best recall): ≥0.9 ★★★★★, ≥0.75 ★★★★, ≥0.5 ★★★, ≥0.25 ★★, below ★; "
        f"one star off when its bytes per fact exceed {T.DEBUG_NOISE_FACTOR:g}× the other "
        f"side's; one star off when no mode locates the failing step in at least "
        f"{fmt.pct(T.DEBUG_LOCALISED_MIN, decimals=0)} of the fault scenarios"
    )
    lc, sb = _get(f.debug_recall, f.langchain), _get(f.debug_recall, f.self_built)
    if lc is None and sb is None:
        return Rating("debuggability", ARTICLE_MATRIX["debuggability"], None, None, "no data", rule)
    lb, sbb = _get(f.debug_bytes_per_fact, f.langchain), _get(f.debug_bytes_per_fact, f.self_built)

    def stars(
        engine: str | None, recall: float | None, mine: float | None, other: float | None
    ) -> int | None:
        if recall is None:
            return None
        s = _band_ge(recall, T.DEBUG_BANDS)
        if mine is not None and other is not None and mine > T.DEBUG_NOISE_FACTOR * other:
            s -= 1
        located = _get(f.debug_localised, engine)
        if located is not None and located < T.DEBUG_LOCALISED_MIN:
            s -= 1
        return max(1, s)

    def side(engine: str | None, recall: float | None, bpf: float | None) -> str:
        mode = f.debug_mode.get(engine or "", "?")
        bpf_text = "n/a" if bpf is None else f"{bpf:,.0f}"
        recall_text = "n/a" if recall is None else f"{recall:.2f}"
        located = _get(f.debug_localised, engine)
        loc_text = fmt.pct(located, decimals=0, missing="n/a")
        return (
            f"{engine} ({mode}): recall {recall_text}, {bpf_text} bytes/fact, failing step "
            f"located in {loc_text} of fault scenarios (best mode)"
        )

    basis = side(f.langchain, lc, lb) + "; " + side(f.self_built, sb, sbb)
    return Rating(
        "debuggability",
        ARTICLE_MATRIX["debuggability"],
        stars(f.langchain, lc, lb, sbb),
        stars(f.self_built, sb, sbb, lb),
        basis,
        rule,
    )


def rate_production(f: Facts) -> Rating:
    rule = (
        "stars from the share of fault scenarios (429, timeouts, flaky and broken tools, ...) "
        "an engine ends the way a production agent should (the scenario's base expectation): "
        "≥90 % ★★★★★, ≥70 % ★★★★, ≥50 % ★★★, ≥25 % ★★, below ★"
    )
    lc, sb = _get(f.fault_handled, f.langchain), _get(f.fault_handled, f.self_built)
    if lc is None and sb is None:
        return Rating(
            "production readiness",
            ARTICLE_MATRIX["production readiness"],
            None,
            None,
            "no fault scenarios in this run",
            rule,
        )

    def stars(v: float | None) -> int | None:
        return None if v is None else _band_ge(v, T.PROD_BANDS)

    n = f.fault_scenarios
    basis = (
        f"{f.langchain}: {_share_of(lc, n)}; {f.self_built}: {_share_of(sb, n)} fault scenarios "
        "handled"
    )
    return Rating(
        "production readiness",
        ARTICLE_MATRIX["production readiness"],
        stars(lc),
        stars(sb),
        basis,
        rule,
    )


def _share_of(share: float | None, n: int) -> str:
    if share is None:
        return "n/a"
    return f"{round(share * n)}/{n}" if n else fmt.pct(share)


def rate_dev_speed_simple(f: Facts) -> Rating:
    rule = (
        "PROXY — code lines you own to get a working tool-calling agent: LangChain = the "
        "langchain_baseline/ package (all agent flavours), self-built = the scheduler/ package "
        "(which you must write and maintain). The smaller side gets ★★★★★, the larger by its "
        "multiple of the smaller: ≤1.5× ★★★★, ≤3× ★★★, ≤10× ★★, above ★"
    )
    lc, sb = f.baseline_lines, f.scheduler_lines
    dim = "development speed, simple cases"
    if not lc or not sb:
        return Rating(dim, ARTICLE_MATRIX[dim], None, None, "code sizes not measured", rule)
    small = min(lc, sb)
    basis = f"langchain_baseline/ {lc:,} lines; scheduler/ {sb:,} lines (code lines, measured now)"
    return Rating(
        dim,
        ARTICLE_MATRIX[dim],
        _band_le(lc / small, T.LOC_BANDS),
        _band_le(sb / small, T.LOC_BANDS),
        basis,
        rule,
    )


def _not_measured(dimension: str, why: str) -> Rating:
    return Rating(dimension, ARTICLE_MATRIX[dimension], None, None, why, "not measured")


def decision_matrix(f: Facts) -> list[Rating]:
    return [
        rate_dev_speed_simple(f),
        _not_measured(
            "development speed, complex cases",
            "needs people building features over weeks; a benchmark cannot time that",
        ),
        rate_debuggability(f),
        rate_performance(f),
        _not_measured(
            "maintainability", "needs change history over time (upgrades, bug rates); not measured"
        ),
        _not_measured(
            "flexibility", "would need a catalogue of customisations tried on each; not measured"
        ),
        _not_measured("learning curve", "needs people learning each; not measured"),
        rate_production(f),
    ]


# ---------------------------------------------------------------------------------------------
# claims ledger


@dataclass(frozen=True)
class Claim:
    key: str
    claim: str  # what the article says
    measured: str  # what we measured, with the numbers
    rule: str
    verdict: Verdict


def _verdict(supported: bool, refuted: bool) -> Verdict:
    if supported:
        return "supported"
    if refuted:
        return "refuted"
    return "partly"


def claim_overhead(f: Facts) -> Claim:
    text = "Performance overhead: serialisation and long callback chains make LangChain slow."
    rule = (
        f"ratio = {f.langchain} ÷ {f.self_built} framework overhead per LLM step; share = "
        f"{f.langchain}'s overhead as a share of a step with a {fmt.ms(REFERENCE_LLM_LATENCY_MS)} "
        f"LLM call. supported: ratio ≥ {T.OVERHEAD_RATIO_SUPPORTED:g} and share ≥ "
        f"{fmt.pct(T.OVERHEAD_SHARE_SIGNIFICANT)}; refuted: ratio < "
        f"{T.OVERHEAD_RATIO_REFUTED:g}; otherwise partly (e.g. slower, but small next to the LLM)"
    )
    lc, sb = _get(f.step_ms, f.langchain), _get(f.step_ms, f.self_built)
    if lc is None or sb is None:
        return Claim("overhead", text, "overhead per step not measured", rule, "not measured")
    ratio = lc / max(sb, T.MIN_STEP_MS)
    share = lc / (lc + REFERENCE_LLM_LATENCY_MS)
    measured = (
        f"{f.langchain} {fmt.ms(lc)} vs {f.self_built} {fmt.ms(sb)} per LLM step "
        f"({fmt.ratio(ratio)}); at {fmt.ms(REFERENCE_LLM_LATENCY_MS)} per LLM call that is "
        f"{fmt.pct(share)} of end-to-end time"
    )
    verdict = _verdict(
        ratio >= T.OVERHEAD_RATIO_SUPPORTED and share >= T.OVERHEAD_SHARE_SIGNIFICANT,
        ratio < T.OVERHEAD_RATIO_REFUTED,
    )
    return Claim("overhead", text, measured, rule, verdict)


def claim_callbacks(f: Facts) -> Claim:
    text = "Long callback chains: each step passes through layers of handlers."
    rule = (
        f"layers = CPU time per LLM step, {f.langchain} ÷ {f.self_built} (both make the same "
        "HTTP calls and run the same tools, so the difference is the layers in between); "
        "stream = streaming AgentExecutor ÷ its non-streaming twin, overhead per step (every "
        f"streamed chunk runs the callback chain). supported: layers ≥ "
        f"{T.CALLBACK_RATIO_SUPPORTED:g} and (stream ≥ {T.CALLBACK_STREAM_FACTOR:g} or not "
        f"measured); refuted: layers < {T.CALLBACK_RATIO_REFUTED:g}; otherwise partly"
    )
    lc, sb = _get(f.step_cpu_ms, f.langchain), _get(f.step_cpu_ms, f.self_built)
    if lc is None or sb is None:
        return Claim("callbacks", text, "CPU per step not measured", rule, "not measured")
    layers = lc / max(sb, T.MIN_STEP_MS)
    stream_on = _get(f.step_ms, "lc-agentexecutor")
    stream_off = _get(f.step_ms, "lc-agentexecutor-nostream")
    stream = stream_on / stream_off if stream_on and stream_off else None
    measured = (
        f"CPU per LLM step: {f.langchain} {fmt.ms(lc)}, {f.self_built} {fmt.ms(sb)} "
        f"({fmt.ratio(layers)})"
    )
    if stream is not None:
        measured += f"; streaming AgentExecutor costs {fmt.ratio(stream)} its non-streaming twin"
    supported = layers >= T.CALLBACK_RATIO_SUPPORTED and (
        stream is None or stream >= T.CALLBACK_STREAM_FACTOR
    )
    verdict = _verdict(supported, layers < T.CALLBACK_RATIO_REFUTED)
    return Claim("callbacks", text, measured, rule, verdict)


def claim_tokens(f: Facts) -> Claim:
    text = (
        "LangChain adds ~200 tokens of framework overhead per round; a self-built loop almost none."
    )
    rule = (
        "per LangChain engine: prompt tokens per request minus the raw loop's on the same "
        f"scenarios. An engine adds ~200 when it adds ≥ {T.TOKENS_PER_ROUND_MIN:.0f}. "
        "supported: every LangChain engine does; refuted: none does; otherwise partly"
    )
    lcs = {e: v for e, v in f.token_overhead.items() if e in f.langchain_engines}
    if not lcs:
        return Claim("tokens", text, "token overhead not measured", rule, "not measured")
    big = [e for e, v in lcs.items() if v >= T.TOKENS_PER_ROUND_MIN]
    parts = [f"{e} {fmt.signed(v, fmt.count)}" for e, v in lcs.items()]
    sb = _get(f.token_overhead, f.self_built)
    if sb is not None:
        parts.append(f"{f.self_built} {fmt.signed(sb, fmt.count)}")
    measured = "tokens per request vs raw: " + ", ".join(parts)
    return Claim("tokens", text, measured, rule, _verdict(len(big) == len(lcs), not big))


def claim_streaming(f: Facts) -> Claim:
    text = "Poor streaming: streams pass through layers of interception, adding latency."
    rule = (
        "what each engine adds to the time to first token of the final answer (its median "
        "TTFT minus the raw loop's; without raw, minus the part the mock scripts): ratio = "
        "LangChain ÷ "
        "scheduler-stream (else scheduler), added = the difference. supported: ratio ≥ "
        f"{T.TTFT_RATIO_SUPPORTED:g} and added ≥ {fmt.pct(T.TTFT_SHARE_SIGNIFICANT)} of a "
        f"{fmt.ms(T.REFERENCE_TTFT_MS)} hosted-model TTFT; refuted: ratio < "
        f"{T.TTFT_RATIO_REFUTED:g} or added < {fmt.pct(T.TTFT_SHARE_NEGLIGIBLE)} of it; "
        "otherwise partly"
    )
    extra = f.ttft_extra_ms or f.ttft_ms
    self_name = "scheduler-stream" if "scheduler-stream" in extra else f.self_built
    sb = _get(extra, self_name)
    lcs = {e: v for e, v in extra.items() if e in f.langchain_engines}
    if sb is None or not lcs:
        return Claim("streaming", text, "time to first token not measured", rule, "not measured")
    engine = f.langchain if f.langchain in lcs else min(lcs, key=lcs.get)
    lc = lcs[engine]
    ratio = max(lc, 0.0) / max(sb, T.MIN_STEP_MS)
    added = lc - sb
    parts = [f"{e} {fmt.signed(v)}" for e, v in lcs.items()]
    measured = (
        f"added to TTFT: {self_name} {fmt.signed(sb)}; "
        + ", ".join(parts)
        + f" ({engine}: {fmt.ratio(ratio)}, {fmt.signed(added)})"
    )
    if engine in f.ttft_ms and self_name in f.ttft_ms:
        measured += f"; TTFT {fmt.ms(f.ttft_ms[engine])} vs {fmt.ms(f.ttft_ms[self_name])}"
    supported = (
        ratio >= T.TTFT_RATIO_SUPPORTED and added >= T.TTFT_SHARE_SIGNIFICANT * T.REFERENCE_TTFT_MS
    )
    refuted = ratio < T.TTFT_RATIO_REFUTED or added < T.TTFT_SHARE_NEGLIGIBLE * T.REFERENCE_TTFT_MS
    return Claim("streaming", text, measured, rule, _verdict(supported, refuted))


def claim_production(f: Facts) -> Claim:
    text = "Not production-ready: no built-in monitoring, circuit breaking or retries."
    rule = (
        "gap = self-built minus LangChain share of fault scenarios handled as production needs "
        f"(fault matrix). supported: gap ≥ {T.FAULT_GAP_SUPPORTED:.2f}; refuted: gap ≤ "
        f"{T.FAULT_GAP_REFUTED:.2f}; otherwise partly"
    )
    lc, sb = _get(f.fault_handled, f.langchain), _get(f.fault_handled, f.self_built)
    if lc is None or sb is None:
        return Claim("production", text, "fault scenarios not run", rule, "not measured")
    gap = sb - lc
    n = f.fault_scenarios
    parts = [
        f"{e} {_share_of(v, n)}" for e, v in f.fault_handled.items() if e in f.langchain_engines
    ]
    measured = f"fault scenarios handled: {f.self_built} {_share_of(sb, n)}; " + ", ".join(parts)
    for engine in (f.langchain, f.self_built):
        missed = f.fault_missed.get(engine or "")
        if missed:
            measured += f". {engine} not as production needs: " + ", ".join(missed)
    return Claim(
        "production",
        text,
        measured,
        rule,
        _verdict(gap >= T.FAULT_GAP_SUPPORTED, gap <= T.FAULT_GAP_REFUTED),
    )


def claim_footprint(f: Facts) -> Claim:
    text = 'LangChain core "depends on 50+ modules"; the self-built loop is ~400 lines.'
    limit = int(T.LINES_CLAIMED * T.LINES_TOLERANCE)
    rule = (
        f"half A: importing {f.langchain} loads ≥ {T.MODULES_CLAIMED} modules; half B: "
        f"scheduler/ has ≤ {limit} code lines (~{T.LINES_CLAIMED} with 50 % tolerance), "
        "counted at report time. supported: both halves; refuted: neither; otherwise partly"
    )
    mods = _get(f.modules, f.langchain)
    lines = f.scheduler_lines
    if mods is None and lines is None:
        return Claim("footprint", text, "modules and code lines not measured", rule, "not measured")
    parts = []
    a = b = None
    if mods is not None:
        a = mods >= T.MODULES_CLAIMED
        parts.append(f"{f.langchain} loads {mods:,.0f} modules")
        sbm = _get(f.modules, f.self_built)
        if sbm is not None:
            parts.append(f"{f.self_built} {sbm:,.0f}")
    if lines is not None:
        b = lines <= limit
        parts.append(f"scheduler/ is {lines:,} code lines")
        if f.core_loop_lines is not None:
            parts.append(f"its loop ({f.core_loop_path}) {f.core_loop_lines:,}")
    if a is None or b is None:
        verdict: Verdict = "partly" if (a or b) else "refuted"
    else:
        verdict = _verdict(a and b, not a and not b)
    return Claim("footprint", text, "; ".join(parts), rule, verdict)


def claim_qps(f: Facts) -> Claim:
    text = "Production concurrency above 100 QPS needs a custom loop."
    low = T.QPS_CLAIMED * (1 - T.QPS_MARGIN)
    high = T.QPS_CLAIMED * (1 + T.QPS_MARGIN)
    rule = (
        "peak runs/s of one engine process on the zero-latency mock (throughput sweep; else "
        "1000 ÷ CPU ms per run), best LangChain engine vs the self-built one. supported: "
        f"LangChain peaks below {low:.0f} while {f.self_built} reaches {T.QPS_CLAIMED:.0f}; "
        f"refuted: LangChain reaches {high:.0f}; otherwise partly (LangChain tops out at about "
        f"{T.QPS_CLAIMED:.0f}, ±{fmt.pct(T.QPS_MARGIN, decimals=0)}, or neither reaches it)"
    )
    peak = dict(f.peak_rps)
    source = "measured peak"
    if not peak:
        peak = {e: 1000.0 / v for e, v in f.cpu_run_ms.items() if v > 0}
        source = "1000 ÷ CPU ms per run"
    lcs = {e: v for e, v in peak.items() if e in f.langchain_engines}
    sb = _get(peak, f.self_built)
    if not lcs or sb is None:
        return Claim("qps", text, "throughput not measured", rule, "not measured")
    best = max(lcs, key=lcs.get)
    measured = (
        f"{source}: best LangChain {best} {lcs[best]:,.0f} runs/s; {f.self_built} {sb:,.0f} runs/s"
    )
    for engine in (f.langchain, f.self_built):
        cpu = _get(f.cpu_run_ms, engine)
        if cpu is not None:
            measured += (
                f"; {T.QPS_CLAIMED:.0f} QPS of {engine} burns {cpu * T.QPS_CLAIMED / 1000:.2f} "
                "CPU cores"
            )
    lc_best = lcs[best]
    verdict = _verdict(lc_best < low and sb >= T.QPS_CLAIMED, lc_best >= high)
    return Claim("qps", text, measured, rule, verdict)


def claim_debugging(f: Facts) -> Claim:
    text = "Hard to debug: verbose=True floods the console and the key facts drown in it."
    rule = (
        "each side's most useful debug mode: recall (share of key facts found), bytes per "
        "fact, and the share of fault scenarios whose failing step some mode locates. "
        f"supported: LangChain recall ≤ self-built − {T.DEBUG_RECALL_GAP_SUPPORTED:g}, or its "
        f"bytes per fact ≥ {T.DEBUG_NOISE_SUPPORTED:g}× self-built's, or it locates "
        f"≥ {fmt.pct(T.DEBUG_LOCALISED_GAP_SUPPORTED, decimals=0)} fewer failures; refuted: recall ≥ "
        f"self-built − {T.DEBUG_RECALL_GAP_REFUTED:g} and bytes per fact ≤ "
        f"{T.DEBUG_NOISE_REFUTED:g}× and at most {fmt.pct(T.DEBUG_LOCALISED_GAP_REFUTED, decimals=0)} fewer "
        "failures located; otherwise partly"
    )
    lc, sb = _get(f.debug_recall, f.langchain), _get(f.debug_recall, f.self_built)
    lb, sbb = _get(f.debug_bytes_per_fact, f.langchain), _get(f.debug_bytes_per_fact, f.self_built)
    if lc is None or sb is None:
        return Claim("debugging", text, "debuggability not measured", rule, "not measured")
    noise = lb / sbb if lb is not None and sbb else None
    loc_lc, loc_sb = _get(f.debug_localised, f.langchain), _get(f.debug_localised, f.self_built)
    loc_gap = loc_sb - loc_lc if loc_lc is not None and loc_sb is not None else None
    measured = (
        f"{f.langchain} ({f.debug_mode.get(f.langchain or '', '?')}) recall {lc:.2f}; "
        f"{f.self_built} ({f.debug_mode.get(f.self_built or '', '?')}) recall {sb:.2f}"
    )
    if noise is not None:
        measured += f"; bytes per fact {lb:,.0f} vs {sbb:,.0f} ({fmt.ratio(noise)})"
    if loc_gap is not None:
        measured += f"; failing step located in {fmt.pct(loc_lc, decimals=0)} vs {fmt.pct(loc_sb, decimals=0)} of fault scenarios"
    supported = (
        lc <= sb - T.DEBUG_RECALL_GAP_SUPPORTED
        or (noise is not None and noise >= T.DEBUG_NOISE_SUPPORTED)
        or (loc_gap is not None and loc_gap >= T.DEBUG_LOCALISED_GAP_SUPPORTED)
    )
    refuted = (
        lc >= sb - T.DEBUG_RECALL_GAP_REFUTED
        and (noise is None or noise <= T.DEBUG_NOISE_REFUTED)
        and (loc_gap is None or loc_gap <= T.DEBUG_LOCALISED_GAP_REFUTED)
    )
    return Claim("debugging", text, measured, rule, _verdict(supported, refuted))


CLAIM_RULES: tuple[Callable[[Facts], Claim], ...] = (
    claim_overhead,
    claim_callbacks,
    claim_tokens,
    claim_streaming,
    claim_production,
    claim_footprint,
    claim_qps,
    claim_debugging,
)

UNMEASURED_CLAIMS = (
    "Over-abstraction (one line hides ~100 lines of framework logic) — see the module counts "
    "and code sizes, but not measured as such.",
    "Unstable versions (breaking changes between releases) — not measured.",
    "Confusing documentation — not measured.",
    "Inflexible (deep customisation needs patching the framework) — not measured.",
    "Weak prompt management — not measured.",
    "False simplicity (complex agents need more code than hand-written) — not measured.",
)


def claims_ledger(f: Facts) -> list[Claim]:
    return [rule(f) for rule in CLAIM_RULES]
