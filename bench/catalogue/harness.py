"""Run one cell against the in-process mock and observe it at the edges.

``observe_cell`` builds the cell's agent from its kit (outside any request), then serves the
customisation's requests one by one — each in a fresh ``RunLog`` (the tools record their
executions there) and under a generous deadline that only catches a hang — and returns the
``Observation``: the requests the mock answered during each, the tools that ran, what the
run raised, and the trace text that left the process. The mock's fault counters start afresh
for every cell.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bench.catalogue import SCENARIO_DIR
from bench.catalogue.customisations import Customisation
from bench.catalogue.kit import Ask, Kit, TraceSink, kit_for
from bench.catalogue.observe import (
    Observation,
    RunObservation,
    request_from_mock,
    tool_from_log,
)
from bench.engines.kit.runlog import end_log, start_log
from bench.referee import MockLLM

REQUEST_DEADLINE_S = 30.0  # a hang, not a measurement


async def observe(
    build: Callable[[Kit], Ask],
    kit: Kit,
    mock: MockLLM,
    users: tuple[str, ...],
    question: str,
    deadline_s: float = REQUEST_DEADLINE_S,
) -> Observation:
    """Build the cell's agent and serve one request per user (see the module docstring)."""
    mock.reset()
    obs = Observation()
    ask = build(kit)
    for user in users:
        run = RunObservation(user, question)
        first = len(mock.requests)
        log, token = start_log()
        try:
            await asyncio.wait_for(ask(user, question), deadline_s)
        except Exception as exc:
            run.raised = f"{type(exc).__name__}: {exc}"[:500]
        finally:
            end_log(token)
        await asyncio.to_thread(kit.collect_traces)
        run.requests = [request_from_mock(r) for r in mock.requests[first:]]
        run.tools = [tool_from_log(t) for t in log.tools]
        obs.runs.append(run)
    obs.traces = list(kit.traces)
    return obs


async def observe_cell(
    engine: str,
    customisation: Customisation,
    build: Callable[[Kit], Ask],
    mock: MockLLM,
    sink: TraceSink | None = None,
    deadline_s: float = REQUEST_DEADLINE_S,
) -> Observation:
    """One cell of ``engine`` on its customisation's scenario (``deadline_s`` per request)."""
    scenario = mock.scenarios[customisation.scenario]  # type: ignore[index]
    kit = kit_for(engine, scenario, mock, sink)
    return await observe(build, kit, mock, customisation.users, scenario.user, deadline_s)


def catalogue_mock() -> MockLLM:
    """The in-process mock serving the catalogue's own scenarios."""
    return MockLLM(scenario_dir=SCENARIO_DIR)


async def plain_failures(engine: str) -> dict[str, list[str]]:
    """What each customisation's check finds wrong with ``engine``'s plain agent (the same
    agent without any customisation): every check must find something, or it proves nothing."""
    from bench.catalogue.customisations import CUSTOMISATIONS
    from bench.catalogue.table import BASELINE, Cell

    mock, build = catalogue_mock(), Cell(engine, BASELINE, "").build()
    out = {}
    for c in CUSTOMISATIONS:
        obs = await observe_cell(engine, c, build, mock, deadline_s=2.0)  # a tool hangs
        out[c.key] = c.check(obs)
    return out
