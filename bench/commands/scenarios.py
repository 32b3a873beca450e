"""``schedbench scenarios list|validate|new|import``."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

from bench.commands import _handlers as handler_options
from bench.commands import _scenario_import as scenario_import
from bench.errors import UsageError

if TYPE_CHECKING:
    from scenarios import Scenario

HELP = "List, validate or create scenario files."

NAME_PATTERN = re.compile(r"^[a-z0-9_]+$")
TEMPLATE_FILE = "_template.yaml"  # the commented scaffold `new` copies (not itself listed)
_NAME_VALUE = re.compile(r"^(name:[ \t]*)([^\s#]+)", re.MULTILINE)  # top level: column 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    for action, text in (
        ("list", "a table of the scenarios: name, tags, tools, turns"),
        ("validate", "check every scenario file; exit 2 if any is invalid"),
        ("new", "write a commented scenario file that already validates"),
        ("import", "a scenario from a JSONL log of chat-completion requests and responses"),
    ):
        command = sub.add_parser(action, help=text, description=text)
        if action == "import":
            scenario_import.add_arguments(command)
        if action == "new":
            command.add_argument("name", metavar="NAME", help="scenario name: [a-z0-9_]+")
            command.add_argument(
                "--from",
                dest="template",
                metavar="TEMPLATE",
                help="copy this scenario (a name in --scenario-dir or the built-ins, or a path)",
            )
        command.add_argument(
            "--scenario-dir",
            metavar="D",
            help="directory of scenario YAML files (default: the built-in scenarios/)",
        )
        if action == "validate":
            handler_options.add_arguments(command)


def run(args: argparse.Namespace) -> int:
    actions = {"list": _list, "validate": _validate, "new": _new, "import": scenario_import.run}
    return actions[args.action](args)


def _validate(args: argparse.Namespace) -> int:
    from bench.engines import ENGINE_NAMES
    from bench.results.escape import visible
    from scenarios import ScenarioError, handler_problems, load_scenario, scenario_files

    handlers = handler_options.policy(args)
    try:
        files = scenario_files(args.scenario_dir)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
    if not files:
        raise UsageError(f"{args.scenario_dir or 'scenarios/'}: no *.yaml scenario files")
    bad = 0
    for path in files:
        try:
            scenario = load_scenario(path, engines=ENGINE_NAMES)
        except ScenarioError as exc:
            bad += 1
            print(visible(str(exc)))
            continue
        # a handler is checked (imported) only when the options allow it
        problems = handler_problems(scenario, handlers, resolve=True)
        if problems:
            bad += 1
            print(visible(str(ScenarioError(path, problems))))
    print(f"{len(files) - bad} valid, {bad} invalid ({len(files)} files)")
    return UsageError.exit_code if bad else 0


def unknown_engines(scenario: Scenario) -> list[str]:
    """Per-engine overrides naming no engine (a typo would silently never apply)."""
    from bench.engines import ENGINE_NAMES
    from scenarios.checks import engine_problems

    return engine_problems(scenario.expect.engines, ENGINE_NAMES)


def _list(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from bench.results.escape import visible
    from scenarios import ScenarioError, load_scenarios

    try:
        scenarios = load_scenarios(args.scenario_dir)
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    table = Table()
    for column in ("name", "tags", "tools", "turns"):
        table.add_column(column, justify="right" if column in ("tools", "turns") else "left")
    for name, scenario in scenarios.items():
        # Text, never a markup string: a tag like "[/x]" or "[link=...]" is shown as typed
        cells = (
            name,
            ", ".join(scenario.tags),
            str(len(scenario.tools)),
            str(len(scenario.script)),
        )
        table.add_row(*(Text(visible(cell)) for cell in cells))
    print(visible(f"{len(scenarios)} scenarios in {Path(args.scenario_dir or 'scenarios')}"))
    Console(width=120).print(table)
    return 0


def _template_path(template: str, directory: Path) -> Path:
    """Resolve ``--from``: a path to a file, or a scenario name in D, then in the built-ins."""
    from scenarios import BUILTIN_DIR, scenario_files

    as_path = Path(template)
    if template.endswith((".yaml", ".yml")) or len(as_path.parts) > 1:
        if not as_path.is_file():
            raise UsageError(f"--from {template}: no such file")
        return as_path
    for folder in dict.fromkeys((directory, BUILTIN_DIR)):
        candidate = folder / f"{template}.yaml"
        if candidate.is_file():
            return candidate
    known = sorted(
        {
            p.stem
            for folder in (directory, BUILTIN_DIR)
            if folder.is_dir()
            for p in scenario_files(folder)
        }
    )
    raise UsageError(f"unknown template {template!r}; valid templates: {', '.join(known)}")


def scaffold_text(name: str, source: Path) -> str:
    """The text of ``source`` with its top-level ``name:`` set to ``name``, comments kept."""
    text = source.read_text(encoding="utf-8")
    if _NAME_VALUE.search(text) is None:
        raise ValueError(f"{source}: no top-level 'name:' line to replace")
    return _NAME_VALUE.sub(lambda m: m.group(1) + name, text, count=1)


def _new(args: argparse.Namespace) -> int:
    from scenarios import BUILTIN_DIR, ScenarioError, parse_scenario

    name = args.name
    if not NAME_PATTERN.match(name):
        raise UsageError(
            f"invalid scenario name {name!r}: use lowercase letters, digits and underscores "
            "(it is also the file name)"
        )
    directory = Path(args.scenario_dir) if args.scenario_dir else BUILTIN_DIR
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory}: not a directory")
    target = directory / f"{name}.yaml"
    if target.exists():
        raise UsageError(f"{target} already exists; choose another name or delete it first")
    source = (
        _template_path(args.template, directory) if args.template else BUILTIN_DIR / TEMPLATE_FILE
    )
    try:
        text = scaffold_text(name, source)
        if args.template:
            text = f"# Copied from {args.template} by `schedbench scenarios new`.\n{text}"
        parse_scenario(text, target)
    except (ValueError, OSError) as exc:  # ScenarioError is a ValueError
        lines = exc.lines if isinstance(exc, ScenarioError) else [str(exc)]
        raise UsageError("the template does not validate:\n" + "\n".join(lines)) from None
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with target.open("x", encoding="utf-8") as handle:  # "x": never overwrite
            handle.write(text)
    except FileExistsError:
        raise UsageError(
            f"{target} already exists; choose another name or delete it first"
        ) from None
    except OSError as exc:
        raise UsageError(f"cannot write {target} ({exc.strerror or exc})") from None
    print(f"wrote {target}" + (f" (from {args.template})" if args.template else ""))
    where = f" --scenario-dir {args.scenario_dir}" if args.scenario_dir else ""
    print(f"next: edit it, then run `schedbench scenarios validate{where}`")
    return 0
