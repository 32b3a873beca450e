"""``schedbench debug-score [--out RUN_DIR] [--engines a,b|all] [--scenarios x,y|all]
[--outputs all|failures]``."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands import _handlers as handler_options
from bench.commands._options import check_range, writable_dir
from bench.errors import UsageError

HELP = "Capture and score every engine's debug modes; write debuggability.csv into a run folder."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default="reports/debuggability",
        help="run folder to write debuggability.csv into (default: reports/debuggability); "
        "with meta.json there and no --engines/--scenarios, the run's own are used",
    )
    parser.add_argument("--engines", help="comma-separated engine names, or all")
    parser.add_argument("--scenarios", help="comma-separated scenario names, or all")
    parser.add_argument("--scenario-dir", help="directory of scenario YAML files")
    parser.add_argument(
        "--cost-runs",
        type=int,
        default=5,
        help="runs each way to measure a mode's cost (0: not measured)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=4,
        help="engines captured in this many child processes at once (most of a capture waits "
        "on a scripted timeout; each mode's cost is measured first, one at a time; default 4)",
    )
    parser.add_argument(
        "--outputs",
        choices=("all", "failures"),
        default="all",
        help="which raw outputs to write under debug/: all (default), or only the exhibit "
        "scenarios' and those of runs with a failure",
    )
    parser.add_argument(
        "--table",
        default="customer_returns,tool_flaky",
        help="scenarios of the markdown table printed at the end ('' for none)",
    )
    handler_options.add_arguments(parser)


def _names(value: str | None, valid: list[str], what: str) -> list[str] | None:

    if value is None:
        return None
    if value == "all":
        return list(valid)
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in valid]
    if unknown or not names:
        raise UsageError(
            f"unknown {what} {', '.join(map(repr, unknown)) or repr(value)}; "
            f"valid {what}s: {', '.join(valid)}"
        )
    return names


def run(args: argparse.Namespace) -> int:
    from bench.debuggability.csvrows import read_rows
    from bench.debuggability.results import markdown_table, score_run_dir, write_debuggability
    from bench.engines import ENGINE_NAMES
    from bench.engines.kit.tools import allow_handlers
    from scenarios import ScenarioError, load_scenarios

    check_range("--cost-runs", args.cost_runs, 0, 1000)
    check_range("--jobs", args.jobs, 1, 64)
    handlers = handler_options.policy(args)
    try:
        library = load_scenarios(args.scenario_dir)
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    engines = _names(args.engines, list(ENGINE_NAMES), "engine")
    scenarios = _names(args.scenarios, list(library), "scenario")
    handler_options.require_allowed([library[n] for n in scenarios or library], handlers)
    allow_handlers(handlers)
    out = Path(args.out)
    writable_dir(out, "--out")
    if engines is None and scenarios is None and (out / "meta.json").is_file():
        path = score_run_dir(
            out,
            cost_runs=args.cost_runs,
            outputs=args.outputs,
            jobs=args.jobs,
            extra_args=handlers.worker_args(),
        )
    else:
        path = write_debuggability(
            out,
            engines or list(ENGINE_NAMES),
            scenarios,
            args.scenario_dir,
            cost_runs=args.cost_runs,
            outputs=args.outputs,
            jobs=args.jobs,
            extra_args=handlers.worker_args(),
        )
    print(f"wrote {path}")
    table = [s for s in args.table.split(",") if s]
    if table:
        print(markdown_table(read_rows(path), table))
    return 0
