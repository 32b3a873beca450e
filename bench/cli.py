"""The ``schedbench`` command line.

Each sub-command lives in its own module of ``bench.commands`` and exposes ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``; this module only discovers and dispatches.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import bench.commands
from bench.escape import visible

EXIT_USAGE = 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2 (so is an unreadable run
    folder, ``bench.results.load.RunFolderError``)."""


def check_range(option: str, value: int | None, low: int, high: int) -> None:
    """A number option outside ``low..high`` is a usage error that names the allowed range."""
    if value is not None and not low <= value <= high:
        raise UsageError(f"{option} must be between {low:,} and {high:,}, not {value:,}")


def writable_dir(directory: Path, option: str, hint: str = "") -> None:
    """Create ``directory`` if needed and prove it writable (a probe file), before any work
    that would only fail at its first write."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(f"{option} {directory}: cannot write there ({reason}){hint}") from None


def _command_modules() -> dict[str, object]:
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
    from bench.results.load import RunFolderError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except (UsageError, RunFolderError) as exc:
        print(visible(f"schedbench {args.command}: error: {exc}"), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    # run as ``python -m bench.cli``: use the module the commands import, not this copy of
    # it (whose UsageError is another class that no ``except`` here would catch)
    from bench import cli

    sys.exit(cli.main())
