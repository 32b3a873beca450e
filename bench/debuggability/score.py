"""Score a debug output against a run's ground truth.

**Recall** is the share of the run's facts the output lets you find (the matching rules are
in ``bench.debuggability.match``); **bytes, lines, bytes per fact** say how much you read to find
them; **fault localisation** (``bench.debuggability.localise``) says whether a reader can identify the
failing call. Each fact is counted once: the failing call's position is judged by
localisation only, never as a recall fact. See docs/debuggability.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.debuggability.localise import Localisation, Statement, localise
from bench.debuggability.match import (
    durations_ms,
    fact_found,
    flatten,
    latency_matches,
    normalise,
    parse_structured,
    searchable,
    step_found,
)
from bench.debuggability.truth import LATENCY, Fact, GroundTruth


@dataclass(frozen=True)
class Score:
    facts_total: int
    facts_found: int
    bytes: int
    lines: int
    structured: bool
    found: tuple[Fact, ...] = ()
    missed: tuple[Fact, ...] = ()
    localisation: Localisation | None = None
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (found, total)
    statement: Statement | None = None  # where the failure is stated (the excerpt's anchor)

    @property
    def recall(self) -> float:
        return self.facts_found / self.facts_total if self.facts_total else 0.0

    @property
    def bytes_per_fact(self) -> float | None:
        """Output bytes per recovered fact (noise); None when nothing was recovered."""
        return self.bytes / self.facts_found if self.facts_found else None

    def missed_summary(self) -> str:
        """``latency:2 tokens:6``: what was missed, by kind."""
        return " ".join(
            f"{kind}:{total - found}"
            for kind, (found, total) in self.by_kind.items()
            if found < total
        )


def count_lines(output: str) -> int:
    if not output:
        return 0
    return output.count("\n") + (0 if output.endswith("\n") else 1)


def score_output(output: str, truth: GroundTruth | Sequence[Fact]) -> Score:
    """Score one debug output against the ground truth (or a plain list of facts)."""
    facts = list(truth.facts if isinstance(truth, GroundTruth) else truth)
    failure = truth.failure if isinstance(truth, GroundTruth) else None
    text, structured = searchable(output) if output else ("", False)
    latency = [(i, f) for i, f in enumerate(facts) if f.kind == LATENCY]
    matched_latency = {
        latency[k][0] for k in latency_matches([f for _, f in latency], durations_ms(text))
    }

    def hit(i: int, fact: Fact) -> bool:
        if fact.kind == LATENCY:
            return i in matched_latency
        return bool(text) and fact_found(fact, text)

    hits = [hit(i, fact) for i, fact in enumerate(facts)]
    by_kind: dict[str, tuple[int, int]] = {}
    for fact, found in zip(facts, hits, strict=True):
        done, total = by_kind.get(fact.kind, (0, 0))
        by_kind[fact.kind] = (done + found, total + 1)
    localisation, statement = None, None
    if failure is not None:
        error_named = bool(text) and fact_found(failure.error, text)
        localisation, statement = localise(output, failure, error_named, facts)
    return Score(
        facts_total=len(facts),
        facts_found=sum(hits),
        bytes=len(output.encode("utf-8")),
        lines=count_lines(output),
        structured=structured,
        found=tuple(f for f, h in zip(facts, hits, strict=True) if h),
        missed=tuple(f for f, h in zip(facts, hits, strict=True) if not h),
        localisation=localisation,
        by_kind=by_kind,
        statement=statement,
    )


__all__ = [
    "Localisation",
    "Score",
    "durations_ms",
    "fact_found",
    "flatten",
    "latency_matches",
    "normalise",
    "parse_structured",
    "score_output",
    "searchable",
    "step_found",
]
