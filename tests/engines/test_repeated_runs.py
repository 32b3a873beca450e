"""Repeated runs of one prepared agent (as the runner does them) behave like the first run."""

from __future__ import annotations

import pytest

from bench.engines import MAIN_ENGINES, RunContext
from bench.referee.transport import BASE_URL

pytestmark = pytest.mark.asyncio(loop_scope="session")


@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_the_breaker_scenario_repeats_identically(engines, scenarios, mock, engine_name):
    scenario = scenarios["tool_circuit_breaker"]
    engine = engines[engine_name]
    prepared = await engine.prepare(RunContext(scenario=scenario, mock=mock, base_url=BASE_URL))
    outcomes = []
    for _ in range(3):
        mock.reset()
        record = await engine.run(prepared)
        outcomes.append((record.status, record.tool_calls, record.llm_calls))
    assert outcomes[1:] == [outcomes[0]] * 2
