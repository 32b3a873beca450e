"""The scheduler engines answer confirmations with the scenario's scripted ``approval``."""

from __future__ import annotations

import pytest

from bench.referee import MockLLM
from scenarios import load_scenarios
from tests.engines.conftest import run_once

pytestmark = pytest.mark.asyncio(loop_scope="session")


def _with_approval(approval: str):
    scenario = load_scenarios()["confirmation_required"]
    tools = [
        t.model_copy(update={"approval": approval}) if t.require_confirmation else t
        for t in scenario.tools
    ]
    return scenario.model_copy(update={"tools": tools})


@pytest.mark.parametrize("engine_name", ["scheduler", "scheduler-stream"])
@pytest.mark.parametrize(("approval", "executions"), [("approve", 2), ("deny", 1)])
async def test_approval_decides_whether_the_tool_runs(engines, engine_name, approval, executions):
    scenario = _with_approval(approval)
    record = await run_once(engines[engine_name], scenario, MockLLM({scenario.name: scenario}))
    assert record.status == "completed"
    assert record.tool_calls == executions
    guarded = [t.name for t in scenario.tools if t.require_confirmation]
    ran_guarded = [t.name for t in record.tools if t.name in guarded]
    assert ran_guarded == (guarded if approval == "approve" else [])
