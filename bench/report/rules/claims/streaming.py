"""The poor-streaming claim: what each side adds to the time to the first token."""

from __future__ import annotations

from collections.abc import Mapping

from bench.report.facts import Facts
from bench.report.rules.common import Claim, Part, _pair, ms_ci
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt


def claim_streaming(f: Facts) -> Claim:
    text = "Poor streaming: streams pass through layers of interception, adding latency."
    rule = (
        "the TTFT phase: what each engine adds to the time to the first token of the final "
        "answer over what the mock scripted for its own requests (ReAct's text before the "
        "answer is the mock's), less what the bare loop adds (the harness's share, carried by "
        "every engine), LangChain vs self-built of the same configuration. supported: "
        f"LangChain adds ≥ {T.TTFT_RATIO_SUPPORTED:g}× and ≥ "
        f"{fmt.ms(T.TTFT_SHARE_SIGNIFICANT * T.REFERENCE_TTFT_MS)} more (1 % of a "
        f"{fmt.ms(T.REFERENCE_TTFT_MS)} hosted-model TTFT); refuted: < "
        f"{T.TTFT_RATIO_REFUTED:g}× or < {fmt.ms(T.TTFT_SHARE_NEGLIGIBLE * T.REFERENCE_TTFT_MS)} "
        "more; otherwise partly"
    )
    parts = []
    for configuration in ("default", "production"):
        pair = _pair(f, f.ttft_added_ms, configuration)
        if pair is None:
            continue
        lc, sb, label = pair

        def decide(v: Mapping[str, float]) -> Verdict:
            x = max(v["lc"], 0.0) / max(v["sb"], T.MIN_STEP_MS)
            more = v["lc"] - v["sb"]
            return _three_way(
                x,
                x >= T.TTFT_RATIO_SUPPORTED
                and more >= T.TTFT_SHARE_SIGNIFICANT * T.REFERENCE_TTFT_MS,
                x < T.TTFT_RATIO_REFUTED or more < T.TTFT_SHARE_NEGLIGIBLE * T.REFERENCE_TTFT_MS,
            )

        a, b = f.ttft_added_ms[lc], f.ttft_added_ms[sb]
        parts.append(
            Part(
                label,
                f"added to TTFT: {lc} {ms_ci(a)}, {sb} {ms_ci(b)}",
                judge({"lc": a, "sb": b}, decide, cpu_bound=("lc", "sb")),
                f"{fmt.signed(a.point - b.point)} next to a {fmt.ms(T.REFERENCE_TTFT_MS)} TTFT",
            )
        )
    return Claim("streaming", text, rule, tuple(parts), "time to first token not measured")
