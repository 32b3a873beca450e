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


def performance_scenarios(scenario_dir: Path | str | None, ran: Iterable[str]) -> set[str]:
    """The scenarios of ``ran`` that are happy paths (performance scenarios), as the report
    reads a run folder: one whose file is gone, or every one when the files of
    ``scenario_dir`` cannot be read, counts as a happy path (``bench.report.from_folder``)."""
    names = set(ran)
    try:
        library = load_scenarios(scenario_dir)
    except (ScenarioError, OSError):
        return names
    return {n for n in names if n not in library or library[n].is_performance}
