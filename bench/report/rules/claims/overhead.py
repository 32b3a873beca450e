"""The performance-overhead claim: LangChain's overhead per step, and whether it matters."""

from __future__ import annotations

from collections.abc import Mapping

from bench.report.analysis import REFERENCE_LLM_LATENCY_MS, breakeven_latency, overhead_share
from bench.report.facts import Facts, known
from bench.report.rules.common import Claim, Part, _pair, latency_text, ms_ci, pct_ci, ratio_ci
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt
from bench.results.stats import Estimate


def claim_overhead(f: Facts) -> Claim:
    text = "Performance overhead: serialisation and long callback chains make LangChain slow."
    rule = (
        "slower: LangChain ÷ self-built framework overhead per LLM step, default with default "
        f"and production with production (geometric mean over the happy-path scenarios, paired "
        "within rounds). "
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
        # the ratio the summary prints too (paired within rounds), judged on its own draws
        r = f.step_ratio(lc, sb)

        def decide(v: Mapping[str, float]) -> Verdict:
            x = v["ratio"]
            return _three_way(x, x >= T.OVERHEAD_RATIO_SUPPORTED, x < T.OVERHEAD_RATIO_REFUTED)

        judgement = judge({"ratio": r}, decide)
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
