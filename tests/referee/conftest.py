from __future__ import annotations

import pytest

from bench.referee.server import start_server_process
from scenarios import Scenario, load_scenarios


@pytest.fixture(scope="session")
def builtin_scenarios() -> dict[str, Scenario]:
    return load_scenarios()


@pytest.fixture(scope="session")
def mock_server():
    """`schedbench mock serve` in its own process, on a free loopback port."""
    with start_server_process() as server:
        yield server


def tools_of(scenario: Scenario) -> list[dict]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in scenario.tools
    ]
