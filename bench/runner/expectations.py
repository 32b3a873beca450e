"""What a run showed, in the terms its scenario's expectations are judged in.

A leaf of the runner: the suite's worker (``worker.record_row``) and the load phase's
(``phases.load.session.classify``) judge runs the same way.
"""

from __future__ import annotations

from typing import Any

from bench.engines.base import RunRecord
from scenarios import Scenario
from scenarios.expect import misses


def observed(record: RunRecord, scenario: Scenario) -> dict[str, Any]:
    """What a run showed, in the terms expectations are judged in (``scenarios.expect``)."""
    defined = scenario.tool_map
    invalid = 0
    for tool in record.tools:
        definition = defined.get(tool.name)
        if definition is not None and not definition.valid_args(tool.args):
            invalid += 1
    return {
        "status": record.status,
        "termination": record.termination,
        "final_answer": record.final_answer,
        "llm_calls": record.llm_calls,
        "tool_calls": record.tool_calls,
        "tools": [t.name for t in record.tools],
        "max_request_tokens": max(record.request_tokens, default=None),
        "max_tool_ms": max((t.duration_ms for t in record.tools), default=None),
        "invalid_tool_args": invalid,
    }


def expectation_failures(scenario: Scenario, engine: str, record: RunRecord) -> list[str]:
    """How a run differs from the scenario's ``expect`` for this engine (empty: as expected)."""
    return misses(scenario.expect.for_engine(engine), observed(record, scenario))
