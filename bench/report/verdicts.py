"""Verdicts that hold: decided on the point estimates *and* on every bootstrap resample.

A rule is a function ``decide(values) -> verdict`` of named numbers. ``judge`` evaluates it
on the point estimates and on each resample of the ``Estimate``\\s it reads (resample *i* of
every input together; the inputs are independent samples, so this is a bootstrap of the
verdict). When fewer than ``SETTLED`` of the resamples agree with the point verdict the
judgement is **unsettled**: the data of this run does not decide it, and the report says
which way the resamples lean and which threshold the number straddles.

Two more things every judgement can say:

- **machine dependence** — inputs that are CPU times (``cpu_bound``) are scaled together by
  a factor k, as a slower (k > 1) or faster (k < 1) CPU would scale them; ``cpu_flips``
  holds, for each direction, the k nearest 1 at which the point verdict changes and what it
  becomes (none where it holds from 1/8× to 8×).
  On another machine the same verdict flips where that machine runs this code k× slower;
  its yardstick (a tight loop) is only a rough guide to k (docs/report.md).
- **the deciding margin** — written by the rule itself (how far its number is from the
  threshold, and e.g. at which LLM latency the verdict would flip).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from bench.results.stats import Estimate

Verdict = Literal["supported", "partly", "refuted", "unsettled", "not measured"]
Decide = Callable[[Mapping[str, float]], Verdict]

SETTLED = 0.95  # share of resamples that must agree with the point verdict
CPU_FACTORS = np.geomspace(1 / 8, 8, 193)  # scale factors searched for a CPU flip


@dataclass(frozen=True)
class Judgement:
    """A rule's verdict on this run, with how firmly the data decides it."""

    verdict: Verdict  # the point verdict, or "unsettled"
    point: Verdict  # the verdict on the point estimates
    agreement: float  # share of resamples giving the point verdict (NaN: no resamples)
    leaning: dict[str, float] = field(default_factory=dict)  # verdict -> share of resamples
    # (CPU slowdown factor, the verdict there): the nearest flip on a slower and on a faster
    # CPU (k > 1: slower), when the verdict depends on the machine's speed
    cpu_flips: tuple[tuple[float, Verdict], ...] = ()

    @property
    def settled(self) -> bool:
        return self.verdict != "unsettled"

    def uncertainty_text(self) -> str:
        """'settled (99.6 % of resamples)' or 'unsettled: 71 % supported, 29 % partly'."""
        if math.isnan(self.agreement):
            return "no resamples (a single measurement)"
        if self.settled:
            return f"{self.agreement * 100:.1f} % of resamples agree"
        parts = sorted(self.leaning.items(), key=lambda kv: -kv[1])
        return "unsettled: " + ", ".join(f"{share * 100:.0f} % {v}" for v, share in parts)

    def flip_at(self, direction: Literal["slower", "faster"]) -> tuple[float, Verdict] | None:
        for k, verdict in self.cpu_flips:
            if (k > 1) == (direction == "slower"):
                return k, verdict
        return None

    def cpu_text(self) -> str:
        """How the verdict depends on the machine's speed ('' when it does not)."""
        parts = []
        for k, verdict in self.cpu_flips:
            if k > 1:
                parts.append(f"'{verdict}' on a CPU {k:.3g}× slower than this one")
            else:
                parts.append(f"'{verdict}' on one {1 / k:.3g}× faster")
        return "depends on CPU speed: would read " + ", ".join(parts) if parts else ""


NOT_MEASURED = Judgement("not measured", "not measured", math.nan)


def judge(
    inputs: Mapping[str, Estimate],
    decide: Decide,
    *,
    cpu_bound: Iterable[str] = (),
) -> Judgement:
    """The verdict of ``decide`` on ``inputs``: point, resamples, CPU dependence."""
    if not inputs or any(not math.isfinite(e.point) for e in inputs.values()):
        return NOT_MEASURED
    names = list(inputs)
    point = decide({n: inputs[n].point for n in names})
    length = min(len(inputs[n].resamples) for n in names)
    votes: Counter[str] = Counter()
    for i in range(length):
        values = {n: float(inputs[n].resamples[i]) for n in names}
        if all(math.isfinite(v) for v in values.values()):
            votes[decide(values)] += 1
    total = sum(votes.values())
    agreement = votes[point] / total if total else math.nan
    leaning = {v: n / total for v, n in votes.items()} if total else {}
    flips = _cpu_flips(inputs, decide, point, set(cpu_bound))
    verdict: Verdict = point
    if total and agreement < SETTLED and point != "not measured":
        verdict = "unsettled"
    return Judgement(verdict, point, agreement, leaning, flips)


def _cpu_flips(
    inputs: Mapping[str, Estimate], decide: Decide, point: Verdict, cpu_bound: set[str]
) -> tuple[tuple[float, Verdict], ...]:
    if not cpu_bound:
        return ()
    out = []
    for side in (CPU_FACTORS[CPU_FACTORS > 1], CPU_FACTORS[CPU_FACTORS < 1][::-1]):
        for k in side:  # outwards from 1
            values = {n: e.point * (k if n in cpu_bound else 1.0) for n, e in inputs.items()}
            verdict = decide(values)
            if verdict != point:
                out.append((float(k), verdict))
                break
    return tuple(out)


def combine(parts: Iterable[Verdict]) -> Verdict:
    """One verdict for a claim judged in parts: all alike → that; any unsettled → unsettled
    (unless the settled parts already disagree: partly); a mix → partly."""
    measured = [p for p in parts if p != "not measured"]
    if not measured:
        return "not measured"
    settled = [p for p in measured if p != "unsettled"]
    if len(set(settled)) > 1:
        return "partly"
    if len(settled) < len(measured):
        return "unsettled"
    only = settled[0]
    return only


def interval_text(
    e: Estimate | None,
    formatter: Callable[[float], str],
    range_formatter: Callable[[float, float], str] | None = None,
) -> str:
    """'7.93 ms [7.61–8.30 ms]' (no interval when it has no width or is unknown)."""
    if e is None or not math.isfinite(e.point):
        return "n/a"
    text = formatter(e.point)
    if math.isfinite(e.low) and math.isfinite(e.high) and e.high > e.low:
        inner = (
            range_formatter(e.low, e.high)
            if range_formatter is not None
            else f"{formatter(e.low)}–{formatter(e.high)}"
        )
        text += f" [{inner}]"
    return text


__all__ = [
    "NOT_MEASURED",
    "SETTLED",
    "Judgement",
    "Verdict",
    "combine",
    "interval_text",
    "judge",
]
