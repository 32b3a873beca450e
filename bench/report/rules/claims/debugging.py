"""The hard-to-debug claim: recall, bytes per fact and localisation of the debug modes."""

from __future__ import annotations

import math
from collections.abc import Mapping

from bench.engines.registry import REGISTRY
from bench.report.facts import Facts, exact, known
from bench.report.rules.common import Claim, Part
from bench.report.rules.selection import (
    debug_engine,
)
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt


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
