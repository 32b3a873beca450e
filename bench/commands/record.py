"""``schedbench record``: an agent's real traffic, through a proxy, into a scenario folder."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = (
    "Record an agent's chat completions through a proxy on 127.0.0.1 (forwarding to an "
    "OpenAI-compatible upstream) into a scenario that replays them with their timings."
)
DEFAULT_PORT = 8766


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--upstream",
        required=True,
        metavar="URL",
        help="the OpenAI-compatible base URL to forward to (e.g. https://api.openai.com/v1, "
        "http://localhost:11434/v1)",
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port on 127.0.0.1 (0 picks a free one)"
    )
    parser.add_argument("--out", required=True, metavar="DIR", help="the scenario folder")
    add_naming_arguments(parser, "the --out folder's name")


def add_naming_arguments(parser: argparse.ArgumentParser, default: str) -> None:
    """``--name`` and ``--redact``, shared with ``scenarios import``."""
    parser.add_argument("--name", help=f"scenario name, [a-z0-9_]+ (default: {default})")
    parser.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="FIELD",
        help="mask every value of this JSON key, at any depth (tool arguments and results "
        "too), and wherever the value reappears; module:function names a redaction hook; "
        "repeat it for more. API keys and Authorization headers are never written",
    )


def run(args: argparse.Namespace) -> int:
    from bench.errors import UsageError
    from bench.traffic.importer import TrafficError, redactor, scenario_name
    from bench.traffic.record import record

    out = Path(args.out)
    try:
        name = scenario_name(args.name, out.resolve().name)
        built = record(args.upstream, out, name, redactor(args.redact), args.port)
    except TrafficError as exc:
        raise UsageError(str(exc)) from None
    return 2 if built is not None and built.errors else 0
