"""``schedbench scenarios import FILE``: a JSONL log of chat completions into a scenario.

The accepted line shapes are documented in ``bench.traffic.logs`` and docs/scenarios.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands.record import add_naming_arguments, redactor, scenario_name, summarise


def add_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("file", metavar="FILE", help="JSONL: one chat-completion call per line")
    add_naming_arguments(command, "the file's name")


def run(args: argparse.Namespace) -> int:
    from bench.cli import UsageError
    from bench.traffic import LogError, build_scenarios, read_log, write_scenario
    from scenarios import BUILTIN_DIR

    name = scenario_name(args.name, Path(args.file).stem)
    try:
        exchanges = read_log(args.file, redactor(args.redact))
    except LogError as exc:
        raise UsageError(str(exc)) from None
    directory = Path(args.scenario_dir) if args.scenario_dir else BUILTIN_DIR
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory}: not a directory")
    built = build_scenarios(exchanges, name)
    if not built.scenarios:
        reasons = built.errors + built.notes or ["no exchange in it"]
        raise UsageError(f"{args.file}: no scenario to build:\n" + "\n".join(reasons))
    taken = [s.name for s in built.scenarios if (directory / f"{s.name}.yaml").exists()]
    if taken:
        raise UsageError(
            f"{directory / taken[0]}.yaml already exists; choose another --name or delete it first"
        )
    for scenario in built.scenarios:
        write_scenario(scenario, directory)
    return summarise(built, directory)
