"""The over-abstraction claim: the framework's own function calls per LLM step."""

from __future__ import annotations

from collections.abc import Mapping

from bench.engines.registry import REGISTRY
from bench.report.facts import Facts, exact
from bench.report.rules.common import Claim, Part
from bench.report.rules.selection import (
    _self_built_beside,
)
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt


def _probed_self_built(f: Facts, engine: str) -> str | None:
    """Our scheduler in ``engine``'s streaming mode among the probed engines."""
    return _self_built_beside(engine, f.framework_calls)


def claim_over_abstraction(f: Facts) -> Claim:
    text = "Over-abstraction: one line of code hides ~100 lines of framework logic."
    rule = (
        "the profiling probe counts the Python function calls a run executes, by package: the "
        "framework's own calls per LLM step (LangChain's packages, or our scheduler's; the "
        "provider SDK, httpx, pydantic and the standard library are left out, a hand-written "
        "loop pays them too), geometric mean over the happy-path scenarios, LangChain engine "
        "minus our scheduler in the same streaming mode. A call runs at least one line. "
        f"supported: ≥ {T.ABSTRACTION_SUPPORTED} more calls per step; refuted: ≤ "
        f"{T.ABSTRACTION_REFUTED} more; otherwise partly. Call counts are deterministic "
        "(exact); the stack depth to the HTTP send is shown beside"
    )
    parts = []
    for engine, calls in f.framework_calls.items():
        spec = REGISTRY.get(engine)
        if spec is None or spec.family != "langchain":
            continue
        ours = _probed_self_built(f, engine)
        if ours is None:
            continue
        # rounded: a geometric mean of whole counts carries float noise past the threshold
        excess = exact(round(calls.point - f.framework_calls[ours].point, 6))

        def decide(v: Mapping[str, float]) -> Verdict:
            x = v["excess"]
            return _three_way(x, x >= T.ABSTRACTION_SUPPORTED, x <= T.ABSTRACTION_REFUTED)

        measured = (
            f"{fmt.count(round(calls.point))} framework calls per LLM step vs {ours} "
            f"{fmt.count(round(f.framework_calls[ours].point))} "
            f"({fmt.signed(round(excess.point), fmt.count)})"
        )
        depth, depth_ours = f.send_depth.get(engine), f.send_depth.get(ours)
        if depth is not None and depth_ours is not None:
            measured += f"; {depth:.0f} frames to the HTTP send vs {depth_ours:.0f}"
        parts.append(Part(engine, measured, judge({"excess": excess}, decide)))
    return Claim(
        "over_abstraction",
        text,
        rule,
        tuple(parts),
        "needs the profiling probe (schedbench probe) of a LangChain engine and our scheduler",
    )
