"""Scenario glue: the facts the harness reads from the scenarios' tags.

The tag ``reference`` marks the reference scenario (``customer_returns``, the article's own
example): each worker's cold first run and the throughput phase, the load phase, the CPU per
run of the report, the cost of a debug mode and the LangChain version matrix all run it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from scenarios import Scenario, ScenarioError, load_scenarios

REFERENCE_TAG = "reference"


def tagged(scenarios: Mapping[str, Scenario], tag: str) -> list[str]:
    """The names of the scenarios carrying ``tag``, in order."""
    return [name for name, scenario in scenarios.items() if tag in scenario.tags]


@cache
def _builtin_reference() -> str:
    names = tagged(load_scenarios(), REFERENCE_TAG)
    if len(names) != 1:
        raise RuntimeError(f"scenarios/: {len(names)} scenarios tagged {REFERENCE_TAG!r}, not 1")
    return names[0]


def reference_scenario(scenarios: Mapping[str, Scenario] | None = None) -> str | None:
    """The reference scenario: the one tagged ``reference`` among ``scenarios``, else the
    built-in one when ``scenarios`` has it (a copy without the tag); None when neither.
    Without ``scenarios``: the built-in reference's name."""
    builtin = _builtin_reference()
    if scenarios is None:
        return builtin
    mine = tagged(scenarios, REFERENCE_TAG)
    if mine:
        return mine[0]
    return builtin if builtin in scenarios else None


def happy_paths(library: Mapping[str, Scenario] | None, ran: Iterable[str]) -> set[str]:
    """The scenarios of ``ran`` that are happy paths (performance scenarios), as the report
    reads a run folder (``bench.report.from_folder``): one whose file is gone (not in
    ``library``), or every one when the scenario files cannot be read (``library`` None),
    counts as a happy path; any other is one when ``Scenario.is_performance``."""
    names = set(ran)
    if library is None:
        return names
    return {n for n in names if n not in library or library[n].is_performance}


def performance_scenarios(scenario_dir: Path | str | None, ran: Iterable[str]) -> set[str]:
    """The ``happy_paths`` of ``ran`` by the scenario files of ``scenario_dir``."""
    try:
        library = load_scenarios(scenario_dir)
    except (ScenarioError, OSError):
        return happy_paths(None, ran)
    return happy_paths(library, ran)
