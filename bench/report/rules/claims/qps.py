"""The >100-QPS claim: the load phase's sustained rates (or the zero-latency peak)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bench.report.facts import Facts, Side, exact, known
from bench.report.rules.common import Claim, Part
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, interval_text, judge


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
