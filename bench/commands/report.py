"""``schedbench report RUN_DIR [--baseline RUN_B] [--out DIR]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands._options import writable_dir
from bench.errors import UsageError

HELP = "Write the decision report of a run: charts/, report.md and a self-contained report.html."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory of `schedbench run`")
    parser.add_argument(
        "--baseline",
        metavar="RUN_B",
        help="an earlier run to compare with (adds a comparison section)",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="where to write the report (default: RUN_DIR itself)"
    )


def run(args: argparse.Namespace) -> int:
    from bench.errors import RunFolderError
    from bench.report.build import build_report
    from bench.report.from_folder import load_run_dir

    run_dir = Path(args.run_dir)
    # an unreadable run folder (RunFolderError) is one line and exit 2 (bench.cli)
    data = load_run_dir(run_dir)  # corrupt rows: counted in the report's caveats
    compare = None
    label = "the baseline run"
    if args.baseline:
        from bench.report.baseline import compare_blocks

        try:
            compare = compare_blocks(run_dir, Path(args.baseline))
        except RunFolderError as exc:
            raise UsageError(f"--baseline: {exc}") from None
        label = f"baseline {Path(args.baseline).name}"
    out = Path(args.out) if args.out else run_dir
    if args.out:
        writable_dir(out, "--out")
    else:
        writable_dir(out, "RUN_DIR", "; write the report elsewhere with --out DIR")
    try:
        report = build_report(data, out, compare=compare, baseline_label=label)
    except OSError as exc:
        where = exc.filename or out
        raise UsageError(f"cannot write the report: {where}: {exc.strerror or exc}") from None
    counts: dict[str, int] = {}
    for claim in report.ledger:
        counts[claim.verdict] = counts.get(claim.verdict, 0) + 1
    verdicts = ", ".join(f"{n} {v}" for v, n in counts.items())
    charts = len(report.charts) // 2
    print(f"{report.markdown}\n{report.html}\n{out / 'charts'}/ ({charts} charts)")
    for key, reason in report.skipped:
        print(f"  skipped chart {key}: {reason}")
    print(f"claims ledger: {verdicts}")
    return 0
