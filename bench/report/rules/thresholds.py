"""Every threshold of the rules in one table (``T``) and the star-band and verdict helpers."""

from __future__ import annotations

import math

from bench.report.verdicts import Verdict


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
