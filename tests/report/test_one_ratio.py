"""One ratio, one interval: the executive summary and claim 1 print LangChain ÷ ours per LLM
step with the same interval — the step pool's, paired within rounds — and claim 1 judges it
on that interval's own draws."""

from __future__ import annotations

from bench.report.build import build_document
from bench.report.document import to_markdown
from bench.report.rules.common import ratio_ci
from bench.results import stats
from tests.report.synth import LC_PROD, make

PAIRS = (("lc-create-agent", "scheduler-plain"), (LC_PROD, "scheduler"))


def test_the_summary_and_the_ledger_print_the_pooled_ratio_with_one_interval():
    doc, facts, _, ledger = build_document(make(), {}, [])
    text = to_markdown(doc)
    (overhead,) = [c for c in ledger if c.key == "overhead"]
    slower = [p for p in overhead.parts if p.label.startswith("slower")]
    assert len(slower) == 2
    for (lc, ours), part in zip(PAIRS, slower, strict=True):
        paired = facts.step_ratio(lc, ours)
        assert paired.point == facts.step_pool.ratio(lc, ours).estimate.point
        printed = ratio_ci(paired)
        assert part.measured.endswith(printed)
        assert text.count(printed) >= 2  # the summary's bullet and the ledger's part
        # not the ratio of two independent estimates, whose interval differs
        independent = stats.ratio_of_estimates(facts.step_ms[lc], facts.step_ms[ours])
        assert (independent.low, independent.high) != (paired.low, paired.high)
        assert part.judgement.agreement == paired.agreement(lambda x: x >= 2)
