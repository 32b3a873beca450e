"""The decision matrix and the claims ledger, computed from one set of ``Facts`` by stated rules.

Every rule reads estimates from ``Facts`` (never typed-in conclusions), compares like with
like (default configuration with default, production with production, streaming with
streaming: ``Facts.langchain`` / ``Facts.self_built``), and states itself in plain words;
the report prints the rule next to the result, and docs/report.md lists them all.
Thresholds live in ``T`` so that a test can push a number across each of them.

A claim is judged in **parts** where the data splits (tool calling vs text ReAct; retries
vs tool guards; the default vs the production configuration): each part is a
``verdicts.Judgement`` — decided on the point estimates and on every bootstrap resample,
*unsettled* when the resamples disagree, with its CPU dependence — and the claim's verdict
combines them (``verdicts.combine``). The matrix rates each side from the same facts, so
the two cannot contradict each other.

The package, one module per job: ``thresholds`` (``T``, every threshold, and the star
bands), ``common`` (``Part``, ``Claim``, the like-for-like pair, the interval texts),
``selection`` (which engine of a side a rule reads), ``claims/`` (one module per claim, or
per pair of claims on the same data), ``ledger`` (``claims_ledger``) and ``matrix``
(``Rating``, ``rate_*``, ``decision_matrix``).
"""

from __future__ import annotations

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
from bench.report.rules.common import Claim, Part, latency_text, ms_ci, pct_ci, ratio_ci
from bench.report.rules.ledger import CLAIM_RULES, UNMEASURED_CLAIMS, claims_ledger
from bench.report.rules.matrix import (
    ARTICLE_MATRIX,
    RATED,
    Rating,
    decision_matrix,
    frameworks_matrix,
    rate_debuggability,
    rate_dev_speed,
    rate_flexibility,
    rate_performance,
    rate_production,
)
from bench.report.rules.selection import catalogue_engines, debug_engine
from bench.report.rules.thresholds import T, stars_text

__all__ = [
    "ARTICLE_MATRIX",
    "CLAIM_RULES",
    "RATED",
    "UNMEASURED_CLAIMS",
    "Claim",
    "Part",
    "Rating",
    "T",
    "catalogue_engines",
    "claim_callbacks",
    "claim_debugging",
    "claim_false_simplicity",
    "claim_footprint",
    "claim_inflexible",
    "claim_multimodel",
    "claim_over_abstraction",
    "claim_overhead",
    "claim_production",
    "claim_qps",
    "claim_streaming",
    "claim_tokens",
    "claim_versions",
    "claims_ledger",
    "debug_engine",
    "decision_matrix",
    "frameworks_matrix",
    "latency_text",
    "ms_ci",
    "pct_ci",
    "rate_debuggability",
    "rate_dev_speed",
    "rate_flexibility",
    "rate_performance",
    "rate_production",
    "ratio_ci",
    "stars_text",
]
