"""The multi-model-support claim: a LangChain engine switched from OpenAI to Anthropic."""

from __future__ import annotations

from collections.abc import Mapping

from bench.engines.registry import REGISTRY
from bench.report.facts import Facts, ProviderSwitch, exact
from bench.report.rules.common import Claim, Part
from bench.report.rules.selection import (
    _self_built_beside,
)
from bench.report.rules.thresholds import T
from bench.report.verdicts import Verdict, judge


def _switch_text(switch: ProviderSwitch, *, named: bool = False) -> str:
    ok, n = switch.as_expected
    text = (
        f"{switch.engine + ' ' if named else ''}→ {switch.provider}: the chat model alone "
        f"({switch.statements:,} statements) {ok}/{n} scenarios as expected"
    )
    if not switch.works and switch.note:
        text += f" ({switch.note})"
    if switch.fixed_statements is not None:
        works = "works" if switch.fixed_works else "does not work"
        text += f"; with the fix ({switch.fixed_statements:,} statements) it {works}"
        if switch.fixed_note:
            text += f" ({switch.fixed_note})"
    return text


def _beside(f: Facts, engine: str) -> ProviderSwitch | None:
    """Our scheduler's switch in the same streaming mode as ``engine``."""
    name = _self_built_beside(engine, f.provider_switches)
    return None if name is None else f.provider_switches[name]


def _decide_switch(v: Mapping[str, float]) -> Verdict:
    if v["works"] and v["statements"] <= T.SWITCH_STATEMENTS:
        return "supported"
    working = [v["statements"]] if v["works"] else []
    if v["fixed_works"]:
        working.append(v["fixed_statements"])
    if working and min(working) <= T.SWITCH_REWRITE:
        return "partly"
    return "refuted"


def claim_multimodel(f: Facts) -> Claim:
    text = (
        'Multi-model support (a strength): "one code base across OpenAI, Anthropic and open '
        'models".'
    )
    scenarios = ", ".join(f.switch_scenarios) or "its scenarios"
    rule = (
        "each LangChain engine switched from OpenAI to Anthropic's Messages API and run on "
        f"{scenarios} against the mock (schedbench multimodel). supported: changing its chat "
        f"model alone (≤ {T.SWITCH_STATEMENTS} statements) is enough for every scenario to end "
        "as the benchmark expects; partly: it works only after more code, ≤ "
        f"{T.SWITCH_REWRITE} statements in all; refuted: it does not work, or needs more (a "
        "rewrite). Statements: an ast diff of the provider-specific code against the OpenAI "
        "code it replaces. Not measured for an engine whose OpenAI run fails. Our scheduler "
        "is shown beside each part (same streaming mode), not judged"
    )
    parts = []
    for engine, switch in f.provider_switches.items():
        known_engine = REGISTRY.get(engine)
        if known_engine is None or known_engine.family != "langchain":
            continue
        measured = _switch_text(switch)
        beside = _beside(f, engine)
        if beside is not None:
            measured += f"; beside it, {_switch_text(beside, named=True)}"
        if not switch.baseline_works:
            judgement = judge({}, _decide_switch)
            measured = f"{engine} does not work on OpenAI either: the check is void ({measured})"
        else:
            inputs = {
                "works": exact(float(switch.works)),
                "statements": exact(switch.statements),
                "fixed_works": exact(float(bool(switch.fixed_works))),
                "fixed_statements": exact(switch.fixed_statements or 0),
            }
            judgement = judge(inputs, _decide_switch)
        margin = f"supported up to {T.SWITCH_STATEMENTS}, a rewrite above {T.SWITCH_REWRITE}"
        parts.append(Part(engine, measured, judgement, margin))
    return Claim("multimodel", text, rule, tuple(parts), "multi-model check not run")
