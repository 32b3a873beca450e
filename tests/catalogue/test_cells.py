"""Every cell of the catalogue proves its effect, and its row says what it needed."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import pytest

from bench import PROJECT_ROOT
from bench.catalogue import SCENARIO_DIR
from bench.catalogue.customisations import BY_KEY, CUSTOMISATIONS
from bench.catalogue.harness import plain_failures
from bench.catalogue.run import environment_of
from bench.catalogue.table import BASELINE, CELLS, FAMILIES, Cell
from bench.engines.codesize import measure_target
from bench.envs import ensure
from bench.runner.channel import last_message
from scenarios import load_scenarios


def _row(catalogue: dict[str, Any], cell: Cell) -> dict[str, Any]:
    (row,) = [
        r
        for r in catalogue["cells"]
        if (r["engine"], r["customisation"]) == (cell.engine, cell.customisation)
    ]
    return row


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: f"{c.engine}-{c.customisation}")
def test_the_cell_works(catalogue: dict[str, Any], cell: Cell) -> None:
    row = _row(catalogue, cell)
    assert (row["works"], row["failures"]) == (True, [])


def test_a_row_holds_the_cell_whole(catalogue: dict[str, Any]) -> None:
    row = dict(_row(catalogue, Cell("scheduler", "veto_tool", "")))
    assert row.pop("duration_s") > 0
    size = measure_target("bench/catalogue/scheduler.py::veto_tool")
    base = measure_target("bench/catalogue/scheduler.py::plain")
    assert row == {
        "engine": "scheduler",
        "customisation": "veto_tool",
        "implemented": True,
        "works": True,
        "failures": [],
        "internals": [],
        "internals_found": [],
        "needs_internals": False,
        "note": "before_tool hook returns Veto",
        "statements": size.statements - base.statements,
        "total_statements": size.statements,
        "baseline_statements": base.statements,
        "nodes": size.nodes - base.nodes,
    }
    assert row["statements"] == 5  # def, if, return Veto, return None, agent.on


def test_the_table_has_every_customisation_once_per_engine() -> None:
    pairs = [(c.engine, c.customisation) for c in CELLS]
    assert len(pairs) == len(set(pairs)) == len(FAMILIES) * len(CUSTOMISATIONS)
    for cell in CELLS:
        assert cell.target is not None and measure_target(cell.target).statements > 0
        if environment_of(cell.engine) == "main":  # a peer's module imports its framework
            assert callable(cell.build())
    for engine, module in FAMILIES.items():
        if environment_of(engine) == "main":
            assert callable(getattr(__import__(module, fromlist=[BASELINE]), BASELINE))


def test_the_catalogue_scenarios_stay_out_of_the_timed_suite() -> None:
    scenarios = load_scenarios(SCENARIO_DIR)
    assert {c.scenario for c in CUSTOMISATIONS} <= set(scenarios)
    for scenario in scenarios.values():
        assert "catalogue" in scenario.tags
        assert not {"fault", "failure", "happy-path"} & set(scenario.tags)
    assert not set(scenarios) & set(load_scenarios())  # not in scenarios/


@pytest.mark.timeout(600)
@pytest.mark.parametrize("engine", list(FAMILIES))
def test_every_check_fails_on_the_plain_agent(engine: str) -> None:
    """The checks prove an effect: the engine's agent without the customisation fails each
    (a peer's, in its own environment)."""
    environment = environment_of(engine)
    if environment == "main":
        found = asyncio.run(plain_failures(engine))
    else:
        python = ensure(environment).python
        done = subprocess.run(
            [python, "-m", "bench.catalogue.catalogue_worker", "--plain", engine],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=PROJECT_ROOT,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        message = last_message(done.stdout, "plain")
        assert message is not None, done.stdout[-2000:]
        found = message["failures"]
    assert [key for key, problems in found.items() if not problems] == []
    assert set(found) == set(BY_KEY)
