"""The ``schedbench`` command line.

Each sub-command lives in its own module of ``bench.commands`` and exposes ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; this module only discovers and dispatches,
and turns the harness's exceptions (``bench.errors``) into exit codes.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

import bench.commands
from bench.errors import SchedbenchError
from bench.results.escape import visible


def _command_names() -> list[str]:
    found = pkgutil.iter_modules(bench.commands.__path__)
    return sorted(info.name for info in found if not info.name.startswith("_"))


def _command_modules(only: str | None = None) -> dict[str, ModuleType]:
    names = [n for n in _command_names() if only is None or n.replace("_", "-") == only]
    return {n.replace("_", "-"): importlib.import_module(f"bench.commands.{n}") for n in names}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone (its module is the only one
    imported: each command imports what it needs, ~1 s of CPU for all of them)."""
    parser = argparse.ArgumentParser(
        prog="schedbench",
        description="Benchmark LangChain agents against a self-built agent scheduler.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in _command_modules(command).items():
        command_parser = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command_parser)
        command_parser.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``schedbench`` console script."""
    typed = list(sys.argv[1:] if argv is None else argv)
    known = {n.replace("_", "-") for n in _command_names()}
    parser = build_parser(typed[0] if typed and typed[0] in known else None)
    args = parser.parse_args(typed)
    args.argv = typed  # as typed (run --cluster)
    try:
        return int(args._run(args) or 0)
    except SchedbenchError as exc:  # the one place errors become exit codes (bench.errors)
        print(visible(f"schedbench {args.command}: error: {exc}"), file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
