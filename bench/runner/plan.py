"""What a run measures: its configuration, and the interleaved schedule of batches.

A **cell** is one engine × scenario × latency profile. Its timed runs are spread over
``rounds``; in round ``r`` every engine runs a **batch** of the cell's runs, engine after
engine, scenario after scenario, so that machine drift during the run hits all engines
alike. Each round uses a fresh worker process per engine (see ``bench.runner.run_worker``).

Repeats are budgeted by the expected duration of a run: a scenario that spends seconds
waiting on a timeout gets fewer runs than a zero-latency one, so that the default run fits
its time budget (see ``estimate_run_s``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bench.model.scenarios import reference_scenario
from scenarios import Scenario

T = TypeVar("T")

LATENCY_PROFILES = ("zero", "realistic")
TRANSPORTS = ("inprocess", "loopback")

# rough cost of one LLM step of the slowest engine, zero latency (AgentExecutor ≈ 4.5 ms)
_STEP_S = 0.005
# realistic profile: 300 ms to the first token + ~30 tokens at 50 tokens/s
_REALISTIC_STEP_S = 0.9
# what an OpenAI-style client waits before retrying a 5xx/429 without a retry-after
_DEFAULT_BACKOFF_S = 0.5
# the run deadline when a scenario sets none (bench.engines.common.DEFAULT_RUN_TIMEOUT_S)
_DEFAULT_RUN_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ThroughputProfile:
    """How throughput is measured at one latency profile, for each concurrency level."""

    latency: str
    window_s: float  # keep every slot busy at least this long (0: count-based only)
    min_runs: int  # at least this many runs per level (spread over the slots)
    warmup_runs: int  # untimed runs before the window (run concurrently, up to the level)


@dataclass(frozen=True)
class RunConfig:
    """Everything that decides what a run measures; stored in meta.json as ``config``."""

    engines: tuple[str, ...]
    scenarios: tuple[str, ...]
    scenario_dir: str | None = None
    latencies: tuple[str, ...] = ("zero",)
    transport: str = "inprocess"
    repeat: int | None = None  # timed runs per cell; None: budgeted by expected run time
    warmup: int = 2  # discarded runs at the start of each batch (fewer for slow scenarios)
    rounds: int = 3
    seed: int = 0
    quick: bool = False
    # timed seconds per cell the budgeted repeats aim at: a round's value is the median of its
    # runs, and the interval is over rounds (a fresh process each), so more runs per round
    # narrow little of it
    cell_budget_s: float = 0.6
    min_repeats: int = 5
    max_repeats: int = 15
    concurrency: tuple[int, ...] = (1, 10, 50)
    throughput: bool = True
    throughput_scenario: str | None = None  # None: the reference scenario (pick_reference)
    throughput_engines: tuple[str, ...] | None = None  # None: the load phase's default set
    # closed loop, zero latency: the single-process CPU peak (the open-loop load phase
    # measures what the realistic profile sustains)
    throughput_profiles: tuple[ThroughputProfile, ...] = (
        ThroughputProfile("zero", window_s=1.0, min_runs=1, warmup_runs=5),
    )
    footprint: bool = True
    versions: bool = True  # the LangChain version matrix (when the run has its engines)
    # exact results (outcome cells, the version matrix) reused from an earlier run when nothing
    # they depend on changed; never a timing (bench.runner.cache)
    cache: bool = True
    # one shard of a run split over hosts by scenario (bench.runner.shard): "i/n", and the
    # whole split, so that the merge can check the shards fit together
    shard: str | None = None
    shard_scenarios: tuple[tuple[str, ...], ...] | None = None
    footprint_processes: int = 3  # fresh interpreters per engine for the import-cost probe
    reference_scenario: str | None = None  # the cold first run of each worker (footprint)
    # the TTFT phase: each engine's user-facing token stream on one scenario (ttft.jsonl)
    ttft: bool = True
    ttft_scenario: str = "streaming_long_answer"
    ttft_latency: str = "ttft"  # a LatencyProfile name (bench.referee.latency)
    ttft_repeat: int = 6  # timed runs per engine
    ttft_warmup: int = 1  # discarded runs before them
    # engines streamed at once: 1, as two lanes on this 2-core host added 1-4 ms to the
    # judged figure (docs/measurement.md, "Time to first token"); more on a bigger machine
    ttft_lanes: int = 1
    # the outcome phase (bench.runner.phases.outcomes): fault scenarios are judged by their
    # outcome, their timings measure timeouts and back-offs, not the framework; this many runs
    # per cell, fault_confirm more when one misses its expectation, outcome_lanes engines at once
    fault_repeat: int = 1
    fault_confirm: int = 2
    outcome_lanes: int = 6
    # the open-loop load phase (load.jsonl; bench.runner.phases.load.phase): Poisson arrivals at a
    # searched (or given) series of offered rates, one process and one per core, the mock on
    # the load profile
    load: bool = True
    load_engines: tuple[str, ...] | None = None  # None: the registry's default set
    load_scenario: str = field(default_factory=lambda: str(reference_scenario()))
    load_latency: str = "realistic"
    # runs/s; empty: search each capacity (loadplan.search: the common rate, then a
    # bisection to ±10 %); given: walk that grid (loadplan.sweep)
    load_rates: tuple[float, ...] = ()
    load_start_rate: float = 50.0  # where each one-process walk of a grid starts
    load_processes: tuple[int, ...] | None = None  # None: 1 and the machine's cores
    load_window_s: float = 5.0  # measurement window (longer at low rates: load_min_runs)
    load_min_runs: int = 30  # measured runs per level at least (the window grows)
    load_ramp: float = 0.5  # unmeasured arrivals before the window, in scripted run times
    load_target_factor: float = 1.2  # p95 target = the scenario's scripted latency × this
    load_timeout_factor: float = 2.0  # a measured run still running at target × this is cut
    load_max_arrivals: int = 8000  # per process and level
    load_budget_s: float = 600.0  # engines left when the phase has run this long are skipped
    load_probe_s: float = 1.0  # the bare client's mock-ceiling probe, per mode (JSON, streamed)

    @classmethod
    def quick_defaults(cls) -> dict[str, Any]:
        """What ``--quick`` changes: one round, few runs, short throughput windows, one
        load level per engine in one process, without a ramp."""
        return {
            "quick": True,
            "rounds": 1,
            "warmup": 1,
            "cell_budget_s": 0.05,
            "min_repeats": 2,
            "max_repeats": 5,
            "throughput_profiles": (
                ThroughputProfile("zero", window_s=0.25, min_runs=1, warmup_runs=2),
            ),
            "footprint_processes": 1,
            "ttft_repeat": 2,
            "ttft_warmup": 1,
            "load_rates": (20.0,),
            "load_start_rate": 20.0,
            "load_window_s": 0.25,
            "load_min_runs": 5,
            "load_ramp": 0.0,
            "load_processes": (1,),
            "load_budget_s": 90.0,
            "load_probe_s": 0.25,
        }

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for name in ("engines", "scenarios", "latencies", "concurrency", "load_rates"):
            if name in values:
                values[name] = tuple(values[name])
        for name in ("load_engines", "load_processes", "throughput_engines"):
            if values.get(name) is not None:
                values[name] = tuple(values[name])
        if values.get("shard_scenarios") is not None:
            values["shard_scenarios"] = tuple(tuple(p) for p in values["shard_scenarios"])
        if "throughput_profiles" in values:
            values["throughput_profiles"] = tuple(
                ThroughputProfile(**p) for p in values["throughput_profiles"]
            )
        return cls(**values)


@dataclass(frozen=True)
class Batch:
    """One worker's consecutive runs of one cell in one round."""

    round: int
    engine: str
    scenario: str
    latency: str
    warmup: int
    repeats: tuple[int, ...]  # the repeat indices this batch measures (cell-wide numbering)
    est_run_s: float

    @property
    def est_s(self) -> float:
        return (self.warmup + len(self.repeats)) * self.est_run_s

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.engine, self.scenario, self.latency, self.round)


@dataclass
class Plan:
    """The whole schedule, in execution order."""

    config: RunConfig
    batches: list[Batch] = field(default_factory=list)
    repeats: dict[tuple[str, str], int] = field(default_factory=dict)  # (scenario, latency) → n

    @property
    def timed_runs(self) -> int:
        return sum(len(b.repeats) for b in self.batches)

    @property
    def est_s(self) -> float:
        return sum(b.est_s for b in self.batches)


def _profile_step_s(latency: str) -> float:
    """One LLM step's scripted wait under a profile: realistic's, or a named or custom
    profile's time to the first token plus ~30 tokens (recorded timings are added per turn)."""
    if latency in ("zero", "recorded"):
        return 0.0
    if latency == "realistic":
        return _REALISTIC_STEP_S
    from bench.referee import LatencyProfile

    try:
        profile = LatencyProfile.named(latency)
    except ValueError:
        return _REALISTIC_STEP_S  # an unknown name fails later, where it is used
    rest = 30 / profile.tokens_per_s if profile.tokens_per_s else 0.0
    return profile.ttft_ms / 1000 + rest


def estimate_run_s(scenario: Scenario, latency: str = "zero") -> float:
    """A rough upper estimate of one run's duration, from what the scenario scripts.

    Counts LLM steps, scripted turn latency (and recorded timings under ``recorded``), tool
    latency (parallel calls summed), hanging tools (cut at the tool timeout), LLM faults
    (retry waits, delays and stalls cut at the LLM timeout, broken streams, slow first
    tokens) and repeating last turns (played until ``max_steps``). Only used to budget repeats and
    to size the worker's watchdog; never reported as a measurement.
    """
    limits = scenario.limits
    tools = scenario.tool_map
    step_s = _STEP_S + _profile_step_s(latency)

    def turn_cost(turn: Any) -> float:
        cost = step_s + (turn.latency_ms or 0.0) / 1000
        if latency == "recorded" and turn.timing is not None:
            cost += turn.timing.total_ms / 1000
        if turn.fault is not None:
            fault = turn.fault
            strikes = fault.strikes_within(limits.max_retries + 1)
            if fault.status is not None:
                wait = (
                    fault.retry_after_s if fault.retry_after_s is not None else _DEFAULT_BACKOFF_S
                )
                cost += (wait + step_s) * strikes
            if fault.delay_s is not None or fault.stall_s is not None:
                cut = min(fault.delay_s or fault.stall_s, limits.llm_timeout_s)
                cost += (cut + _DEFAULT_BACKOFF_S + step_s) * strikes
            elif fault.stream is not None:  # broken at once, retried after a backoff
                cost += (_DEFAULT_BACKOFF_S + step_s) * strikes
            cost += fault.first_token_s or 0.0
        for call in turn.tool_calls:
            tool = tools.get(call.name)
            if tool is None:
                continue
            behavior = tool.behavior
            cost += behavior.latency_ms / 1000 * (1 + behavior.fail_times)
            if behavior.hangs:
                # cut by the tool timeout, or only by the run deadline (engines without one)
                cost += max(limits.tool_timeout_s, limits.run_timeout_s or 0.0)
        return cost

    total = 0.002 + sum(turn_cost(turn) for turn in scenario.script)
    last = scenario.script[-1]
    if last.repeat:
        extra_steps = max(limits.max_steps - len(scenario.script), 0)
        total += extra_steps * turn_cost(last)
    if limits.run_timeout_s is not None:
        total = min(total, limits.run_timeout_s + 0.05)
    return total


def runs_into_deadline_s(scenario: Scenario, engine: str) -> float | None:
    """The run deadline, when ``engine``'s expectations say its runs of ``scenario`` end by
    it (``termination: timeout``): such a run lasts the whole deadline, whatever the scenario
    scripts, so the plan budgets it at that (a loop no guard stops, a hung tool)."""
    termination = scenario.expect.for_engine(engine).get("termination")
    if termination != "timeout" and termination != ["timeout"]:
        return None
    return scenario.limits.run_timeout_s or _DEFAULT_RUN_TIMEOUT_S


def repeats_for(est_run_s: float, config: RunConfig) -> int:
    """Timed runs for a cell: ``--repeat`` if given, else budgeted by the expected run time."""
    if config.repeat is not None:
        return config.repeat
    budgeted = int(config.cell_budget_s / max(est_run_s, 1e-6))
    return max(config.min_repeats, min(config.max_repeats, budgeted))


def warmup_for(est_run_s: float, config: RunConfig) -> int:
    """Warm-up runs per batch: all of ``--warmup`` up to 50 ms a run, one up to 250 ms, then none.

    A slow scenario's run is dominated by scripted waiting (timeouts, retry back-offs), which
    needs no warming; the worker itself is already warm (its cold reference run and earlier
    batches), and what is left cold — the scenario's first prepare and tokenization — is
    well under 1% of such a run.
    """
    if est_run_s <= 0.05:
        return config.warmup
    if est_run_s <= 0.25:
        return min(config.warmup, 1)
    return 0


def rotate(items: tuple[T, ...], by: int) -> tuple[T, ...]:
    """``items`` rotated left by ``by``."""
    if not items:
        return items
    by %= len(items)
    return items[by:] + items[:by]


def build_plan(
    config: RunConfig,
    scenarios: Mapping[str, Scenario],
    done: Mapping[tuple[str, str, str, int], set[int]] | None = None,
) -> Plan:
    """The interleaved schedule; ``done`` (batch key → finished repeat indices) is skipped.

    Round ``r``, scenario number ``s``: engines run in the configured order rotated by
    ``r + s``, so that no engine is always first (cold caches) or last.
    """
    done = done or {}
    plan = Plan(config)
    reduced = set(outcome_only(config.engines))
    only = scenario_subsets(config.engines)
    per_round: dict[tuple[str, str], list[list[int]]] = {}
    timed = [name for name in config.scenarios if scenarios[name].is_performance]
    for name in timed:
        for latency in config.latencies:
            est = estimate_run_s(scenarios[name], latency)
            n = repeats_for(est, config)
            plan.repeats[(name, latency)] = n
            base, extra = divmod(n, config.rounds)
            split: list[list[int]] = []
            start = 0
            for r in range(config.rounds):
                count = base + (1 if r < extra else 0)
                split.append(list(range(start, start + count)))
                start += count
            per_round[(name, latency)] = split
    for r in range(config.rounds):
        for s, name in enumerate(timed):
            for latency in config.latencies:
                indices = per_round[(name, latency)][r]
                if not indices:
                    continue
                est = estimate_run_s(scenarios[name], latency)
                for engine in rotate(config.engines, r + s):
                    if engine in reduced:
                        continue  # judged in the outcome phase only
                    if engine in only and name not in only[engine]:
                        continue
                    finished = done.get((engine, name, latency, r), set())
                    todo = tuple(i for i in indices if i not in finished)
                    deadline = runs_into_deadline_s(scenarios[name], engine)
                    if deadline is not None and config.repeat is None:
                        # expected to end by the run deadline: each run takes all of it, so
                        # the budget allows it fewer runs than the cell's other engines
                        todo = tuple(i for i in todo if i < repeats_for(deadline, config))
                    if not todo:
                        continue
                    run_s = est if deadline is None else max(est, deadline)
                    plan.batches.append(
                        Batch(r, engine, name, latency, warmup_for(run_s, config), todo, run_s)
                    )
    return plan


def outcome_only(engines: tuple[str, ...]) -> tuple[str, ...]:
    """The engines measured for their outcomes only (fault scenarios of the suite, no
    throughput, TTFT or footprint phases): the registry says which."""
    from bench.engines.registry import REGISTRY

    return tuple(e for e in engines if e in REGISTRY and REGISTRY[e].outcome_only)


def measured(engines: tuple[str, ...]) -> tuple[str, ...]:
    """The engines the import probes measure (all but the outcome-only ones)."""
    reduced = set(outcome_only(engines))
    return tuple(e for e in engines if e not in reduced)


def scenario_subsets(engines: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """Engines the registry limits to a few scenarios (the LangChain version matrix)."""
    from bench.engines.registry import REGISTRY

    return {
        e: frozenset(REGISTRY[e].scenarios)
        for e in engines
        if e in REGISTRY and REGISTRY[e].scenarios
    }


def every_phase(engines: tuple[str, ...]) -> tuple[str, ...]:
    """The engines the TTFT and load phases measure: neither outcome-only nor limited to a
    few scenarios."""
    limited = scenario_subsets(engines)
    return tuple(e for e in measured(engines) if e not in limited)


def throughput_engines(config: RunConfig) -> tuple[str, ...]:
    """The engines of the closed-loop throughput phase: ``throughput_engines``, else the
    bare loop and the headline pairs (the load phase's default set)."""
    if config.throughput_engines is not None:
        return tuple(config.throughput_engines)
    from bench.runner.phases.load.plan import default_load_engines

    return default_load_engines(every_phase(config.engines))


def ttft_scenario(config: RunConfig, available: Mapping[str, Scenario]) -> str | None:
    """The TTFT phase's scenario, or None when the phase is off or the scenario is missing."""
    if not config.ttft or config.ttft_repeat < 1 or config.ttft_scenario not in available:
        return None
    return config.ttft_scenario


def ttft_run_s(scenario: Scenario, latency: str) -> float:
    """Expected duration of one TTFT-phase run: the scripted waits plus framework time."""
    from bench.engines.kit.ttft import scripted_times_s
    from bench.referee import LatencyProfile

    _floor, scripted = scripted_times_s(scenario, LatencyProfile.named(latency))
    return scripted + len(scenario.script) * _STEP_S * 4  # streaming costs more per step


def build_ttft_plan(
    config: RunConfig,
    scenarios: Mapping[str, Scenario],
    done: Mapping[str, set[int]] | None = None,
) -> list[Batch]:
    """One batch per engine (in the last round's worker) of the TTFT scenario's runs with
    ``stream_tokens``; ``done`` (engine → finished repeat indices) is skipped."""
    name = ttft_scenario(config, scenarios)
    if name is None:
        return []
    done = done or {}
    est = ttft_run_s(scenarios[name], config.ttft_latency)
    batches = []
    for engine in every_phase(config.engines):
        todo = tuple(i for i in range(config.ttft_repeat) if i not in done.get(engine, set()))
        if todo:
            last_round = config.rounds - 1
            warmup = config.ttft_warmup
            batches.append(Batch(last_round, engine, name, config.ttft_latency, warmup, todo, est))
    return batches


def pick_reference(config: RunConfig, available: Mapping[str, Scenario]) -> str:
    """The scenario of each worker's cold first run and of throughput: ``--reference``,
    else the scenario tagged ``reference`` (``bench.model.scenarios``), else the first."""
    for candidate in (config.reference_scenario, reference_scenario(available)):
        if candidate and candidate in available:
            return candidate
    return config.scenarios[0] if config.scenarios else next(iter(available))


def batch_timeout_s(est_run_s: float) -> float:
    """How long the parent waits for the next message of a worker before declaring it hung."""
    return 60.0 + 5 * est_run_s


def ceil_div(a: int, b: int) -> int:
    return -(-a // b) if b else a


__all__ = [
    "LATENCY_PROFILES",
    "TRANSPORTS",
    "Batch",
    "Plan",
    "RunConfig",
    "ThroughputProfile",
    "batch_timeout_s",
    "build_plan",
    "build_ttft_plan",
    "ceil_div",
    "estimate_run_s",
    "every_phase",
    "measured",
    "outcome_only",
    "pick_reference",
    "repeats_for",
    "rotate",
    "scenario_subsets",
    "throughput_engines",
    "ttft_run_s",
    "ttft_scenario",
    "warmup_for",
]
