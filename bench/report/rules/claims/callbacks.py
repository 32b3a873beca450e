"""The long-callback-chains claim: the profiled share of a step in callbacks and runnables."""

from __future__ import annotations

from collections.abc import Mapping

from bench.engines.registry import REGISTRY
from bench.report.facts import Facts, known
from bench.report.rules.common import Claim, Part, pct_ci
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt


def claim_callbacks(f: Facts) -> Claim:
    text = "Long callback chains: each step passes through layers of handlers."
    rule = (
        "the share of a LangChain step's time spent in callback managers, tracers and "
        "runnable plumbing (the profiling probe's samples: inclusive — a callback manager, "
        "tracer or langsmith wrapper anywhere on the stack — plus the runnables' own frames; "
        "self time only for probes that recorded no stacks). supported: ≥ "
        f"{fmt.pct(T.CALLBACK_SHARE_SUPPORTED, decimals=0)}; refuted: < "
        f"{fmt.pct(T.CALLBACK_SHARE_REFUTED, decimals=0)}; otherwise partly"
    )
    shares = f.callback_share
    side = f.langchain
    judged = [e for e in (side.engines if side else ()) if known(shares.get(e))]
    others = [
        e for e in shares if e not in judged and e in REGISTRY and REGISTRY[e].family == "langchain"
    ]
    parts = []
    for engine in judged:
        share = shares[engine]

        def decide(v: Mapping[str, float]) -> Verdict:
            s = v["share"]
            return _three_way(s, s >= T.CALLBACK_SHARE_SUPPORTED, s < T.CALLBACK_SHARE_REFUTED)

        measured = f"{pct_ci(share)} of a run's time in callbacks, tracers and runnables"
        if engine == judged[-1] and others:
            measured += (
                " (other LangChain engines: "
                + ", ".join(f"{e} {fmt.pct(shares[e].point)}" for e in others)
                + ")"
            )
        parts.append(Part(engine, measured, judge({"share": share}, decide)))
    return Claim(
        "callbacks",
        text,
        rule,
        tuple(parts),
        "needs the profiling probe (callbacks and runnables isolated); not in this run",
    )
