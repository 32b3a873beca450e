"""Every scenario in scenarios/ on every engine (in-process), checked against its ``expect``.

The parameters are read from the scenario directory at collection time: adding a scenario
file adds a test per engine, with no code change here.
"""

from __future__ import annotations

from typing import Any

import pytest

from bench.engines import MAIN_ENGINES, RunRecord
from bench.engines.base import TERMINATIONS
from bench.runner.expectations import expectation_failures
from scenarios import Scenario, load_scenarios
from tests.engines.conftest import run_once

pytestmark = pytest.mark.asyncio(loop_scope="session")

SCENARIO_NAMES = sorted(load_scenarios())


def scripted_calls(scenario: Scenario, needed: int) -> list[tuple[str, dict[str, Any] | None]]:
    """The script's tool calls in order as (name, args); args None for malformed JSON and
    for a turn whose answer a stream fault breaks (an engine may run a cut-off call).

    Calls to unknown tools are left out (they can never execute); a repeating last turn is
    repeated until the list is at least ``needed`` long.
    """
    turns = list(scenario.script)
    calls: list[tuple[str, dict[str, Any] | None]] = []

    def add(turn: Any) -> None:
        broken = turn.fault is not None and turn.fault.stream is not None
        for call in turn.tool_calls:
            if not call.unknown:
                garbled = broken or call.raw_arguments is not None
                calls.append((call.name, None if garbled else call.args))

    for turn in turns:
        add(turn)
    while turns[-1].repeat and turns[-1].tool_calls and len(calls) < needed:
        add(turns[-1])
    return calls


def args_problem(record: RunRecord, scenario: Scenario) -> str | None:
    """Each executed call must be a scripted call, in script order, with the script's args.

    A call whose scripted arguments were malformed JSON may execute with whatever the engine
    made of them (LangChain's streaming parser repairs truncated JSON, for instance). An
    execution that repeats the one before it (same tool, same arguments) is a retry of that
    call by the engine (LangChain's ``ToolRetryMiddleware``), not a new call of the model;
    the expected ``tool_calls`` count still pins how many there are.
    """
    script = scripted_calls(scenario, len(record.tools))
    position = 0
    previous = None
    for executed in record.tools:
        if previous is not None and (executed.name, executed.args) == previous:
            continue
        previous = (executed.name, executed.args)
        while position < len(script):
            name, args = script[position]
            position += 1
            if name == executed.name and (args is None or args == executed.args):
                break
        else:
            return f"{executed.name}({executed.args}) is not the next scripted call"
    return None


def check(record: RunRecord, scenario: Scenario) -> list[str]:
    """The expectations that do not hold (the runner's own judge), and a wrong call order."""
    wrong = expectation_failures(scenario, record.engine, record)
    problem = args_problem(record, scenario)
    if problem:
        wrong.append(problem)
    return wrong


@pytest.mark.parametrize("scenario_name", SCENARIO_NAMES)
@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_scenario_meets_its_expectations(
    engine_name, scenario_name, engines, scenarios, mock
):
    scenario = scenarios[scenario_name]
    record = await run_once(engines[engine_name], scenario, mock)
    assert check(record, scenario) == [], f"error={record.error!r}"
    # the record describes this run, whatever the outcome, in the harness's words
    assert (record.engine, record.scenario) == (engine_name, scenario_name)
    if record.status != "error":
        assert record.termination in TERMINATIONS
    assert len(record.requests) == record.llm_calls
    assert record.wall_ms > 0 and record.cpu_ms >= 0
    if record.llm_calls:
        assert record.prompt_tokens > 0
