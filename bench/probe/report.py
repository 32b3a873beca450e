"""The probe's console table: one line per engine (``schedbench probe`` prints it)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from bench.results import fmt
from bench.results.metrics import profile_by_engine
from bench.results.rows import ProfileRow

TOP_GROUPS = 3


def _num(value: object, digits: int = 0) -> str:
    if not isinstance(value, int | float) or not math.isfinite(value):
        return "–"
    return f"{value:,.{digits}f}"


def top_shares(shares: dict[str, float], n: int = TOP_GROUPS) -> str:
    """``openai 38 %, asyncio 18 %, langchain_core (rest) 15 %``."""
    best = sorted(shares.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{g} {fmt.pct(v)}" for g, v in best)


def console_table(rows: Sequence[ProfileRow]) -> str:
    """A plain-text table of ``profile_by_engine``: calls, depths, top shares."""
    columns = (
        "engine",
        "calls/step",
        "calls/tool call",
        "depth send",
        "depth tool",
        "mods/classes send",
        "callbacks+runnables",
        "top groups (sampled)",
    )
    lines = [columns]
    for e in profile_by_engine(rows):
        if e["status"] != "ok":
            lines.append((e["engine"], e["status"], *[""] * 5, "; ".join(e["errors"])[:80]))
            continue
        lines.append(
            (
                e["engine"],
                _num(e["calls_per_step"]),
                _num(e.get("marginal_per_tool_call")),
                _num(e["send_depth"]),
                _num(e["tool_depth"]),
                f"{_num(e['send_modules'])}/{_num(e['send_classes'])}",
                fmt.pct(e["callback_runnable_share"]),
                top_shares(e["shares"]),
            )
        )
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(columns))]
    return "\n".join(
        "  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )
