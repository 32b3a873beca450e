"""The customisation-catalogue claims: inflexible and false simplicity."""

from __future__ import annotations

from collections.abc import Mapping

from bench.report.facts import Facts, exact
from bench.report.rules.common import Claim, Part
from bench.report.rules.selection import (
    _shared_statements,
    catalogue_engines,
)
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt


def claim_inflexible(f: Facts) -> Claim:
    text = "Inflexible: deep customisation means patching framework source."
    rule = (
        "the customisation catalogue: each customisation written on the engine with its "
        "public, documented API and proved by its effect against the mock; the share a "
        "LangChain engine does only with private API, subclassing of internals or "
        "monkeypatching (declared per cell, checked against its source), or not at all (not "
        f"possible, or failing its check). supported: ≥ {fmt.pct(T.INFLEXIBLE_SUPPORTED, decimals=0)}; "
        "refuted: none (every customisation with public API); otherwise partly. The statements "
        "the cells need beyond the plain agent, LangChain ÷ self-built over the customisations "
        "both do, are shown beside"
    )
    ours = next(iter(catalogue_engines("scheduler", f.catalogue)), None)
    parts = []
    for engine in catalogue_engines("langchain", f.catalogue):
        s = f.catalogue[engine]
        if not s["cells"]:
            continue
        share = exact((s["cells"] - s["public"]) / s["cells"])

        def decide(v: Mapping[str, float]) -> Verdict:
            x = v["share"]
            return _three_way(x, x >= T.INFLEXIBLE_SUPPORTED, x <= 0.0)

        failing = s["cells"] - s["works"] - s["impossible"]
        measured = (
            f"{s['public']}/{s['cells']} customisations with public API only "
            f"({s['internals']} need internals, {s['impossible']} not possible, "
            f"{failing} failing their check)"
        )
        if ours is not None:
            mine, theirs, n = _shared_statements(f, engine, ours)
            if n:
                measured += (
                    f"; {mine} statements beyond the plain agent for the {n} both do, "
                    f"{ours} {theirs} ({fmt.ratio(mine / max(theirs, 1), digits=2)})"
                )
        parts.append(Part(engine, measured, judge({"share": share}, decide)))
    return Claim(
        "inflexible", text, rule, tuple(parts), "needs the catalogue (schedbench catalogue)"
    )


def claim_false_simplicity(f: Facts) -> Claim:
    text = (
        "False simplicity: little code for simple cases, more than hand-written for complex "
        "ones (memory, several tools, a custom stop condition)."
    )
    rule = (
        "statements of the whole program a user writes (imports not counted, formatting-"
        "invariant), each passing its test against its scenario: the simplest agent (one tool) "
        "and the article's complex one (conversation memory, three tools, a custom stop "
        "condition), LangChain engine vs our scheduler. supported: LangChain needs fewer for "
        "the simple agent and more for the complex one (the gap reverses); refuted: fewer in "
        "both; otherwise partly"
    )
    both = {e: v for e, v in f.simplicity.items() if "simple" in v and "complex" in v}
    ours = next(iter(catalogue_engines("scheduler", both)), None)
    parts = []
    for engine in catalogue_engines("langchain", both) if ours else ():
        mine, theirs = both[engine], both[ours]  # type: ignore[index]
        inputs = {
            "lc_simple": exact(mine["simple"]),
            "lc_complex": exact(mine["complex"]),
            "sb_simple": exact(theirs["simple"]),
            "sb_complex": exact(theirs["complex"]),
        }

        def decide(v: Mapping[str, float]) -> Verdict:
            fewer_simple = v["lc_simple"] < v["sb_simple"]
            if fewer_simple and v["lc_complex"] > v["sb_complex"]:
                return "supported"
            if fewer_simple and v["lc_complex"] < v["sb_complex"]:
                return "refuted"
            return "partly"

        measured = (
            f"simple agent {mine['simple']} statements vs {ours} {theirs['simple']}; complex "
            f"agent {mine['complex']} vs {theirs['complex']} "
            f"({fmt.signed(mine['simple'] - theirs['simple'], fmt.count)} → "
            f"{fmt.signed(mine['complex'] - theirs['complex'], fmt.count)})"
        )
        parts.append(Part(engine, measured, judge(inputs, decide)))
    why = "needs the false-simplicity programs (schedbench catalogue)"
    if f.simplicity_failing:
        why += "; failing their test: " + ", ".join(f.simplicity_failing)
    return Claim("false_simplicity", text, rule, tuple(parts), why)
