"""``schedbench trace SCENARIO --engine E [--mode M] [--side-by-side]``."""

from __future__ import annotations

import argparse
import shutil
import sys

from bench.commands import _handlers as handler_options
from bench.commands._options import check_range
from bench.errors import UsageError

HELP = "Run one scenario with a debug mode on and print what that mode shows."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scenario", help="scenario name (see `schedbench scenarios list`)")
    parser.add_argument(
        "--engine",
        action="append",
        required=True,
        help="engine name; give it twice with --side-by-side",
    )
    parser.add_argument(
        "--mode",
        action="append",
        help="debug mode (default: the engine's first); one per --engine, in the same order",
    )
    parser.add_argument("--scenario-dir", help="directory of scenario YAML files")
    parser.add_argument(
        "--side-by-side", action="store_true", help="show two engines' outputs in two columns"
    )
    parser.add_argument("--width", type=int, help="total width for --side-by-side")
    parser.add_argument(
        "--score",
        action="store_true",
        help="after the output, print its score against the run's ground truth",
    )
    parser.add_argument(
        "--missed", action="store_true", help="with --score: list the facts not found"
    )
    handler_options.add_arguments(parser)


def _choose(args: argparse.Namespace) -> list[tuple[str, str]]:
    from bench.debuggability.modes import ENGINE_MODES
    from bench.engines import ENGINE_NAMES

    engines: list[str] = args.engine
    modes: list[str] = args.mode or []
    if args.side_by_side and len(engines) != 2:
        raise UsageError("--side-by-side needs exactly two --engine options")
    if not args.side_by_side and len(engines) != 1:
        raise UsageError("give one --engine (or two with --side-by-side)")
    if len(modes) > len(engines):
        raise UsageError("more --mode options than --engine options")
    chosen = []
    for i, engine in enumerate(engines):
        if engine not in ENGINE_NAMES:
            raise UsageError(f"unknown engine {engine!r}; valid engines: {', '.join(ENGINE_NAMES)}")
        valid = ENGINE_MODES[engine]
        mode = modes[i] if i < len(modes) else valid[0]
        if mode not in valid:
            raise UsageError(
                f"unknown debug mode {mode!r} for engine {engine!r}; valid modes: {', '.join(valid)}"
            )
        chosen.append((engine, mode))
    return chosen


def _scenario(args: argparse.Namespace):
    from scenarios import ScenarioError, load_scenarios

    try:
        library = load_scenarios(args.scenario_dir)
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    if args.scenario not in library:
        raise UsageError(
            f"unknown scenario {args.scenario!r}; valid scenarios: {', '.join(library)}"
        )
    return library[args.scenario]


def run(args: argparse.Namespace) -> int:
    from bench.engines.kit.tools import allow_handlers

    check_range("--width", args.width, 40, 1000)
    chosen = _choose(args)
    handlers = handler_options.policy(args)
    scenario = _scenario(args)
    handler_options.require_allowed([scenario], handlers)
    allow_handlers(handlers)

    from bench.debuggability.capture import capture
    from bench.debuggability.render import EMPTY, score_line, side_by_side
    from bench.debuggability.score import score_output

    captures = [capture(engine, scenario, mode) for engine, mode in chosen]
    out = sys.stdout
    if args.side_by_side:
        (left, right) = captures
        width = args.width or max(shutil.get_terminal_size((160, 40)).columns, 80)
        out.write(
            side_by_side(
                f"{left.engine} · {left.mode}",
                left.output,
                f"{right.engine} · {right.mode}",
                right.output,
                width,
            )
            + "\n"
        )
    else:
        text = captures[0].output
        out.write(text if text.endswith("\n") or not text else text + "\n")
        if not text:
            print(EMPTY, file=sys.stderr)
    if args.score:
        for c in captures:
            score = score_output(c.output, c.truth)
            out.write(f"# {c.engine} · {c.mode} · {c.scenario}: {score_line(score)}\n")
            if args.missed:
                for fact in score.missed:
                    out.write(f"#   missed {fact.label()}\n")
    return 0
