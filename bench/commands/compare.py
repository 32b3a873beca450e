"""``schedbench compare RUN_A RUN_B``: is B faster or slower than A, and is it significant?"""

from __future__ import annotations

import argparse

from bench.errors import UsageError

HELP = "Compare two runs: ratio of medians per benchmark and a Mann-Whitney U test (pyperf-style)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", metavar="RUN_A", help="the reference run directory")
    parser.add_argument("run_b", metavar="RUN_B", help="the changed run directory")
    parser.add_argument(
        "--metric",
        choices=["wall_ms", "cpu_ms", "overhead_ms"],
        default="wall_ms",
        help="what to compare (default wall_ms)",
    )
    parser.add_argument(
        "--alpha", type=float, default=0.05, help="significance level (default 0.05)"
    )


def run(args: argparse.Namespace) -> int:
    from bench.results.compare import compare_runs, load_run, render
    from bench.runner.finish import engine_summaries

    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha must be between 0 and 1, not {args.alpha}")
    # an unreadable run folder (bench.results.folder.RunFolderError) is one line, exit 2 (cli)
    ref, changed = load_run(args.run_a), load_run(args.run_b)
    comparisons = compare_runs(ref, changed, metric=args.metric, alpha=args.alpha)
    engines = (engine_summaries(ref.folder), engine_summaries(changed.folder))
    text = render(ref, changed, comparisons, metric=args.metric, alpha=args.alpha, engines=engines)
    print(text, end="")
    return 0
