"""The profiling probe in the report: the frame of the package chart and two tables.

Functions take the probe's typed rows (``bench.results.rows.ProfileRow``, from
``RunFolder.profile``) and return a frame (``breakdown_frame``, for
``bench.report.charts.package_breakdown``) or a ``Table`` block; every number is computed by
``bench.results.metrics.profile_by_engine`` and formatted by ``bench.results.fmt``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from bench.report.document import Table
from bench.report.frames import order_engines
from bench.results import fmt
from bench.results.metrics import profile_by_engine
from bench.results.rows import ProfileRow

TOP_GROUPS = 3


def _ordered(rows: Sequence[ProfileRow]) -> list[dict[str, Any]]:
    summary = {e["engine"]: e for e in profile_by_engine(rows)}
    return [summary[e] for e in order_engines(list(summary))]


def breakdown_frame(rows: Sequence[ProfileRow], key: str = "shares") -> pd.DataFrame:
    """One row per engine × group: ``engine``, ``group``, ``share`` (0..1). ``key`` picks the
    method: ``shares`` (sampled, the harness counted apart), ``leaf_shares`` (sampled, by the
    innermost frame only) or ``cprofile_shares`` (cProfile's tottime)."""
    records = [
        {"engine": e["engine"], "group": group, "share": share}
        for e in _ordered(rows)
        if e["status"] == "ok"
        for group, share in e[key].items()
    ]
    return pd.DataFrame(records, columns=["engine", "group", "share"])


def _count(value: object) -> str:
    return fmt.count(value)


def _range(value: float, bounds: tuple[float, float], show: Any = _count) -> str:
    low, high = bounds
    if not all(isinstance(b, int | float) and math.isfinite(b) for b in bounds) or low == high:
        return show(value)
    return f"{show(value)} ({show(low)}–{show(high)})"


def _top(shares: dict[str, float]) -> str:
    best = sorted(shares.items(), key=lambda kv: -kv[1])[:TOP_GROUPS]
    return ", ".join(f"{g} {fmt.pct(v)}" for g, v in best)


def _marginal(e: dict[str, Any], name: str) -> str:
    value = e.get(f"marginal_{name}")
    if value is None:
        return fmt.MISSING
    calls = e.get("marginal_llm_calls") or {}
    extra = calls.get("+tool", 0) - calls.get("base", 0) if name == "per_tool_call" else 0
    note = f" (+{extra} LLM call{'s' * (extra != 1)})" if extra else ""
    return fmt.signed(value, fmt.count) + note


def profile_table(rows: Sequence[ProfileRow]) -> Table:
    """Calls per LLM step and per tool call, stack depths, modules and classes crossed."""
    body = []
    for e in _ordered(rows):
        if e["status"] != "ok":
            body.append((e["engine"], e["status"], *[fmt.MISSING] * 8))
            continue
        body.append(
            (
                e["engine"],
                _range(e["calls_per_step"], e["calls_per_step_range"]),
                _marginal(e, "per_tool_call"),
                _marginal(e, "per_step_without_tool"),
                _range(e["send_depth"], e["send_depth_range"]),
                f"{_count(e['send_modules'])} / {_count(e['send_classes'])}",
                _range(e["tool_depth"], e["tool_depth_range"]),
                f"{_count(e['tool_modules'])} / {_count(e['tool_classes'])}",
                fmt.pct(e["callback_runnable_share"]),
                _top(e["shares"]),
            )
        )
    return Table(
        (
            "engine",
            "calls per LLM step",
            "calls per extra tool call",
            "calls per extra step (no tool)",
            "frames to HTTP send",
            "modules / classes",
            "frames to tool body",
            "modules / classes",
            "callbacks + runnables",
            f"top {TOP_GROUPS} packages (time)",
        ),
        tuple(body),
        caption="The profiling probe (schedbench probe): Python calls the engine executes (the "
        "mock and the tool bodies left out) per run ÷ LLM calls, geometric mean over the "
        "happy-path scenarios (range in brackets); extra tool call / step: the difference "
        "between single_tool and the same scenario with one more tool call / one more step. "
        "Frames: Python frames between the engine's execute (the user's ainvoke/run) and the "
        "HTTP send or the tool body, across tasks. Shares: sampled time.",
        numeric=(1, 2, 3, 4, 6, 8),
    )


def distortion_table(rows: Sequence[ProfileRow]) -> Table:
    """What the profilers do to what they measure: slow-down and the shares they report."""
    body = []
    for e in _ordered(rows):
        if e["status"] != "ok" or not math.isfinite(e["ms_per_step"]):
            continue  # not probed, or on the brief plan (no plain and no cProfile runs)
        shares, cprof = e["leaf_shares"], e["cprofile_shares"]
        top = sorted(shares, key=lambda g: -shares[g])[:TOP_GROUPS]
        body.append(
            (
                e["engine"],
                fmt.ms(e["ms_per_step"]),
                fmt.ratio(e["cprofile_factor"]),
                fmt.ratio(e["sampling_factor"]),
                ", ".join(f"{g} {fmt.pct(shares[g])} vs {fmt.pct(cprof.get(g, 0.0))}" for g in top),
                f"{fmt.pct(e['mock_share_sampled'])} vs {fmt.pct(e['mock_share_timed'])}",
                fmt.count(e["samples"]),
            )
        )
    return Table(
        (
            "engine",
            "ms per step (plain)",
            "cProfile slow-down",
            "sampler slow-down",
            "shares: sampled vs cProfile (innermost frame)",
            "mock: sampled vs own clock",
            "samples",
        ),
        tuple(body),
        caption="The engines the report judges (the probe's full plan; the others are "
        "counted and sampled only). Slow-down = profiled wall time per run ÷ plain wall time "
        "per run. The sampler interrupts every 0.5 ms; cProfile hooks every call. The mock's "
        "share by samples and by its own perf_counter is a check of the sampler.",
        numeric=(1, 2, 3, 6),
    )
