"""Marginal variants: one scenario, plus one tool call, plus one LLM step.

Dividing a run's calls by its LLM calls says what a step costs *with* its tool calls; it says
nothing of a tool call alone. So the probe also runs two variants of a small scenario
(``single_tool``: one tool call, then the answer) that differ from it by exactly one thing:

- ``<name>+tool`` — the first turn asks for its tool call **twice** (in parallel): one more
  tool call, the same number of LLM steps;
- ``<name>+step`` — the first turn is played **twice**: one more LLM step, with its tool call.

Calls(+tool) − calls(base) is what one more tool call costs; calls(+step) − calls(base) what
one more step with a tool call costs, and their difference a step without it
(``bench.results.metrics.profile_marginals``). A ReAct engine plays parallel calls as
consecutive actions (one per LLM turn), so its ``+tool`` has one more LLM call too; the row
says how many LLM and tool calls each variant made.
"""

from __future__ import annotations

from scenarios import Scenario

MARGINAL_SCENARIO = "single_tool"
PLUS_TOOL, PLUS_STEP = "+tool", "+step"


def marginal_variants(base: Scenario) -> list[Scenario]:
    """``[base+tool, base+step]`` (the base's first turn must call a tool)."""
    first, rest = base.script[0], list(base.script[1:])
    if not first.tool_calls:
        raise ValueError(f"{base.name}: the first turn calls no tool; no marginal variants")
    two_calls = first.model_copy(update={"tool_calls": [*first.tool_calls, first.tool_calls[0]]})
    return [
        base.model_copy(update={"name": base.name + PLUS_TOOL, "script": [two_calls, *rest]}),
        base.model_copy(update={"name": base.name + PLUS_STEP, "script": [first, first, *rest]}),
    ]
