"""The ~200-tokens-per-round claim: prompt tokens per request over the raw loop."""

from __future__ import annotations

from collections.abc import Mapping

from bench.engines.registry import REGISTRY
from bench.report.facts import Facts
from bench.report.rules.common import Claim, Part
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt


def claim_tokens(f: Facts) -> Claim:
    text = (
        "LangChain adds ~200 tokens of framework overhead per round; a self-built loop almost none."
    )
    rule = (
        "prompt tokens per request minus the raw loop's on the same scenarios, per LangChain "
        "engine, tool-calling agents and text ReAct judged apart. supported: the engine adds "
        f"≥ {T.TOKENS_PER_ROUND_MIN:.0f}; refuted: < {T.TOKENS_NEGLIGIBLE:.0f}; otherwise partly"
    )
    lcs = {
        e: v
        for e, v in f.token_overhead.items()
        if e in REGISTRY and REGISTRY[e].family == "langchain" and not REGISTRY[e].outcome_only
    }
    parts = []
    for protocol, label in (("tools", "tool-calling agents"), ("react", "text ReAct")):
        mine = {e: v for e, v in lcs.items() if REGISTRY[e].protocol == protocol}
        if not mine:
            continue
        worst = max(mine, key=lambda e: mine[e].point)

        def decide(v: Mapping[str, float]) -> Verdict:
            t = v["tokens"]
            return _three_way(t, t >= T.TOKENS_PER_ROUND_MIN, t < T.TOKENS_NEGLIGIBLE)

        listed = ", ".join(f"{e} {fmt.signed(v.point, fmt.count)}" for e, v in mine.items())
        parts.append(
            Part(
                label,
                f"tokens per request vs raw: {listed}",
                judge({"tokens": mine[worst]}, decide),
            )
        )
    return Claim("tokens", text, rule, tuple(parts), "token overhead not measured")
