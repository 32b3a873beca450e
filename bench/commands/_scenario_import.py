"""``schedbench scenarios import FILE``: a JSONL log of chat completions into a scenario
(``bench.traffic.importer``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands.record import add_naming_arguments


def add_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("file", metavar="FILE", help="JSONL: one chat-completion call per line")
    add_naming_arguments(command, "the file's name")


def run(args: argparse.Namespace) -> int:
    from bench.errors import UsageError
    from bench.traffic.importer import TrafficError, import_log, redactor, scenario_name, summary
    from scenarios import BUILTIN_DIR

    directory = Path(args.scenario_dir) if args.scenario_dir else BUILTIN_DIR
    try:
        name = scenario_name(args.name, Path(args.file).stem)
        built = import_log(args.file, name, redactor(args.redact), directory)
    except TrafficError as exc:
        raise UsageError(str(exc)) from None
    print("\n".join(summary(built, directory)))
    return 2 if built.errors else 0
