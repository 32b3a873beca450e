"""Small text renderers for debug outputs: two columns side by side, a score line, and the
excerpt of an output that the report shows next to its score."""

from __future__ import annotations

import re

from bench.debuggability.localise import LLM_MARKERS
from bench.debuggability.match import fact_found, normalise
from bench.debuggability.score import Score
from bench.debuggability.truth import FINAL, TOOL, Fact, GroundTruth

EXCERPT_BEFORE = 6  # lines shown above the anchor line ...
EXCERPT_AFTER = 3  # ... and below it
EXCERPT_WIDTH = 160  # longer lines are cut, with an ellipsis
EXCERPT_REACH = 60  # how far from the anchor the line naming the failing call is looked for

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
        how = f" by {'+'.join(loc.how)}" if loc.how else ""
        parts = [
            f"call {'yes' if loc.tool else 'no'}",
            f"error {'yes' if loc.error else 'no'}",
            f"position {'yes' + how if loc.position else 'no'}",
        ]
        text += f"; fault localised: {'yes' if loc.localised else 'no'} ({', '.join(parts)})"
    return text


def _anchor(lines: list[str], score: Score, truth: GroundTruth) -> int:
    """The line the excerpt is centred on (see ``excerpt``)."""
    if score.statement is not None and score.statement.line >= 0:
        return score.statement.line
    failure = truth.failure
    wanted = []
    if failure is not None:
        wanted.append(failure.error)
        if failure.tool is not None:
            wanted.append(Fact(TOOL, failure.step, failure.tool))
    wanted += truth.by_kind(FINAL)
    for fact in wanted:
        for n, line in enumerate(lines):
            if fact_found(fact, normalise(line)):
                return n
    return 0


def _naming_line(lines: list[str], at: int, truth: GroundTruth) -> int | None:
    """The nearest line to ``at`` that names the failing call (tool or LLM), above it or
    below (JSON written with sorted keys puts a run's ``name`` after its ``error``)."""
    failure = truth.failure
    if failure is None:
        return None
    if failure.tool is None:
        pattern = LLM_MARKERS
    else:
        pattern = re.compile(rf"(?<![a-z0-9_]){re.escape(failure.tool.casefold())}(?![a-z0-9_])")
    for gap in range(EXCERPT_REACH + 1):
        for n in (at - gap, at + gap):
            if 0 <= n < len(lines) and pattern.search(normalise(lines[n])):
                return n
    return None


def _cut(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= EXCERPT_WIDTH else line[: EXCERPT_WIDTH - 1] + "…"


def excerpt(output: str, score: Score, truth: GroundTruth) -> tuple[int, str]:
    """``(first line, text)``: a few lines of ``output`` around what a reader looks for.

    The anchor is the statement of the failure that decided localisation; else the first
    line that states the error or names the failing tool; for a run without a failure, the
    first line with the final answer; else the first line. When the nearest line that names
    the failing call is outside the window, it is shown too, with ``…`` for the lines left
    out. The line number (1-based) is the excerpt's first; ``(0, "")`` for an empty output.
    """
    if not output:
        return 0, ""
    lines = _ANSI.sub("", output).splitlines()
    at = _anchor(lines, score, truth)
    start = max(0, at - EXCERPT_BEFORE)
    shown = [_cut(line) for line in lines[start : at + EXCERPT_AFTER + 1]]
    end = start + len(shown)
    head = _naming_line(lines, at, truth)
    if head is not None and head < start:
        shown = [_cut(lines[head]), "…", *shown]
        start = head
    elif head is not None and head >= end:
        shown = [*shown, "…", _cut(lines[head])]
    return start + 1, "\n".join(shown)
