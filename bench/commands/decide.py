"""``schedbench decide WORKLOAD``: measure what a workload's question needs, answer on one page."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from bench.commands import _handlers as handler_options
from bench.commands._options import writable_dir
from bench.errors import UsageError

HELP = (
    "Answer a workload file (docs/workload.md): run its scenarios and engines at its latency "
    "and rate, write decision.md."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workload", help="the workload YAML file (see workloads/)")
    parser.add_argument("--out", help="results directory (default: reports/decide-<timestamp>)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke answer: 3 runs per cell, one round, one load process, short load levels",
    )
    parser.add_argument(
        "--build-envs",
        action="store_true",
        help="build the engine environments the run needs when they are missing (downloads "
        "packages)",
    )
    parser.add_argument(
        "--from-run",
        metavar="DIR",
        help="measure nothing: write the answer again from the run folder DIR that "
        "`schedbench decide` measured for this workload",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="measure shard I of N of the workload's run, split by scenario as `schedbench run "
        "--shard` splits (docs/cluster.md); no answer: merge the shards, then --from-run",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="measure one shard per worker of a Dask distributed cluster (its scheduler's "
        "address, or `local[:N]`), merge them into --out and answer from the merged run",
    )
    handler_options.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from bench.commands.run import _execute, _require_built_environments, scenarios_used
    from bench.engines.plugins import engine_targets
    from bench.results.folder import load_run_folder
    from bench.results.store import RunStore
    from bench.runner.shard import Shard, shard_config
    from bench.workload import WorkloadError, load_workload
    from bench.workload.answer import write_answer
    from bench.workload.decide import (
        build_config,
        engines_for,
        played_scenarios,
        rewrites_scenarios,
        write_scenarios,
    )
    from scenarios import load_scenarios

    handlers = handler_options.policy(args)
    try:
        workload = load_workload(args.workload, engine_names=tuple(engine_targets()))
    except WorkloadError as exc:
        raise UsageError(f"bad workload file:\n{exc}") from None
    choice = engines_for(workload)
    if args.from_run is not None:
        if args.out is not None or args.quick or args.shard or args.cluster:
            raise UsageError("--from-run measures nothing: drop --out, --quick, --shard, --cluster")
        folder = load_run_folder(args.from_run)
        stored = tuple(folder.config.get("latencies") or ())
        if stored != (workload.latency_spec,):
            raise UsageError(
                f"--from-run {args.from_run}: measured at {', '.join(stored) or 'nothing'}, "
                f"not at this workload's latency {workload.latency_spec}"
            )
        page, path = write_answer(folder, workload, choice.engines, str(args.workload))
        print(page, end="")
        print(f"\n→ {path}")
        return 0
    if args.cluster is not None:
        return _on_cluster(args, workload, choice)
    out = (
        Path(args.out) if args.out else Path("reports") / f"decide-{time.strftime('%Y%m%d-%H%M%S')}"
    )
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    store = RunStore(out)
    if store.exists():
        raise UsageError(f"--out {out}: already holds a run; choose another directory")
    scenarios = played_scenarios(workload, load_scenarios(workload.scenario_dir))
    # rewritten (tool latency, earlier conversation): the run plays copies in its folder
    played_dir = out / "scenarios" if rewrites_scenarios(workload) else None
    scenario_dir = str(played_dir.resolve()) if played_dir is not None else None
    try:
        config = build_config(
            workload, scenarios, quick=args.quick, engines=choice.engines, scenario_dir=scenario_dir
        )
    except ValueError as exc:
        raise UsageError(f"{args.workload}: {exc}") from None
    if args.shard is not None:
        config = shard_config(config, scenarios, Shard.parse(args.shard))
    handler_options.require_allowed(scenarios_used(config, scenarios), handlers)
    if not args.build_envs:
        _require_built_environments(config.engines)
    writable_dir(out, "--out")
    store.create()
    if played_dir is not None:
        write_scenarios(scenarios, played_dir)
    code = _execute(config, scenarios, store, resume=False, run_id=out.name, handlers=handlers)
    if args.shard is not None:
        print(
            f"shard {args.shard} of the workload's run → {out}; when every shard is measured: "
            f"`schedbench merge SHARD… --out DIR`, then `schedbench decide {args.workload} "
            "--from-run DIR`"
        )
        return code
    folder = load_run_folder(out)
    notes = list(choice.notes)
    if code != 0:
        notes.append("the run is incomplete (see its warnings): some numbers may be missing")
    page, path = write_answer(folder, workload, choice.engines, str(args.workload), notes)
    print()
    print(page, end="")
    print(f"\n→ {path}")
    return code


def _on_cluster(args: argparse.Namespace, workload: Any, choice: Any) -> int:
    """``--cluster``: ``decide --shard i/n`` on each worker, merged into ``--out``, answered."""
    from bench.results.folder import load_run_folder
    from bench.runner.cluster import run_on_cluster, shard_argv
    from bench.workload.answer import write_answer

    if args.shard is not None:
        raise UsageError("--cluster picks the shards itself; --shard is for one shard")
    if args.out is None:
        raise UsageError("--cluster needs --out DIR (where the merged run goes)")
    out = Path(args.out)
    if (out / "meta.json").exists() or (out / "shards").exists():
        raise UsageError(f"--out {out}: already holds a run; choose another directory")
    argv = shard_argv(args.argv[1:])
    # the shards run from the project root: the workload file by its absolute path
    argv = [str(Path(args.workload).resolve()) if a == args.workload else a for a in argv]
    code = run_on_cluster(args.cluster, argv, out, command="decide")
    if not (out / "meta.json").exists():
        return code or 1
    notes = list(choice.notes)
    if code != 0:
        notes.append("the run is incomplete (see its warnings): some numbers may be missing")
    page, path = write_answer(load_run_folder(out), workload, choice.engines, args.workload, notes)
    print()
    print(page, end="")
    print(f"\n→ {path}")
    return code
