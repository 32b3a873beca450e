"""What every claim is made of (``Part``, ``Claim``), the like-for-like pair and the interval texts."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from bench.report.facts import Facts, known
from bench.report.verdicts import Judgement, Verdict, combine, interval_text
from bench.results import fmt
from bench.results.stats import Estimate


def ms_ci(e: Estimate | None) -> str:
    return interval_text(e, fmt.ms, fmt.ms_range)


def ratio_ci(e: Estimate | None) -> str:
    return interval_text(e, lambda v: fmt.ratio(v, digits=1))


def pct_ci(e: Estimate | None) -> str:
    return interval_text(e, fmt.pct)


def latency_text(ms: float) -> str:
    if not math.isfinite(ms) or ms <= 0:
        return "any latency"
    return fmt.ms(ms, seconds_from=1000)


# ---------------------------------------------------------------------------------------------
# claims ledger


@dataclass(frozen=True)
class Part:
    """One judged part of a claim."""

    label: str
    measured: str  # the numbers, with their intervals
    judgement: Judgement
    margin: str = ""  # how far from the threshold; where it would flip

    @property
    def verdict(self) -> Verdict:
        return self.judgement.verdict

    def text(self) -> str:
        extras = [self.margin, self.judgement.cpu_text()]
        if not self.judgement.settled:
            extras.append(self.judgement.uncertainty_text())
        tail = "; ".join(x for x in extras if x)
        return f"{self.label}: {self.measured}" + (f" ({tail})" if tail else "")


@dataclass(frozen=True)
class Claim:
    key: str
    claim: str  # what the article says
    rule: str
    parts: tuple[Part, ...] = ()
    why_not: str = ""  # when nothing could be measured: why

    @property
    def verdict(self) -> Verdict:
        return combine(p.verdict for p in self.parts) if self.parts else "not measured"

    @property
    def measured(self) -> str:
        if not self.parts:
            return self.why_not or "not measured in this run"
        return " · ".join(f"[{p.verdict}] {p.text()}" for p in self.parts)


def _pair(
    facts: Facts, metric: Mapping[str, Estimate], configuration: str
) -> tuple[str, str, str] | None:
    """(LangChain engine, self-built engine, label) of one configuration, both measured in
    ``metric``. Without our plain configuration in the run, LangChain's default is compared
    with our production one — which does more work per step, so the pair never flatters us —
    and the label says so."""
    lc, sb = facts.langchain, facts.self_built
    if lc is None or sb is None:
        return None
    a, b = getattr(lc, configuration), getattr(sb, configuration)
    label = configuration
    if b is None or not known(metric.get(b)):
        if configuration == "default" and sb.production and known(metric.get(sb.production)):
            b, label = sb.production, "default vs our production"
        else:
            return None
    if a is None or not known(metric.get(a)):
        return None
    return a, b, label
