"""``schedbench record``: an agent's real traffic, through a proxy, into a scenario folder."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.traffic import Built, Redactor

HELP = (
    "Record an agent's chat completions through a proxy on 127.0.0.1 (forwarding to an "
    "OpenAI-compatible upstream) into a scenario that replays them with their timings."
)
DEFAULT_PORT = 8766
_NAME = re.compile(r"^[a-z0-9_]+$")


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


def scenario_name(given: str | None, source: str) -> str:
    """``--name``, checked; else a name made from ``source``."""
    from bench.cli import UsageError
    from bench.traffic.write import name_from

    if given is None:
        return name_from(source)
    if not _NAME.match(given):
        raise UsageError(
            f"invalid scenario name {given!r}: use lowercase letters, digits and underscores "
            "(it is also the file name)"
        )
    return given


def redactor(specs: list[str]) -> Redactor:
    from bench.cli import UsageError
    from bench.traffic.redact import Redactor

    try:
        return Redactor.from_specs(specs)
    except ValueError as exc:
        raise UsageError(f"--redact: {exc}") from None


def run(args: argparse.Namespace) -> int:
    from bench.cli import UsageError
    from bench.traffic.proxy import serve
    from bench.traffic.session import RecordingSession

    if not re.match(r"^https?://[^/\s]+", args.upstream):
        raise UsageError(f"--upstream must be an http:// or https:// URL, not {args.upstream!r}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {args.port}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    name = scenario_name(args.name, out.resolve().name)
    session = RecordingSession(out, name, redactor(args.redact), on_event=print)
    existing = session.existing_files()
    if existing:
        raise UsageError(
            f"{existing[0]} already exists; choose another --name or --out, or delete it first"
        )
    print(f"recording into {out}/{name}.yaml (log: {session.log_path.name}); Ctrl-C to stop")
    try:
        serve(args.upstream, session, args.port)
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}") from None
    return summarise(session.write() if session.exchanges else None, out)


def summarise(built: Built | None, directory: Path) -> int:
    """Print what was written, what was left out and why; 2 if a conversation failed."""
    if built is None:
        print("nothing recorded: no chat completion went through the proxy")
        return 0
    for scenario in built.scenarios:
        calls = sum(len(turn.tool_calls) for turn in scenario.script)
        print(
            f"wrote {directory / scenario.name}.yaml "
            f"({len(scenario.script)} LLM calls, {calls} tool calls)"
        )
    for note in built.notes:
        print(note)
    for error in built.errors:
        print(f"error: {error}")
    if built.scenarios:
        print(f"next: schedbench scenarios validate --scenario-dir {directory}")
    return 2 if built.errors else 0
