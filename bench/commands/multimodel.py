"""``schedbench multimodel --out DIR``: each engine switched from OpenAI to Anthropic's API."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.commands._options import writable_dir
from bench.errors import UsageError

HELP = (
    "Switch each engine from OpenAI to Anthropic's Messages API (ChatAnthropic, our "
    "AnthropicChatClient) and check it on a few scenarios against the mock: whether it works, "
    "and the statements the switch changed, into DIR/multimodel.json (~10 s)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="run folder to write multimodel.json into")
    parser.add_argument(
        "--scenarios",
        help="comma-separated scenario names (default: customer_returns, parallel_tool_calls, "
        "multi_turn_memory)",
    )
    parser.add_argument("--scenario-dir", help="directory of scenario YAML files")


def run(args: argparse.Namespace) -> int:
    from bench.multimodel.check import SCENARIOS, run_check
    from bench.report.multimodel import console_table
    from bench.results.folder import read_multimodel
    from scenarios import ScenarioError, load_scenarios

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    try:
        library = load_scenarios(args.scenario_dir)
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    names = SCENARIOS
    if args.scenarios is not None:
        names = tuple(dict.fromkeys(n.strip() for n in args.scenarios.split(",") if n.strip()))
    unknown = [n for n in names if n not in library]
    if unknown or not names:
        raise UsageError(
            f"unknown scenario {', '.join(map(repr, unknown)) or repr(args.scenarios)}; "
            f"valid scenarios: {', '.join(sorted(library))}"
        )
    handlers = [n for n in names if any(t.handler for t in library[n].tools)]
    if handlers:
        raise UsageError(
            f"scenario {handlers[0]!r} runs a handler (Python code): the multi-model check "
            "runs data-only scenarios"
        )
    writable_dir(out, "--out")
    path = run_check(out, [library[n] for n in names], progress=lambda t: print(t, file=sys.stderr))
    document, _ = read_multimodel(path)
    assert document is not None  # written just now
    print(f"wrote {path} in {document.duration_s:.0f} s")
    print(console_table(document))
    # a variant that does not work is a finding; an engine that could not even run is not
    broken = [c for r in document.rows for c in r.checks if c.status == "error"]
    return 1 if broken else 0
