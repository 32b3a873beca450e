"""Running an engine through the probe's passes in the test's own process."""

from __future__ import annotations

import asyncio
from typing import Any

from bench.engines.base import RunContext
from bench.probe.edges import EdgeProbe, EdgeStack
from bench.probe.measure import ScenarioProbe, TimedMock
from bench.referee.transport import BASE_URL
from scenarios import load_scenarios


async def scenario_probe(engine: Any, name: str, warmup: int = 2) -> ScenarioProbe:
    """A prepared, warmed-up engine on one built-in scenario (in-process mock)."""
    scenario = load_scenarios()[name]
    mock = TimedMock(scenarios={name: scenario})
    ctx = RunContext(scenario=scenario, mock=mock, base_url=BASE_URL)
    probe = ScenarioProbe(engine, await engine.prepare(ctx), mock)
    for _ in range(warmup):
        await probe.run()
    return probe


async def edge_hits(engine: Any, name: str) -> list[EdgeStack]:
    """The stacks at every edge of one run of ``engine`` on scenario ``name``."""
    probe = await scenario_probe(engine, name)
    edges = EdgeProbe.for_engine(engine)
    edges.install(asyncio.get_running_loop())
    try:
        await probe.run()
    finally:
        edges.uninstall()
    await engine.aclose()
    assert {s.status for s in probe.shapes} == {"completed"}
    return edges.hits
