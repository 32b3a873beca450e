"""``schedbench scenarios import`` and what it shares with ``record``: a JSONL log into
scenario files, the scenario name, the ``--redact`` specs, and the summary printed after.

The accepted line shapes are documented in ``bench.traffic.logs`` and docs/recording.md.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.errors import InputFileError
from bench.traffic.build import Built, build_scenarios
from bench.traffic.logs import LogError, read_traffic
from bench.traffic.redact import Redactor
from bench.traffic.write import name_from, write_atomically

_NAME = re.compile(r"^[a-z0-9_]+$")


class TrafficError(InputFileError):
    """Bad input to ``record`` or ``import``: one line naming the file or option and why."""


def scenario_name(given: str | None, source: str) -> str:
    """``--name``, checked; else a name made from ``source`` (a folder or file name)."""
    if given is None:
        return name_from(source)
    if not _NAME.match(given):
        raise TrafficError(
            f"invalid scenario name {given!r}: use lowercase letters, digits and underscores "
            "(it is also the file name)"
        )
    return given


def redactor(specs: list[str]) -> Redactor:
    """The ``--redact`` values as a ``Redactor``; TrafficError names a bad one."""
    try:
        return Redactor.from_specs(specs)
    except ValueError as exc:
        raise TrafficError(f"--redact: {exc}") from None


def import_log(path: Path | str, name: str, redact: Redactor, directory: Path) -> Built:
    """Build the scenarios of the log at ``path`` and write them into ``directory``; never
    overwrites a file. What the log held that the scenarios do not is in ``Built.notes``.
    Raises TrafficError when there is nothing to write."""
    try:
        traffic = read_traffic(path, redact)
    except LogError as exc:
        raise TrafficError(str(exc)) from None
    if directory.exists() and not directory.is_dir():
        raise TrafficError(f"{directory}: not a directory")
    built = build_scenarios(traffic.exchanges, name, traffic.tool_runs)
    built.notes[:0] = traffic.notes
    if not built.scenarios:
        reasons = built.errors + built.notes or ["no exchange in it"]
        joined = reasons[0] if len(reasons) == 1 else "\n  " + "\n  ".join(reasons)
        raise TrafficError(f"{path}: no scenario to build: {joined}")
    taken = [s.name for s in built.scenarios if (directory / f"{s.name}.yaml").exists()]
    if taken:
        raise TrafficError(
            f"{directory / taken[0]}.yaml already exists; choose another --name or delete it first"
        )
    directory.mkdir(parents=True, exist_ok=True)
    for scenario in built.scenarios:
        write_atomically(directory / f"{scenario.name}.yaml", built.texts[scenario.name])
    return built


def summary(built: Built | None, directory: Path) -> list[str]:
    """What was written, what was left out and why, one line each."""
    if built is None:
        return ["nothing recorded: no chat completion went through the proxy"]
    lines = []
    for scenario in built.scenarios:
        calls = sum(len(turn.tool_calls) for turn in scenario.script)
        lines.append(
            f"wrote {directory / scenario.name}.yaml "
            f"({len(scenario.script)} LLM calls, {calls} tool calls)"
        )
    lines += built.notes
    lines += [f"error: {error}" for error in built.errors]
    if built.scenarios:
        lines.append(f"next: schedbench scenarios validate --scenario-dir {directory}")
    return lines
