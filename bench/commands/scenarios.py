"""``schedbench scenarios list|validate|new``."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "List, validate or create scenario files."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, text in (
        ("list", "a table of the scenarios: name, tags, tools, turns"),
        ("validate", "check every scenario file; exit 2 if any is invalid"),
    ):
        command = sub.add_parser(action, help=text)
        command.add_argument("--scenario-dir", help="directory of scenario YAML files")


def run(args: argparse.Namespace) -> int:
    return {"list": _list, "validate": _validate}[args.action](args)


def _validate(args: argparse.Namespace) -> int:
    from bench.cli import EXIT_USAGE, UsageError
    from scenarios import ScenarioError, load_scenario, scenario_files

    try:
        files = scenario_files(args.scenario_dir)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
    if not files:
        raise UsageError(f"{args.scenario_dir or 'scenarios/'}: no *.yaml scenario files")
    bad = 0
    for path in files:
        try:
            load_scenario(path)
        except ScenarioError as exc:
            bad += 1
            print(exc)
    print(f"{len(files) - bad} valid, {bad} invalid ({len(files)} files)")
    return EXIT_USAGE if bad else 0


def _list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from bench.cli import UsageError
    from scenarios import ScenarioError, load_scenarios

    try:
        scenarios = load_scenarios(args.scenario_dir)
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    table = Table(title=f"{len(scenarios)} scenarios in {Path(args.scenario_dir or 'scenarios')}")
    for column in ("name", "tags", "tools", "turns"):
        table.add_column(column, justify="right" if column in ("tools", "turns") else "left")
    for name, scenario in scenarios.items():
        table.add_row(
            name, ", ".join(scenario.tags), str(len(scenario.tools)), str(len(scenario.script))
        )
    Console(width=120).print(table)
    return 0
