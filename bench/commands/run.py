"""``schedbench run``: measure engines × scenarios into a results directory."""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

from bench.commands import _handlers as handler_options
from bench.commands._options import check_range, defaults_of, writable_dir
from bench.errors import UsageError
from bench.runner.phases.load import plan as loadplan
from bench.runner.plan import RunConfig
from bench.runner.shard import Shard, shard_config

HELP = "Measure engines on scenarios (isolated workers, interleaved rounds) into reports/<run-id>/."

_LIST_HELP = "comma-separated names, or 'all' (default: all)"
# the help says what the defaults are: read from them, never retyped
_D = defaults_of(RunConfig)
_Q = RunConfig.quick_defaults()


def _list(values: tuple[float, ...]) -> str:
    return ",".join(f"{v:g}" for v in values)


# the load phase's search, as its help describes it (bench.runner.phases.load.plan)
_COMMON, _STEP, _RES, _MULTI, _CONFIRM = (
    loadplan.COMMON_RATE,
    loadplan.STEP,
    loadplan.RESOLUTION,
    loadplan.MULTI_RESOLUTION,
    loadplan.CONFIRM_WINDOW,
)

# bounds of the load phase's numbers (bench.runner.phases.load.plan keeps the same)
_MAX_RATE = 5000.0
_MAX_PROCESSES = 64
_WINDOW = (0.1, 60.0)
_BUDGET = (1.0, 3600.0)

# what the command line may ask for: past these a run plans more than a machine can hold
REPEAT_RANGE = (1, 10_000)
WARMUP_RANGE = (0, 1_000)
ROUNDS_RANGE = (1, 100)
CONCURRENCY_RANGE = (1, 1_000)
MAX_CONCURRENCY_LEVELS = 10
SEED_RANGE = (0, 2**32 - 1)
LANES_RANGE = (1, 64)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engines", help=f"engines to measure: {_LIST_HELP}")
    parser.add_argument("--scenarios", help=f"scenarios to run: {_LIST_HELP}")
    parser.add_argument("--scenario-dir", help="directory of scenario YAML files")
    parser.add_argument(
        "--repeat",
        type=int,
        help="timed runs per engine × scenario (default: budgeted by each scenario's expected "
        f"run time, {_D['min_repeats']} to {_D['max_repeats']}; --quick: {_Q['min_repeats']} to "
        f"{_Q['max_repeats']})",
    )
    parser.add_argument(
        "--warmup",
        type=int,
        help=f"discarded runs before each batch (default {_D['warmup']}; --quick: {_Q['warmup']})",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        help="rounds of interleaved batches, each in fresh worker processes "
        f"(default {_D['rounds']}; --quick: {_Q['rounds']})",
    )
    parser.add_argument(
        "--concurrency",
        help=f"throughput concurrency levels, comma-separated (default {_list(_D['concurrency'])})",
    )
    parser.add_argument(
        "--latency",
        type=_latency,
        help="mock LLM latency profile of the suite: zero (default), realistic, recorded (each "
        "turn's recorded timing), both (zero and realistic), or your model's as "
        "custom:ttft:MS,tps:N,jitter:F (docs/workload.md); throughput uses zero and realistic",
    )
    parser.add_argument(
        "--transport", choices=["inprocess", "loopback"], help="how engines reach the mock"
    )
    parser.add_argument(
        "--quick", action="store_true", help="smoke run: one round, few repeats (~1 minute)"
    )
    parser.add_argument("--out", help="results directory (default: reports/<timestamp>)")
    parser.add_argument(
        "--build-envs",
        action="store_true",
        help="build the engine environments the run needs when they are missing or their pins "
        "changed (downloads packages); without it the run refuses and names `make envs`",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out: only runs without a row (or with a crashed one)",
    )
    parser.add_argument("--seed", type=int, help="seed of the bootstrap confidence intervals")
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run shard I of N of this run, split by scenario (every engine on a share of the "
        "scenarios; phases that are not per scenario on one shard each); on N hosts, then "
        "`schedbench merge` the N folders (docs/cluster.md)",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run one shard per worker of a Dask distributed cluster (its scheduler's address, "
        "or local / local:N: N worker processes here, default 2) and merge them into --out "
        "(docs/cluster.md)",
    )
    parser.add_argument(
        "--spread-load",
        action="store_true",
        help="with --cluster: the load phase after the shards, the mock on the first worker's "
        "node and the load workers on the others' (docs/cluster.md)",
    )
    parser.add_argument("--no-throughput", action="store_true", help="skip the throughput phase")
    parser.add_argument(
        "--throughput-engines",
        help="engines of the throughput phase: comma-separated names, or 'all' (default: the "
        "bare loop and the headline pairs, as the load phase)",
    )
    parser.add_argument("--no-footprint", action="store_true", help="skip the import probes")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="measure every outcome cell and version-matrix line again instead of reusing an "
        "earlier run's exact results (never timings) from the results cache "
        "($SCHEDBENCH_CACHE_DIR, default ~/.cache/schedbench; docs/measurement.md)",
    )
    parser.add_argument(
        "--no-ttft",
        action="store_true",
        help=f"skip the TTFT phase (each engine's token stream on {_D['ttft_scenario']})",
    )
    parser.add_argument(
        "--ttft-lanes",
        type=int,
        help="engines streamed at a time in the TTFT phase (default "
        f"{_D['ttft_lanes']}: two on 2 cores add 1-4 ms to the added TTFT)",
    )
    parser.add_argument(
        "--outcome-lanes",
        type=int,
        help="fault scenarios judged this many engines at a time (their runs mostly wait on "
        f"scripted deadlines; default {_D['outcome_lanes']})",
    )
    handler_options.add_arguments(parser)
    load = parser.add_argument_group("the open-loop load phase (load.jsonl)")
    load.add_argument("--no-load", action="store_true", help="skip the load phase")
    load.add_argument(
        "--load-engines",
        help="engines of the load phase, comma-separated; 'all' = every measured engine of "
        "the run (default: raw, both schedulers, each LangChain stack's default and "
        "production engines, as far as the run has them)",
    )
    load.add_argument(
        "--load-rates",
        help=f"offered rates in runs/s, comma-separated, each up to {_MAX_RATE:g}: walk this "
        "grid (up while sustained, down while not) instead of searching. Default: search each "
        f"capacity — a level at {_COMMON:g} runs/s (the rate CPU per run is compared at; it "
        f"calibrates the first guess), then up or down by ×{_STEP:g} and a log-scale "
        f"bisection until sustained and not-sustained rates are within ×{_RES:g} (±10 %%), "
        f"both ends confirmed by a {_CONFIRM:g}× longer second level; more processes: "
        f"within ×{_MULTI:g}, unconfirmed. 6-9 levels (~9 s each) per engine in one process, 2-5 in "
        f"more (--quick: {_list(_Q['load_rates'])})",
    )
    load.add_argument(
        "--load-processes",
        help=f"engine process counts, comma-separated, 1..{_MAX_PROCESSES} (default: 1 and "
        "the machine's cores)",
    )
    load.add_argument(
        "--load-window",
        type=float,
        help=f"seconds of measured arrivals per level, {_WINDOW[0]:g}..{_WINDOW[1]:g}; the "
        "search wants 5 or more (a 1 s window passes an engine 5 %% over capacity most of "
        f"the time) (default {_D['load_window_s']:g}; --quick: {_Q['load_window_s']:g})",
    )
    load.add_argument(
        "--load-budget",
        type=float,
        help=f"seconds the phase may take, {_BUDGET[0]:g}..{_BUDGET[1]:g}; engines left "
        f"after it are skipped (default {_D['load_budget_s']:g}; --quick: {_Q['load_budget_s']:g})",
    )


def _names(value: str | None, valid: tuple[str, ...], what: str) -> tuple[str, ...]:

    if value is None or value.strip() == "all":
        return valid
    names = tuple(dict.fromkeys(n.strip() for n in value.split(",") if n.strip()))
    if not names:
        raise UsageError(f"--{what}: no names given")
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise UsageError(
            f"unknown {what[:-1]} {', '.join(map(repr, unknown))}; valid {what}: {', '.join(valid)}"
        )
    return names


def _latency(value: str) -> str:
    """A ``--latency`` value: ``both``, or a profile ``LatencyProfile.named`` knows."""
    from bench.referee.latency import LatencyProfile

    if value == "ttft":
        raise argparse.ArgumentTypeError("ttft is the TTFT phase's profile, not the suite's")
    if value == "both":
        return value
    try:
        LatencyProfile.named(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _levels(value: str | None) -> tuple[int, ...] | None:

    if value is None:
        return None
    try:
        levels = tuple(int(v) for v in value.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"--concurrency: expected integers like 1,10,50, not {value!r}") from None
    low, high = CONCURRENCY_RANGE
    if not levels or any(not low <= level <= high for level in levels):
        raise UsageError(
            f"--concurrency: every level must be between {low:,} and {high:,} (got {value!r})"
        )
    levels = tuple(dict.fromkeys(levels))
    if len(levels) > MAX_CONCURRENCY_LEVELS:
        raise UsageError(
            f"--concurrency: at most {MAX_CONCURRENCY_LEVELS} levels, not {len(levels)}"
        )
    return levels


def _numbers(option: str, value: str | None, kind: type, low: float, high: float) -> tuple | None:
    """A comma-separated list of numbers within [low, high] (``--load-rates``, ...)."""

    if value is None:
        return None
    try:
        numbers = tuple(kind(v) for v in value.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"{option}: expected {kind.__name__}s like 10,50, not {value!r}") from None
    if not numbers:
        raise UsageError(f"{option}: no values given")
    bad = [n for n in numbers if not low <= n <= high or n != n]
    if bad or (kind is float and 0 in numbers):
        shown = ", ".join(f"{n:g}" for n in bad or [0])
        span = f"above 0 and at most {high:g}" if kind is float else f"{low:g}..{high:g}"
        raise UsageError(f"{option}: {shown} out of range (each must be {span})")
    return tuple(dict.fromkeys(numbers))


def _bounded(option: str, value: float | None, low: float, high: float) -> None:

    if value is not None and not low <= value <= high:
        raise UsageError(f"{option} must be between {low:g} and {high:g}, not {value:g}")


def _check_load(args: argparse.Namespace) -> None:
    _numbers("--load-rates", args.load_rates, float, 0.0, _MAX_RATE)
    _numbers("--load-processes", args.load_processes, int, 1, _MAX_PROCESSES)
    _bounded("--load-window", args.load_window, *_WINDOW)
    _bounded("--load-budget", args.load_budget, *_BUDGET)


def _check_counts(args: argparse.Namespace) -> None:
    """Every number of the command line within its range, before anything is created."""

    check_range("--repeat", args.repeat, *REPEAT_RANGE)
    check_range("--warmup", args.warmup, *WARMUP_RANGE)
    check_range("--rounds", args.rounds, *ROUNDS_RANGE)
    check_range("--seed", args.seed, *SEED_RANGE)
    check_range("--outcome-lanes", args.outcome_lanes, *LANES_RANGE)
    check_range("--ttft-lanes", args.ttft_lanes, *LANES_RANGE)
    if args.shard is not None:
        Shard.parse(args.shard)
    _levels(args.concurrency)


def _resolved(directory: str | None) -> str | None:
    """A --scenario-dir as stored in meta.json: absolute, so that --resume and report find
    it again from any working directory."""
    return str(Path(directory).expanduser().resolve()) if directory is not None else None


def requested_config(args: argparse.Namespace, scenario_names: tuple[str, ...]) -> Any:
    """The RunConfig the command line asks for (defaults filled in)."""
    from bench.engines.plugins import builtin_engine_names, engine_targets

    known = tuple(engine_targets())
    engines = (
        builtin_engine_names()
        if args.engines is None or args.engines.strip() == "all"
        else _names(args.engines, known, "engines")
    )
    values: dict[str, Any] = {}
    if args.quick:
        values.update(RunConfig.quick_defaults())
    values["engines"] = engines
    values["scenarios"] = _names(args.scenarios, scenario_names, "scenarios")
    values["scenario_dir"] = _resolved(args.scenario_dir)
    if args.latency is not None:
        values["latencies"] = ("zero", "realistic") if args.latency == "both" else (args.latency,)
    for name in ("transport", "repeat", "warmup", "rounds", "seed", "outcome_lanes", "ttft_lanes"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    levels = _levels(args.concurrency)
    if levels is not None:
        values["concurrency"] = levels
    if args.no_throughput:
        values["throughput"] = False
    if args.throughput_engines is not None:
        from bench.runner.plan import every_phase

        values["throughput_engines"] = (
            every_phase(engines)
            if args.throughput_engines.strip() == "all"
            else _names(args.throughput_engines, known, "throughput-engines")
        )
    if args.no_footprint:
        values["footprint"] = False
    if args.no_ttft:
        values["ttft"] = False
    if args.no_cache:
        values["cache"] = False
    values.update(_load_values(args, known, values["engines"]))
    if args.shard is not None:
        values["shard"] = str(Shard.parse(args.shard))
    return RunConfig(**values)


def _load_values(
    args: argparse.Namespace, known: tuple[str, ...], engines: tuple[str, ...]
) -> dict[str, Any]:
    """The RunConfig fields the ``--load-*`` options set."""
    from bench.runner.plan import measured

    values: dict[str, Any] = {}
    if args.no_load:
        values["load"] = False
    if args.load_engines is not None:
        if args.load_engines.strip() == "all":
            values["load_engines"] = measured(engines)
        else:
            values["load_engines"] = _names(args.load_engines, known, "load-engines")
    rates = _numbers("--load-rates", args.load_rates, float, 0.0, _MAX_RATE)
    if rates is not None:
        values["load_rates"] = tuple(sorted(rates))
        values["load_start_rate"] = min(rates, key=lambda r: abs(r - 50.0))
    processes = _numbers("--load-processes", args.load_processes, int, 1, _MAX_PROCESSES)
    if processes is not None:
        values["load_processes"] = tuple(sorted(processes))
    if args.load_window is not None:
        values["load_window_s"] = args.load_window
    if args.load_budget is not None:
        values["load_budget_s"] = args.load_budget
    return values


# options that, given with --resume, must agree with the stored run
_RESUME_FIELDS = {
    "engines": "engines",
    "scenarios": "scenarios",
    "scenario_dir": "scenario_dir",
    "repeat": "repeat",
    "warmup": "warmup",
    "rounds": "rounds",
    "concurrency": "concurrency",
    "latency": "latencies",
    "transport": "transport",
    "seed": "seed",
    "shard": "shard",
    "quick": "quick",
    "no_throughput": "throughput",
    "throughput_engines": "throughput_engines",
    "no_footprint": "footprint",
    "no_ttft": "ttft",
    "no_load": "load",
    "load_engines": "load_engines",
    "load_rates": "load_rates",
    "load_processes": "load_processes",
    "load_window": "load_window_s",
}


def _stored_config(store: Any) -> Any:
    if not store.path("meta.json").exists():
        raise UsageError(f"--resume: {store.directory} holds no run to resume (no meta.json)")
    return RunConfig.from_dict(store.read_meta()["config"])


def _resume_config(args: argparse.Namespace, stored: Any, scenario_names: tuple[str, ...]) -> Any:

    asked = requested_config(args, scenario_names)
    for option, field in _RESUME_FIELDS.items():
        given = getattr(args, option)
        if given is None or given is False:
            continue
        mine, theirs = getattr(asked, field), getattr(stored, field)
        if field == "scenario_dir":  # runs of older versions stored the path as typed
            theirs = _resolved(theirs)
        if mine != theirs:
            raise UsageError(
                f"--resume: --{option.replace('_', '-')} differs from the stored run "
                f"({_said(getattr(stored, field))}); drop it, or start a new run with another "
                "--out"
            )
    missing = [s for s in stored.scenarios if s not in scenario_names]
    if missing:
        raise UsageError(f"--resume: scenarios of the stored run are gone: {', '.join(missing)}")
    if args.load_budget is not None:  # a time budget, not part of what is measured
        stored = dataclasses.replace(stored, load_budget_s=args.load_budget)
    return stored


def _on_cluster(args: argparse.Namespace) -> int:
    """``--cluster``: the shards on the cluster's workers, merged into ``--out``."""
    from bench.runner.cluster import run_on_cluster, shard_argv

    for option, given in (("--shard", args.shard), ("--resume", args.resume)):
        if given:
            raise UsageError(
                f"--cluster picks the shards itself; {option} is for one shard "
                "(docs/cluster.md: re-run a missing shard by hand, then merge)"
            )
    if not args.out:
        raise UsageError("--cluster needs --out DIR (where the merged run goes)")
    out = Path(args.out)
    if (out / "meta.json").exists() or (out / "shards").exists():
        raise UsageError(f"--out {out}: already holds a run; choose another directory")
    writable_dir(out, "--out")
    if args.spread_load and args.no_load:
        raise UsageError("--spread-load spreads the load phase; --no-load skips it: pick one")
    return run_on_cluster(
        args.cluster, shard_argv(args.argv[1:]), out, spread_load=args.spread_load
    )


def _said(value: object) -> str:
    """A stored option as a user would type it: ``raw, scheduler``, not a Python tuple."""
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) or "none"
    return str(value)


def scenarios_used(config: Any, scenarios: dict[str, Any]) -> list[Any]:
    """The scenarios a run will play: its own, each worker's cold reference run, TTFT's and
    throughput's."""
    from bench.runner.plan import pick_reference, ttft_scenario

    names = {*config.scenarios, pick_reference(config, scenarios)}
    names.add(ttft_scenario(config, scenarios))
    names.add(config.throughput_scenario)
    return [scenarios[name] for name in sorted(n for n in names if n in scenarios)]


def run(args: argparse.Namespace) -> int:
    from bench.results.store import RunStore
    from scenarios import ScenarioError, load_scenarios

    _check_counts(args)
    _check_load(args)
    _levels(args.concurrency)
    handlers = handler_options.policy(args)
    if args.resume and not args.out:
        raise UsageError("--resume needs --out DIR (the run to continue)")
    if args.cluster is not None:
        return _on_cluster(args)
    if args.spread_load:
        raise UsageError(
            "--spread-load places the load phase on a cluster's nodes: it needs --cluster"
        )
    run_id = time.strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else Path("reports") / run_id
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    store = RunStore(out)
    stored = _stored_config(store) if args.resume else None
    # --resume reads the scenarios where the run read them, unless told otherwise
    scenario_dir = args.scenario_dir if stored is None or args.scenario_dir else stored.scenario_dir
    try:
        scenarios = load_scenarios(scenario_dir)
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    if not scenarios:
        raise UsageError(f"{scenario_dir or 'scenarios/'}: no scenarios")
    scenario_names = tuple(scenarios)
    if stored is not None:
        config = _resume_config(args, stored, scenario_names)
    else:
        config = requested_config(args, scenario_names)
        if config.shard is not None:
            config = shard_config(config, scenarios, Shard.parse(config.shard))
        if store.exists():
            raise UsageError(
                f"--out {out}: already holds a run; pass --resume to continue it, "
                "or choose another directory"
            )
    handler_options.require_allowed(scenarios_used(config, scenarios), handlers)
    if not args.build_envs:
        _require_built_environments(config.engines)
    writable_dir(out, "--out")
    try:
        store.create()
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot create it ({exc.strerror})") from None
    return _execute(
        config, scenarios, store, resume=args.resume, run_id=out.name, handlers=handlers
    )


def _require_built_environments(engines: tuple[str, ...]) -> None:
    """Refuse a run whose engines need an environment not built for its current pins:
    building downloads packages, and a run never touches the network unasked."""
    from bench.envs import MAIN, EnvironmentUnavailable, is_built
    from bench.errors import UsageError
    from bench.runner.process import environment_of

    missing = []
    for name in sorted({environment_of(engine) for engine in engines} - {MAIN}):
        try:
            if not is_built(name):
                missing.append(name)
        except EnvironmentUnavailable:
            continue  # undeclared: the run records the reason for its engines
    if missing:
        raise UsageError(
            f"the engine environments {', '.join(missing)} are not built for their current "
            "pins: build them first with `make envs` (python -m bench.envs build), or pass "
            "--build-envs to let the run build them (it downloads packages)"
        )


def _execute(
    config: Any, scenarios: Any, store: Any, *, resume: bool, run_id: str, handlers: Any = None
) -> int:
    import sys

    from bench.results.files import SCHEMA_VERSION
    from bench.runner import metadata
    from bench.runner.finish import finish_run
    from bench.runner.orchestrator import Orchestrator
    from bench.runner.progress import make_progress

    if resume:
        meta = store.read_meta()
        meta["resumed_at"] = [*meta.get("resumed_at", []), metadata.now_iso()]
        meta["complete"] = False
    else:
        meta = metadata.collect(
            run_id=run_id,
            config=config.to_dict(),
            schema_version=SCHEMA_VERSION,
            output=store.directory,
        )
    store.write_meta(meta)
    progress = make_progress(sys.stderr)
    progress.message(
        f"schedbench run → {store.directory}: {len(config.engines)} engines × "
        f"{len(config.scenarios)} scenarios × {len(config.latencies)} latency profile(s), "
        f"{config.rounds} round(s), {config.transport}"
    )
    started, cpu_before = time.monotonic(), metadata.cpu_reading()
    try:
        with store:
            outcome = Orchestrator(config, scenarios, store, progress, handlers=handlers).run()
    except KeyboardInterrupt:
        progress.close()
        meta["interrupted_at"] = metadata.now_iso()
        # every segment's time counts: a run interrupted twice and resumed once took all three
        meta["duration_s"] = round(meta.get("duration_s", 0) + time.monotonic() - started, 1)
        store.write_meta(meta)
        print(
            f"interrupted; `schedbench run --out {store.directory} --resume` continues",
            file=sys.stderr,
        )
        return 130  # said once, here (bench.cli would say "interrupted" again)
    progress.close()
    return finish_run(
        store, config, meta, outcome, time.monotonic() - started, cpu_before=cpu_before
    )
