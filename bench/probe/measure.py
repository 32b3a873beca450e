"""The probe's passes over one engine and one scenario, in this process (see ``bench.probe``).

``probe_scenario`` prepares the engine once, then runs the scenario through ``execute`` —
the engine's timed region, nothing of the accounting after it — in passes (the three that
time something start after a ``gc.collect()``):

1. ``warmup``   runs, discarded (lazy imports, caches, the first-call costs of every layer);
2. ``timed``    plain runs: wall time per run, and the mock's own time inside it;
3. ``count``    runs under the call counter (``bench.probe.counting``);
4. one run under the edge probe (``bench.probe.edges``): the stack at each send and tool body;
5. ``cprofile`` runs under cProfile: ``tottime`` by group and the profiled wall time;
6. sampled runs for ``sample_s`` seconds (at least ``sample_min_runs``): samples by group.

The collection before the plain pass is a full one; those before cProfile and sampling
collect the young generations only (``YOUNG``: what the few runs since left behind; a full
collection walks the whole heap, 0.1 s with LangChain loaded, and three per scenario were
about a quarter of a LangChain engine's probe). Every run starts from a reset mock and a
fresh run log, and must complete, with the same LLM and tool calls in every pass; otherwise
the row's status is ``error``, with the reason, and it still carries what was measured.
``counts_only`` plans (the marginal variants) time nothing: no collection, no plain runs;
they stop after 3. Plans by engine (``plan_for``): the engines the report judges — the
floor and the headline pairs — take ``FULL``, with ``JUDGED_SAMPLE_S`` of sampling per
scenario for those whose shares a claim judges (LangChain's side: claim 2); every other
engine takes ``BRIEF``: one counted run, the edge run and the sampling, no plain and no
cProfile runs (their wall time and the profilers' slow-down are reported for the judged
engines only: they cost a third of a peer's probe).
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import dataclasses
import gc
import pstats
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.engines.base import RunContext
from bench.engines.common import CHAT_PATH_SUFFIX, Outcome, RecordingEngine
from bench.engines.kit.runlog import end_log, start_log
from bench.probe.counting import CallCounter, harness_roots
from bench.probe.edges import EdgeProbe, EdgeStack
from bench.probe.sampling import Sampler
from bench.probe.timing import grouped_tottime
from bench.referee import LatencyProfile, MockLLM
from bench.referee.transport import BASE_URL
from scenarios import Scenario


@dataclass(frozen=True)
class ProbePlan:
    """How many runs each pass makes (``FULL`` in ``make bench``, ``QUICK`` with --quick)."""

    warmup: int = 2
    timed: int = 3
    count: int = 2
    cprofile: int = 1
    sample_s: float = 0.1
    sample_min_runs: int = 3
    sample_interval_s: float = 0.0005
    counts_only: bool = False  # the marginal variants: warm-up and counted runs only

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


YOUNG = 1  # gc generation: collect generations 0 and 1, not the long-lived objects

# claim 2 judges the sampled share of callbacks: ≥ 1 s of samples per scenario (~2,000)
JUDGED_SAMPLE_S = 1.0

FULL = ProbePlan()
JUDGED_SAMPLES = dataclasses.replace(FULL, sample_s=JUDGED_SAMPLE_S)
BRIEF = ProbePlan(timed=0, count=1, cprofile=0)
QUICK = ProbePlan(warmup=2, timed=2, count=2, cprofile=1, sample_s=0.05, sample_min_runs=2)
PLANS = {"full": FULL, "judged-samples": JUDGED_SAMPLES, "brief": BRIEF, "quick": QUICK}


def plan_for(engine: str, judged: set[str], shares_judged: set[str]) -> str:
    """The plan's name for ``engine``: ``full`` for the judged engines, else ``brief``;
    ``judged-samples`` for those whose shares a claim judges."""
    if engine in shares_judged:
        return "judged-samples"
    return "full" if engine in judged else "brief"


def plan_named(name: str) -> ProbePlan:
    """The plan of ``plan_for``'s name (``ValueError`` for an unknown one)."""
    if name not in PLANS:
        raise ValueError(f"unknown probe plan {name!r}; one of {', '.join(PLANS)}")
    return PLANS[name]


def counts_only(plan: ProbePlan) -> ProbePlan:
    """The same plan without the timed, edge, cProfile and sampling passes."""
    return dataclasses.replace(plan, timed=0, cprofile=0, counts_only=True)


class TimedMock(MockLLM):
    """The mock LLM, timing its own request handler (the harness's cost inside a run)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.handle_s = 0.0

    def handle(self, raw: bytes) -> Any:
        start = time.perf_counter()
        try:
            return super().handle(raw)
        finally:
            self.handle_s += time.perf_counter() - start


@dataclass
class RunShape:
    """What one run did, for checking every pass ran the same scenario the same way."""

    status: str
    llm_calls: int
    tool_calls: int
    error: str | None


class ScenarioProbe:
    """One engine's prepared agent for one scenario, run pass after pass."""

    def __init__(self, engine: RecordingEngine, prepared: Any, mock: TimedMock):
        self.engine = engine
        self.prepared = prepared
        self.mock = mock
        self.shapes: list[RunShape] = []

    async def run(self, around: Any = None) -> float:
        """One run of ``execute`` (inside ``around``, a context manager); its wall seconds."""
        self.mock.reset()
        log, token = start_log()
        try:
            self.engine.before_run(self.prepared)
            start = time.perf_counter()
            if around is None:
                outcome = await self._execute()
            else:
                with around:
                    outcome = await self._execute()
            elapsed = time.perf_counter() - start
        finally:
            end_log(token)
        llm_calls = sum(1 for x in log.exchanges if x.path.endswith(CHAT_PATH_SUFFIX))
        self.shapes.append(RunShape(outcome.status, llm_calls, len(log.tools), outcome.error))
        return elapsed

    async def _execute(self) -> Outcome:
        try:
            return await self.engine.execute(self.prepared)
        except Exception as exc:  # an engine that raises is a failed probe run, not a crash
            return Outcome("error", None, type(exc).__name__, error=f"{type(exc).__name__}: {exc}")


def _stack_fields(prefix: str, hits: list[EdgeStack]) -> dict[str, Any]:
    anchored = [h for h in hits if h.anchored]
    first = anchored[0] if anchored else None
    return {
        f"{prefix}_depths": [h.depth for h in anchored],
        f"{prefix}_modules": [len(h.modules) for h in anchored],
        f"{prefix}_classes": [len(h.classes) for h in anchored],
        f"{prefix}_frames_by_group": first.frames_by_group() if first else {},
        f"{prefix}_module_names": first.modules if first else [],
        f"{prefix}_class_names": first.classes if first else [],
        f"{prefix}_stack": first.text() if first else [],
        f"{prefix}_unanchored": [h.reason for h in hits if not h.anchored],
    }


async def probe_scenario(
    engine: RecordingEngine, scenario: Scenario, mock: TimedMock, plan: ProbePlan
) -> dict[str, Any]:
    """Every pass over one scenario; the measured fields of its profile.jsonl row."""
    ctx = RunContext(
        scenario=scenario,
        mock=mock,
        base_url=BASE_URL,
        transport="inprocess",
        latency=LatencyProfile(),
        run_timeout_s=scenario.limits.run_timeout_s,
    )
    prepared = await engine.prepare(ctx)
    probe = ScenarioProbe(engine, prepared, mock)
    row: dict[str, Any] = {}

    for _ in range(plan.warmup):
        await probe.run()
    probe.shapes.clear()

    walls, mock_ms = [], []
    if plan.timed:
        gc.collect()
    for _ in range(plan.timed):
        mock.handle_s = 0.0
        walls.append(await probe.run() * 1000)
        mock_ms.append(mock.handle_s * 1000)
    row["wall_ms"] = walls
    row["mock_ms"] = mock_ms

    roots = harness_roots()
    counted = []
    for _ in range(plan.count):
        counter = CallCounter(roots)
        await probe.run(_Stack(ExecutorJobs(counter.thread_job), counter))
        counted.append(counter.counts)
    row["calls_per_run"] = [c.engine_calls for c in counted]
    row["harness_calls_per_run"] = [c.total() - c.engine_calls for c in counted]
    row["resumes_per_run"] = [c.total("resumes", harness=False) for c in counted]
    row["c_calls_per_run"] = [c.total("c_calls", harness=False) for c in counted]
    row["executor_jobs_per_run"] = [c.executor_jobs for c in counted]
    if counted:
        row["calls_by_group"] = dict(counted[0].calls)
        row["resumes_by_group"] = dict(counted[0].resumes)
        row["c_calls_by_group"] = dict(counted[0].c_calls)
    if plan.counts_only:
        row.update(_shape(probe.shapes))
        return row

    edges = EdgeProbe.for_engine(engine)
    edges.install(asyncio.get_running_loop())
    try:
        await probe.run()
    finally:
        edges.uninstall()
    row.update(_stack_fields("send", [h for h in edges.hits if h.edge == "send"]))
    row.update(_stack_fields("tool", [h for h in edges.hits if h.edge == "tool"]))

    gc.collect(YOUNG)
    profiler = cProfile.Profile()
    jobs: list[cProfile.Profile] = []  # one profile per executor job (each in its thread)
    profiled = []
    for _ in range(plan.cprofile):
        around = _Stack(ExecutorJobs(lambda fn: _profiled_job(fn, jobs)), _Enabled(profiler))
        profiled.append(await probe.run(around) * 1000)
    row["cprofile_wall_ms"] = profiled
    if plan.cprofile:
        merged = pstats.Stats(profiler)
        for job in jobs:
            merged.add(job)
        stats = merged.stats  # type: ignore[attr-defined]
        row["cprofile_ms_by_group"] = {
            g: s * 1000 / plan.cprofile for g, s in grouped_tottime(stats).items()
        }

    gc.collect(YOUNG)
    from bench.referee.core import MockLLM

    sampled: list[float] = []
    sampler = Sampler(roots, interval_s=plan.sample_interval_s, mock_code=MockLLM.handle.__code__)
    with sampler:
        deadline = time.perf_counter() + plan.sample_s
        while len(sampled) < plan.sample_min_runs or time.perf_counter() < deadline:
            sampled.append(await probe.run(_Active(sampler)) * 1000)
    row["sampled_wall_ms"] = sampled
    row["samples"] = sampler.samples
    row["samples_by_group"] = dict(sampler.groups)
    row["leaf_samples_by_group"] = dict(sampler.leaf)
    row["stack_samples"] = [[g, list(on), n] for (g, on), n in sorted(sampler.stacks.items())]
    row["samples_in_mock"] = sampler.in_mock
    row["thread_samples"] = sampler.thread_samples
    row["idle_samples"] = sampler.idle_samples
    row["wait_samples"] = sampler.wait_samples

    row.update(_shape(probe.shapes))
    return row


def _shape(shapes: list[RunShape]) -> dict[str, Any]:
    """The runs' status and counts; ``status`` ``error`` when the passes disagree or failed."""
    if not shapes:
        return {"status": "error", "error": "no run was made"}
    first = shapes[0]
    fields: dict[str, Any] = {
        "llm_calls": first.llm_calls,
        "tool_calls": first.tool_calls,
        "run_status": first.status,
        "runs": len(shapes),
    }
    failed = [s for s in shapes if s.status != "completed"]
    differ = {(s.status, s.llm_calls, s.tool_calls) for s in shapes}
    if failed:
        fields.update(status="error", error=f"a run ended {failed[0].status}: {failed[0].error}")
    elif len(differ) > 1:
        fields.update(status="error", error=f"the passes' runs differ: {sorted(differ)}")
    else:
        fields["status"] = "ok"
    return fields


class ExecutorJobs:
    """``with ExecutorJobs(wrap):`` every job the block hands to the running loop's
    ``run_in_executor`` runs as ``wrap(job)`` (the probe's passes only)."""

    def __init__(self, wrap: Callable[[Callable[..., Any]], Callable[..., Any]]):
        self.wrap = wrap
        self._loop: asyncio.AbstractEventLoop | None = None

    def __enter__(self) -> None:
        loop = self._loop = asyncio.get_running_loop()
        original = loop.run_in_executor
        wrap = self.wrap

        def run_in_executor(executor: Any, func: Callable[..., Any], *args: Any) -> Any:
            return original(executor, wrap(func), *args)

        loop.run_in_executor = run_in_executor  # type: ignore[method-assign,assignment]

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None:
            del self._loop.run_in_executor  # the class's method again
            self._loop = None


def _profiled_job(fn: Callable[..., Any], jobs: list[cProfile.Profile]) -> Callable[..., Any]:
    profile = cProfile.Profile()
    jobs.append(profile)

    def job(*args: Any) -> Any:
        profile.enable()
        try:
            return fn(*args)
        finally:
            profile.disable()

    return job


class _Stack(contextlib.ExitStack):
    """Several context managers entered in order (the first entered first)."""

    def __init__(self, *managers: Any):
        super().__init__()
        self.managers = managers

    def __enter__(self) -> _Stack:
        super().__enter__()
        for manager in self.managers:
            self.enter_context(manager)
        return self


class _Enabled:
    """``with _Enabled(profiler):`` profiles the block (and accumulates into one profile)."""

    def __init__(self, profiler: cProfile.Profile):
        self.profiler = profiler

    def __enter__(self) -> None:
        self.profiler.enable()

    def __exit__(self, *exc: object) -> None:
        self.profiler.disable()


class _Active:
    """``with _Active(sampler):`` samples the block."""

    def __init__(self, sampler: Sampler):
        self.sampler = sampler

    def __enter__(self) -> None:
        self.sampler.active = True

    def __exit__(self, *exc: object) -> None:
        self.sampler.active = False
