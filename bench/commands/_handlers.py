"""The ``--trust-handlers`` / ``--handlers-from DIR`` options of the commands that run tools.

A scenario's ``handler:`` is Python code (see ``scenarios.handlers``): a command that would
run one refuses, in one line, unless the user allowed it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from bench.errors import UsageError

if TYPE_CHECKING:  # imported when used: the CLI builds its parser before any command runs
    from scenarios import HandlerPolicy, Scenario


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--trust-handlers",
        action="store_true",
        help="allow every `handler: module:function` of the scenarios: Python code that runs "
        "as you (scenario files are data otherwise)",
    )
    parser.add_argument(
        "--handlers-from",
        action="append",
        default=[],
        metavar="DIR",
        help="allow the handlers whose module is a file in DIR (repeatable)",
    )


def policy(args: argparse.Namespace) -> HandlerPolicy:
    """The policy the options ask for; a --handlers-from that is no directory is a usage error."""
    from scenarios import HandlerPolicy

    for directory in args.handlers_from:
        if not Path(directory).is_dir():
            raise UsageError(f"--handlers-from {directory}: not a directory")
    return HandlerPolicy.from_dirs(args.handlers_from, trust_all=args.trust_handlers)


def require_allowed(scenarios: Iterable[Scenario], handlers: HandlerPolicy) -> None:
    """Refuse (one line) when a scenario names a handler the policy refuses or that cannot be
    imported; allowed handlers are imported here, before any run starts."""
    from scenarios import handler_problems

    problems = [
        f"scenario {scenario.name!r}: {problem}"
        for scenario in scenarios
        for problem in handler_problems(scenario, handlers, resolve=True)
    ]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise UsageError(problems[0] + more)
