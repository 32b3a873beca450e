"""Shared fixtures for the engine tests: one mock, one engine instance per name, one loop.

The engine tests run on a session-scoped event loop: an engine keeps its HTTP clients
across runs (as a real service keeps its pool), and a pool belongs to one loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from bench.engines import MAIN_ENGINES, Engine, RunContext, RunRecord, create_engine
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from scenarios import Scenario, load_scenarios

# a run deadline for tests that set one (else the scenario's limits.run_timeout_s applies)
TEST_RUN_TIMEOUT_S = 0.8
# a deadline that only stops a hung run (tests of counts, not of the deadline)
HANG_GUARD_S = 60.0


@pytest.fixture(scope="session")
def scenarios() -> dict[str, Scenario]:
    return load_scenarios()


@pytest.fixture(scope="session")
def mock(scenarios: dict[str, Scenario]) -> MockLLM:
    return MockLLM(scenarios=scenarios)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def engines() -> AsyncIterator[dict[str, Engine]]:
    built = {name: create_engine(name) for name in MAIN_ENGINES}
    yield built
    for engine in built.values():
        await engine.aclose()


async def run_once(
    engine: Engine, scenario: Scenario, mock: MockLLM | None = None, **context: Any
) -> RunRecord:
    """Prepare and run one scenario on one engine, the way the runner does."""
    if mock is not None:
        mock.reset()  # fault counters: every run sees the scenario's faults afresh
    context.setdefault("base_url", BASE_URL)
    ctx = RunContext(scenario=scenario, mock=mock, **context)
    prepared = await engine.prepare(ctx)
    return await engine.run(prepared)
