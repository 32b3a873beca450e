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


def _command_modules() -> dict[str, ModuleType]:
    modules = {}
    for info in sorted(pkgutil.iter_modules(bench.commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        modules[info.name.replace("_", "-")] = importlib.import_module(
            f"bench.commands.{info.name}"
        )
    return modules


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schedbench",
        description="Benchmark LangChain agents against a self-built agent scheduler.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module in _command_modules().items():
        command = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``schedbench`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # as typed (run --cluster)
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
