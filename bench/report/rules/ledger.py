"""The claims ledger: every claim rule in the report's order, and the claims not measured."""

from __future__ import annotations

from collections.abc import Callable

from bench.report.facts import Facts
from bench.report.rules.claims.abstraction import claim_over_abstraction
from bench.report.rules.claims.callbacks import claim_callbacks
from bench.report.rules.claims.catalogue import claim_false_simplicity, claim_inflexible
from bench.report.rules.claims.debugging import claim_debugging
from bench.report.rules.claims.footprint import claim_footprint
from bench.report.rules.claims.multimodel import claim_multimodel
from bench.report.rules.claims.overhead import claim_overhead
from bench.report.rules.claims.production import claim_production
from bench.report.rules.claims.qps import claim_qps
from bench.report.rules.claims.streaming import claim_streaming
from bench.report.rules.claims.tokens import claim_tokens
from bench.report.rules.claims.versions import claim_versions
from bench.report.rules.common import Claim

CLAIM_RULES: tuple[Callable[[Facts], Claim], ...] = (
    claim_overhead,
    claim_callbacks,
    claim_tokens,
    claim_streaming,
    claim_production,
    claim_footprint,
    claim_qps,
    claim_debugging,
    claim_inflexible,
    claim_false_simplicity,
    claim_multimodel,
    claim_over_abstraction,
    claim_versions,
)

UNMEASURED_CLAIMS = (
    "Confusing documentation — not measured: no number here could refute it.",
    "Weak prompt management — not measured: no number here could refute it.",
)


def claims_ledger(f: Facts) -> list[Claim]:
    return [rule(f) for rule in CLAIM_RULES]
