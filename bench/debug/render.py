"""Small text renderers for debug outputs: two columns side by side, a score line."""

from __future__ import annotations

import re

from bench.debug.score import Score

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
EMPTY = "(no debug output)"


def _wrap(text: str, width: int) -> list[str]:
    """Lines of ``text`` (ANSI stripped, tabs expanded) hard-wrapped to ``width``."""
    out: list[str] = []
    for line in _ANSI.sub("", text).expandtabs(4).splitlines() or [""]:
        line = line.rstrip()
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return out


def side_by_side(left_title: str, left: str, right_title: str, right: str, width: int = 160) -> str:
    """Two outputs in two columns of equal width, separated by `` │ ``, titles on top."""
    col = max((width - 3) // 2, 10)
    a = _wrap(left or EMPTY, col)
    b = _wrap(right or EMPTY, col)
    rows = max(len(a), len(b))
    a += [""] * (rows - len(a))
    b += [""] * (rows - len(b))
    lines = [f"{left_title[:col]:<{col}} │ {right_title[:col]}", f"{'─' * col}─┼─{'─' * col}"]
    lines += [f"{x:<{col}} │ {y}".rstrip() for x, y in zip(a, b, strict=True)]
    return "\n".join(lines)


def score_line(score: Score) -> str:
    """``recall 0.82 (18/22 facts), 1,234 bytes, 40 lines, 69 bytes/fact``."""
    bpf = "–" if score.bytes_per_fact is None else f"{score.bytes_per_fact:,.0f}"
    text = (
        f"recall {score.recall:.2f} ({score.facts_found}/{score.facts_total} facts), "
        f"{score.bytes:,} bytes, {score.lines:,} lines, {bpf} bytes/fact"
    )
    loc = score.localisation
    if loc is not None:
        parts = [] if loc.tool is None else [f"tool {'yes' if loc.tool else 'no'}"]
        parts.append(f"error {'yes' if loc.error else 'no'}")
        parts.append(f"step {'yes' if loc.step else 'no'}")
        text += f"; fault localised: {'yes' if loc.localised else 'no'} ({', '.join(parts)})"
    return text
