"""The typed rows of a run directory, and the schema of its meta.json (formats in
docs/measurement.md), and the selection of the rows that count (``latest``, ``timed``). A leaf
module: it imports nothing of the harness but the run directory's layout (``files``).

Rows are validated strictly (a string where a number belongs, a float where an integer
belongs, a bool where a count belongs: the row is corrupt). Reading is open: fields this
version does not know are kept (``model_extra``), so a newer minor version of the runner still
reads. Writing is closed: ``RunStore.append`` refuses a row with a field its model does not
declare (``folder.check_written``), so every field written is declared here once.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from bench.results.files import RUN_KEY

R = TypeVar("R", bound=BaseModel)
RunRowT = TypeVar("RunRowT", bound="RunRow")

# The default of a field that may be absent but not null: pydantic never validates a default,
# so the field reads None when absent while its annotation (no ``| None``) refuses a stored
# null. Typed Any so that the checker accepts it as the default of a non-optional field.
ABSENT: Any = None

MAX_PER_RUN = 10_000  # entries of a per-run array (requests, tools, failures) a row may hold
MAX_PER_LEVEL = 1_000_000  # latencies of one throughput or load level


class Row(BaseModel):
    """Common base: strict, immutable, unknown fields kept; NaN and infinities refused (a
    writer stores a missing number as null, so a non-finite one is a corrupt row)."""

    # defer_build (here and on every model of this module): a model's validator is built on
    # its first use, not at import; every worker imports this module, and most use a few of
    # its models (importing it took 384 ms, then 156, on a busy 2-core host)
    model_config = ConfigDict(
        strict=True, frozen=True, extra="allow", allow_inf_nan=False, defer_build=True
    )

    shard: int | None = Field(
        default=None,
        ge=1,
        description="the shard that measured the row (`schedbench merge`; null: a whole run's row)",
    )
    host: str | None = Field(
        default=None, description="the host that measured the row (merged runs)"
    )


# A run row's fields are described once, here: docs/measurement.md's runs.jsonl table and the
# report's run frame (``bench.report.frames.RUN_COLUMNS``) read these descriptions.


class RunMeasurement(Row):
    """What a worker measures of one run (``bench.runner.measured`` builds it): a runs.jsonl
    row less what the parent adds, which run it was (``RunRow``). Only ever written, so a
    field it does not declare is refused (a typo such as ``wal_ms``)."""

    model_config = ConfigDict(extra="forbid")

    status: str | None = Field(
        default=None, description="`completed`, `failed`, `aborted`, `error`"
    )
    termination: str | None = Field(
        default=None,
        description="why the run ended (`stop`, `max_steps`, `timeout`, `llm_error`, …; "
        "`worker_crash`, `harness_error`)",
    )
    error: str | None = Field(
        default=None,
        description="error text, untrusted (≤ 2,000 chars; a crash: with the worker's stderr tail)",
    )
    final_answer: str | None = Field(
        default=None, description="the engine's final answer, untrusted (≤ 500 chars)"
    )
    expect_ok: bool | None = Field(
        default=None, description="whether the run met the scenario's expectations for its engine"
    )
    expect_failures: tuple[str, ...] = Field(
        default=(),
        max_length=MAX_PER_RUN,
        description="why it did not: the expectations it missed, as sentences",
    )
    llm_calls: int | None = Field(
        default=None, description="requests that reached the mock (retries included)"
    )
    tool_calls: int | None = Field(
        default=None, description="tool executions observed at the tools"
    )
    tool_errors: int | None = Field(default=None, description="tool executions that failed")
    request_count: int | None = Field(default=None, description="request bodies the engine sent")
    tools: tuple[str, ...] = Field(
        default=(), max_length=MAX_PER_RUN, description="names of the tools executed, in order"
    )
    prompt_tokens: int | None = Field(
        default=None,
        description="prompt tokens the engine sent, counted with the real tokenizer "
        "(`cl100k_base`) on the bodies it really sent",
    )
    completion_tokens: int | None = Field(
        default=None, description="completion tokens the mock returned (the same tokenizer)"
    )
    request_prompt_tokens: tuple[int | None, ...] = Field(
        default=(),
        max_length=MAX_PER_RUN,
        description="prompt tokens of each request, in order (the count the mock bills)",
    )
    max_request_tokens: int | None = Field(
        default=None, description="the largest request's prompt tokens (an outcome expectation)"
    )
    max_tool_ms: float | None = Field(
        default=None, description="the longest tool execution (an outcome expectation)"
    )
    invalid_tool_args: int | None = Field(
        default=None, description="tool executions whose arguments broke the tool's JSON Schema"
    )
    wall_ms: float | None = Field(
        default=None, description="wall-clock time of the run, measured by the engine"
    )
    cpu_ms: float | None = Field(
        default=None,
        description="the engine's CPU during the run: the process's (`process_cpu_ms`) less "
        "the in-process mock's handler CPU (`referee_cpu_ms`)",
    )
    process_cpu_ms: float | None = Field(
        default=None, description="the worker process's CPU during the run (`process_time`)"
    )
    referee_ms: float | None = Field(
        default=None,
        description="in-process: wall time the mock spent answering this run's requests "
        "(timed by the mock itself); null over loopback",
    )
    referee_cpu_ms: float | None = Field(
        default=None,
        description="in-process: the mock's CPU for those requests; null over loopback",
    )
    outer_ms: float | None = Field(
        default=None,
        description="the same run timed by the worker around `engine.run` (a cross-check)",
    )
    tool_ms: float | None = Field(
        default=None,
        description="time during which at least one tool body was running (overlaps counted once)",
    )
    mock_latency_ms: float | None = Field(
        default=None,
        description="latency the mock LLM added on purpose (latency profile, scripted "
        "delays, faults)",
    )
    waited_ms: float | None = Field(
        default=None,
        description="waits by choice: time the run slept on its own (retry backoff, "
        "Retry-After) outside tool bodies, never overhead; null = unknown (a run recorded "
        "before the field, whose overhead_ms still includes them)",
    )
    wait_count: int | None = Field(
        default=None,
        ge=0,
        description="how many such sleeps (a polling loop shows as many); null = unknown",
    )
    overhead_ms: float | None = Field(
        default=None,
        description="framework overhead: wall_ms − mock_latency_ms − tool_ms − waited_ms "
        "(waits by choice) − referee_ms (runs recorded before waited_ms or referee_ms: "
        "those included)",
    )
    overhead_per_step_ms: float | None = Field(default=None, description="overhead_ms / llm_calls")
    ttft_ms: float | None = Field(
        default=None,
        description="time to the first content token of the final answer through the "
        "engine's stream (streaming engines)",
    )
    gc_collections: int | None = Field(
        default=None, description="GC collections (all generations) during the run"
    )
    debug_output_chars: int | None = Field(
        default=None, description="size of the engine's debug output"
    )
    extra: dict[str, Any] = Field(default_factory=dict, description="engine-specific extras")
    pid: int | None = Field(default=None, description="the worker's process id")
    ended_at: float | None = Field(default=None, description="Unix time at the end of the run")


class RunRow(RunMeasurement):
    """One line of runs.jsonl: one run of one engine on one scenario (the worker's
    ``RunMeasurement`` and which run it was)."""

    model_config = ConfigDict(extra="allow")  # read open (see the module's docstring)

    engine: str = Field(description="engine name")
    scenario: str = Field(description="scenario name")
    latency: str = Field(
        description="the mock's latency profile: `zero`, `realistic` or `recorded` (ttft.jsonl: "
        "`ttft`)"
    )
    transport: str = Field(description="`inprocess` or `loopback`: how the engine reached the mock")
    round: int = Field(ge=0, description="0-based round (a fresh worker per engine and round)")
    repeat: int = Field(
        ge=0,
        description="timed: the run's index in its cell over all rounds; warm-up: its index "
        "in its batch",
    )
    phase: Literal["timed", "warmup"] = Field(description="`timed` or `warmup`")
    crashed: bool = Field(
        default=False,
        description="true on a row the parent wrote for a run a dead worker owed (then status "
        "is error)",
    )
    reused_from: str | None = Field(
        default=None,
        description="an outcome cell's row taken from the results cache: when and at which "
        "commit the run it repeats was measured (`bench.runner.cache`); its timings are null",
    )


# What a reused row leaves out (``bench.runner.cache``): every field measured in time or of the
# process that ran it. The rest of a run's measurement is exact: the same code, environment
# and scenario give the same outcome, calls, tokens and tools.
TIMINGS = frozenset(
    {
        "wall_ms",
        "cpu_ms",
        "process_cpu_ms",
        "referee_ms",
        "referee_cpu_ms",
        "outer_ms",
        "tool_ms",
        "max_tool_ms",
        "mock_latency_ms",
        "waited_ms",
        "wait_count",
        "overhead_ms",
        "overhead_per_step_ms",
        "ttft_ms",
        "gc_collections",
        "debug_output_chars",
        "pid",
        "ended_at",
    }
)


def is_number(model: type[BaseModel], name: str) -> bool:
    """Whether ``model``'s field ``name`` holds a number (int or float, or None)."""
    annotation = model.model_fields[name].annotation
    kinds = set(typing.get_args(annotation)) if typing.get_args(annotation) else {annotation}
    kinds.discard(type(None))
    return bool(kinds) and kinds <= {int, float}


def run_overhead_ms(row: object) -> float | None:
    """A run's framework overhead: its ``overhead_ms``, or, for a row without one, derived
    as wall - mock latency - tool time - waits by choice (unknown waits left in, as the row
    had them). The one formula for both readers: ``bench.results.per_engine.step_runs`` (run
    rows) and ``bench.report.frames.RunData`` (the report's run frame). ``row`` is anything
    with those attributes; a missing value is None or NaN. None: no overhead and no wall time.
    """

    def number(name: str) -> float | None:
        value = getattr(row, name, None)
        return None if value is None or value != value else float(value)

    overhead = number("overhead_ms")
    if overhead is not None:
        return overhead
    wall = number("wall_ms")
    if wall is None:
        return None
    for part in ("mock_latency_ms", "tool_ms", "waited_ms"):
        wall -= number(part) or 0.0
    return wall


class TtftMeasurement(RunMeasurement):
    """What a worker measures of one run of the TTFT phase: a run's measurement plus the
    time to the first token against the scripted floor."""

    floor_ttft_ms: float | None = None
    scripted_ttft_ms: float | None = None
    ttft_overhead_ms: float | None = None
    streamed_requests: int | None = None


class TtftRow(RunRow, TtftMeasurement):
    """One line of ttft.jsonl: a run of the TTFT phase (a runs.jsonl row plus the floor)."""

    model_config = ConfigDict(extra="allow")


class ThroughputRow(Row):
    """One line of throughput.jsonl: one engine × latency profile × concurrency level."""

    engine: str
    scenario: str
    latency: str
    transport: str
    concurrency: int = Field(ge=1)
    runs: int | None = None
    errors: int | None = None
    statuses: dict[str, int] = Field(default_factory=dict)
    duration_s: float = ABSENT  # absent until the first end of the run; null is invalid
    runs_per_s: float | None = None
    latency_mean_ms: float | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    latency_p99_ms: float | None = None
    overhead_median_ms: float | None = None
    cpu_ms_per_run: float | None = None
    cpu_utilization: float | None = None
    window_s: float | None = None
    latencies_ms: tuple[float, ...] = Field(default=(), max_length=MAX_PER_LEVEL)
    pid: int | None = None
    ended_at: float | None = None
    crashed: bool = False
    error: str | None = None


class LoadRow(Row):
    """One line of load.jsonl: the open-loop load phase (docs/measurement.md, "Load").

    ``kind: "level"`` — one engine × process count × offered rate: Poisson arrivals, every
    run's latency measured from its *scheduled* start. ``kind: "mock"`` — the mock's own
    ceiling, measured by a bare client hammering it (``engine`` names the client).
    """

    kind: Literal["level", "mock"]
    engine: str
    scenario: str
    latency: str  # the mock's latency profile (realistic)
    transport: str = "loopback"
    processes: int = Field(ge=1)  # level: engine worker processes; mock: mock processes
    rate: float | None = Field(default=None, gt=0)  # level: offered runs/s (all processes together)
    stream: bool | None = None  # mock: the probe's requests streamed (SSE) or not
    # -- level: the schedule ------------------------------------------------------------
    seed: int | None = None
    trial: int | None = Field(
        default=None, ge=0
    )  # 1: a confirmation (longer window, fresh arrivals)
    scripted_ms: float | None = None  # the mock's scripted latency of one run
    target_ms: float | None = None  # the latency target: scripted_ms × target factor
    ramp_s: float | None = None  # unmeasured arrivals before the window
    window_s: float | None = None  # runs scheduled in the window are measured
    timeout_s: float | None = None  # a measured run still running this long is cut
    mock_processes: int | None = None
    # -- level: what happened ------------------------------------------------------------
    scheduled: int | None = None  # measured runs that were due (started or not)
    ok: int | None = None  # completed as the scenario expects
    wrong: int | None = None  # completed, but not as the scenario expects
    failed: int | None = None  # ended in error, failed or aborted (or raised)
    timeouts: int | None = None  # cut after timeout_s
    cut: int | None = None  # still running when an early stop ended the level
    not_run: int | None = None  # due after an early stop: never started
    latencies_ms: tuple[float, ...] = Field(
        default=(), max_length=MAX_PER_LEVEL
    )  # from the scheduled start: ok runs, timeouts, cut
    start_lag_p99_ms: float | None = None  # how late the generator started runs (p99)
    interval_s: float | None = None  # the throughput interval (window shifted by scripted_ms)
    completions: int | None = None  # ok completions of any run inside the interval
    cpu_s: float | None = None  # engine processes' CPU inside the interval, summed
    cores_used: float | None = None  # each process's CPU ÷ its own interval, summed
    cpu_slices: tuple[tuple[float, int], ...] = ()  # (CPU s, ok completions) per slice
    peak_rss_mb: float | None = None  # the largest engine process's peak RSS in the level
    mock_cpu_per_s: float | None = None  # busiest mock process: CPU s per wall s
    mock_cpu_total_per_s: float | None = None  # all mock processes together
    host_cpu_per_s: float | None = None  # every process of the machine: CPU s per wall s
    engine_cpu_total_per_s: float | None = None  # the engine's processes, same span as host
    stopped: str | None = None  # why the level ended early (None: it ran to its end)
    left_running: int | None = None  # runs that ignored cancellation at the end
    elapsed_s: float | None = None
    pids: tuple[int, ...] = ()
    # -- a spread load phase (schedbench run --cluster … --spread-load; one host: unset) --------
    mock_host: str | None = None  # the node the mock pool ran on (also on its ceiling's rows)
    generator_hosts: tuple[str, ...] = ()  # each process's node, in the order of pids
    clock_offsets_ms: tuple[float, ...] = ()  # each process's node clock minus the launcher's
    # -- mock: its ceiling ----------------------------------------------------------------
    concurrency: int | None = None
    requests: int | None = None
    requests_per_s: float | None = None
    mock_cpu_ms_per_request: float | None = None
    client_cpu_per_s: float | None = None
    # -- both --------------------------------------------------------------------------
    ended_at: float | None = None
    crashed: bool = False
    error: str | None = None


class FootprintRow(Row):
    """One line of footprint.jsonl: an import probe (``stack``) or a worker (``worker``)."""

    kind: Literal["stack", "worker"]
    engine: str
    status: str | None = None  # ok or error
    error: str | None = None
    # kind "stack": a pristine interpreter imports the engine's stack
    probe: int | None = None
    probe_of: str | None = None
    stack: tuple[str, ...] = ()
    warmup: str = ""  # what the probe ran after the imports (the registry's probe_warmup)
    environment: str = "main"  # the engine environment whose interpreter ran the probe
    import_ms: float | None = None
    modules: int | None = None
    modules_total: int | None = None
    rss_before_mb: float | None = None
    rss_after_mb: float | None = None
    peak_rss_mb: float | None = None
    # kind "worker": the engine's import on top of the harness, and one cold run
    round: int | None = None
    pid: int | None = None
    harness_modules: int | None = None
    engine_import_ms: float | None = None
    modules_after_import: int | None = None
    rss_before_import_mb: float | None = None
    rss_after_import_mb: float | None = None
    reference_scenario: str | None = None
    first_run_ms: float | None = None
    first_run_status: str | None = None
    first_run_error: str | None = None
    modules_after_first_run: int | None = None
    rss_after_first_run_mb: float | None = None
    # how many probes (stack) or worker spawns (worker) ran at once, this one included: one
    # per core at most (None: a run from before they ran side by side)
    spawned_beside: int | None = None
    # the worker's memory guard (bench.runner.run_worker.limit_memory; None: none was set)
    memory_cap_mb: int | None = None
    address_space_limit_mb: int | None = None


class ProfileRow(Row):
    """One line of profile.jsonl: the profiling probe of one engine on one scenario
    (``bench.probe``; fields in docs/measurement.md, "The profiling probe"). An engine that
    could not be probed has one row with ``scenario`` null and ``status`` error or skipped."""

    engine: str
    scenario: str | None = None
    kind: Literal["scenario", "variant"] | None = None  # variant: a marginal variant
    variant_of: str | None = None
    status: Literal["ok", "error", "skipped"]
    error: str | None = None
    plan: dict[str, Any] = Field(default_factory=dict)  # runs per pass
    engine_import_ms: float | None = None
    probe_s: float | None = None
    runs: int | None = None  # runs made over every pass (warm-ups excluded)
    run_status: str | None = None
    llm_calls: int | None = None  # per run (the same in every run, or the row is an error)
    tool_calls: int | None = None
    # plain runs
    wall_ms: tuple[float, ...] = ()
    mock_ms: tuple[float, ...] = ()  # inside the mock's request handler
    # counted runs (one value per run); engine calls exclude the harness
    calls_per_run: tuple[int, ...] = ()
    harness_calls_per_run: tuple[int, ...] = ()
    resumes_per_run: tuple[int, ...] = ()
    c_calls_per_run: tuple[int, ...] = ()
    executor_jobs_per_run: tuple[int, ...] = ()
    calls_by_group: dict[str, int] = Field(default_factory=dict)  # of the first counted run
    resumes_by_group: dict[str, int] = Field(default_factory=dict)
    c_calls_by_group: dict[str, int] = Field(default_factory=dict)
    # the stack at each edge: one value per send / tool body of the edge run
    send_depths: tuple[int, ...] = ()
    send_modules: tuple[int, ...] = ()
    send_classes: tuple[int, ...] = ()
    send_frames_by_group: dict[str, int] = Field(default_factory=dict)  # of the first send
    send_module_names: tuple[str, ...] = ()
    send_class_names: tuple[str, ...] = ()
    send_stack: tuple[str, ...] = ()  # module:qualname, from execute inwards
    send_unanchored: tuple[str, ...] = ()  # why some sends had no path to execute
    tool_depths: tuple[int, ...] = ()
    tool_modules: tuple[int, ...] = ()
    tool_classes: tuple[int, ...] = ()
    tool_frames_by_group: dict[str, int] = Field(default_factory=dict)
    tool_module_names: tuple[str, ...] = ()
    tool_class_names: tuple[str, ...] = ()
    tool_stack: tuple[str, ...] = ()
    tool_unanchored: tuple[str, ...] = ()
    # cProfile runs
    cprofile_wall_ms: tuple[float, ...] = ()
    cprofile_ms_by_group: dict[str, float] = Field(default_factory=dict)  # per run
    # sampled runs
    sampled_wall_ms: tuple[float, ...] = ()
    samples: int | None = None
    samples_by_group: dict[str, int] = Field(default_factory=dict)
    leaf_samples_by_group: dict[str, int] = Field(default_factory=dict)
    # [charged group, [watched groups on the stack], samples] (bench.probe.sampling.stacks)
    stack_samples: tuple[tuple[str, tuple[str, ...], int], ...] = ()
    samples_in_mock: int | None = None
    thread_samples: int | None = None
    idle_samples: int | None = None
    wait_samples: int | None = None  # a tool sleeping its scripted latency: in no group


class MultiModelCheck(Row):
    """One scenario of one variant of the multi-model check (``bench.multimodel``)."""

    scenario: str
    ok: bool  # ended as the scenario expects this engine to end it
    status: str | None = None
    termination: str | None = None
    llm_calls: int | None = Field(default=None, ge=0)
    tool_calls: int | None = Field(default=None, ge=0)
    apis: tuple[str, ...] = ()  # the APIs its requests spoke: openai, anthropic
    answer_shape: str | None = None  # what the agent returned: text, a list of content blocks
    misses: tuple[str, ...] = ()  # how it differed from the expectations
    error: str | None = None


class MultiModelRow(Row):
    """One engine on one provider: whether it works, and the statements the switch changed."""

    engine: str
    provider: str  # openai (the baseline) or anthropic
    fixed: bool = False  # more than the chat model was changed (``note`` says what)
    works: bool  # every scenario ended as expected
    statements_changed: int = Field(ge=0)
    code: tuple[str, ...] = ()  # "before -> after" targets whose statements were diffed
    checks: tuple[MultiModelCheck, ...] = ()
    note: str = ""


class MultiModelFile(Row):
    """multimodel.json: the multi-model check of a run (``schedbench multimodel``)."""

    schema_version: int
    scenarios: tuple[str, ...] = ()
    packages: dict[str, str | None] = Field(default_factory=dict)
    duration_s: float | None = None
    rows: tuple[MultiModelRow, ...] = ()


class DebugRow(BaseModel):
    """One row of debuggability.csv (columns in docs/debuggability.md): CSV text, so values
    are parsed from strings; an empty cell is ``None``. Only the scored numbers are typed."""

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    engine: str
    mode: str
    scenario: str
    status: str | None = None
    recall: float | None = None
    bytes: float | None = None
    bytes_per_fact: float | None = None
    localised: bool | None = None
    mode_cost_ms: float | None = None

    @field_validator("*", mode="before")
    @classmethod
    def _empty_is_none(cls, value: Any) -> Any:
        return None if value == "" else value


class CatalogueCellRow(Row):
    """One cell of catalogue.json: a customisation on an engine (``bench.catalogue``)."""

    engine: str
    customisation: str
    works: bool
    implemented: bool = True  # False: not possible with public API (the note says why)
    statements: int | None = None  # beyond the engine's plain agent
    total_statements: int | None = None
    baseline_statements: int | None = None
    nodes: int | None = None  # syntax-tree nodes beyond the plain agent
    needs_internals: bool = False
    internals: tuple[str, ...] = ()  # declared: private API, subclassing internals, ...
    internals_found: tuple[str, ...] = ()  # read from the source when the catalogue ran
    note: str = ""
    failures: tuple[str, ...] = ()
    duration_s: float | None = None


class SimplicityRow(Row):
    """One false-simplicity program of catalogue.json: an engine's simple or complex agent."""

    engine: str
    case: Literal["simple", "complex"]
    statements: int = Field(ge=0)  # the whole program file, imports included
    works: bool
    target: str = ""
    failures: tuple[str, ...] = ()
    note: str = ""  # what to know when reading the result (e.g. a limit of the mock)


class CatalogueSkipped(Row):
    """An engine the catalogue could not run (its environment could not be built)."""

    engine: str
    reason: str


class CatalogueCustomisation(Row):
    key: str
    title: str
    effect: str = ""
    scenario: str = ""


class CatalogueRecord(Row):
    """catalogue.json (``schedbench catalogue``): the cells and the programs."""

    schema_version: int
    started_at: str | None = None
    duration_s: float | None = None
    customisations: tuple[CatalogueCustomisation, ...] = ()
    cells: tuple[CatalogueCellRow, ...] = ()
    simplicity: tuple[SimplicityRow, ...] = ()
    skipped: tuple[CatalogueSkipped, ...] = ()


class ThroughputProfileRecord(BaseModel):
    """One entry of ``config.throughput_profiles`` (``bench.runner.plan.ThroughputProfile``)."""

    model_config = ConfigDict(strict=True, extra="forbid", defer_build=True)

    latency: str
    window_s: float = Field(ge=0)
    min_runs: int = Field(ge=0)
    warmup_runs: int = Field(ge=0)


class ConfigRecord(BaseModel):
    """meta.json's ``config``: the fields of ``bench.runner.plan.RunConfig`` as stored. A field
    left out takes the RunConfig default: the ``None`` defaults mean "absent" (pydantic never
    validates a default), while a stored ``null`` is valid only where RunConfig allows it.
    A test keeps the two field lists equal."""

    model_config = ConfigDict(strict=True, extra="allow", defer_build=True)

    engines: list[str] = ABSENT
    scenarios: list[str] = ABSENT
    scenario_dir: str | None = None
    latencies: list[str] = ABSENT
    transport: str = ABSENT
    repeat: int | None = Field(default=None, ge=1)
    warmup: int = Field(default=ABSENT, ge=0)
    rounds: int = Field(default=ABSENT, ge=1)
    seed: int = Field(default=ABSENT, ge=0, le=2**32 - 1)  # numpy's SeedSequence takes no negative
    quick: bool = ABSENT
    cell_budget_s: float = Field(default=ABSENT, gt=0)
    min_repeats: int = Field(default=ABSENT, ge=1)
    max_repeats: int = Field(default=ABSENT, ge=1)
    concurrency: list[int] = ABSENT
    throughput: bool = ABSENT
    throughput_scenario: str | None = None
    throughput_engines: list[str] | None = None
    throughput_profiles: list[ThroughputProfileRecord] = ABSENT
    footprint: bool = ABSENT
    versions: bool = ABSENT
    cache: bool = ABSENT
    shard: str | None = None  # "i/n" (bench.runner.shard); None: a whole run
    shard_scenarios: list[list[str]] | None = None
    footprint_processes: int = Field(default=ABSENT, ge=0)
    reference_scenario: str | None = None
    ttft: bool = ABSENT
    ttft_scenario: str = ABSENT
    ttft_latency: str = ABSENT
    ttft_repeat: int = Field(default=ABSENT, ge=0)
    ttft_warmup: int = Field(default=ABSENT, ge=0)
    ttft_lanes: int = Field(default=ABSENT, ge=1)
    fault_repeat: int = Field(default=ABSENT, ge=1)
    fault_confirm: int = Field(default=ABSENT, ge=0)
    outcome_lanes: int = Field(default=ABSENT, ge=1)
    load: bool = ABSENT
    load_engines: list[str] | None = None
    load_scenario: str = ABSENT
    load_latency: str = ABSENT
    load_rates: list[float] = ABSENT
    load_start_rate: float = Field(default=ABSENT, gt=0)
    load_processes: list[int] | None = None
    load_window_s: float = Field(default=ABSENT, gt=0)
    load_probe_s: float = Field(default=ABSENT, gt=0)
    load_min_runs: int = Field(default=ABSENT, ge=1)
    load_ramp: float = Field(default=ABSENT, ge=0)
    load_target_factor: float = Field(default=ABSENT, gt=0)
    load_timeout_factor: float = Field(default=ABSENT, gt=0)
    load_max_arrivals: int = Field(default=ABSENT, ge=1)
    load_budget_s: float = Field(default=ABSENT, gt=0)


class Meta(BaseModel):
    """meta.json (keys in docs/measurement.md); unknown keys are kept."""

    model_config = ConfigDict(strict=True, extra="allow", defer_build=True)

    schema_version: int | str  # an integer major version (1); "1.2" is read as major 1
    run_id: str | None = None
    command: list[str] | str | None = None
    config: ConfigRecord = Field(default_factory=ConfigRecord)
    packages: dict[str, str | None] = Field(default_factory=dict)
    python: dict[str, Any] = Field(default_factory=dict)
    machine: dict[str, Any] = Field(default_factory=dict)
    git: dict[str, Any] = Field(default_factory=dict)
    code_size: list[dict[str, Any]] = Field(default_factory=list)  # bench.engines.codesize rows
    started_at: str | None = None
    ended_at: str | None = None
    resumed_at: list[str] = Field(default_factory=list)
    interrupted_at: str | None = None
    duration_s: float = ABSENT  # absent until the first end of the run; null is invalid
    complete: bool | None = None
    outcome: dict[str, Any] | None = None
    # engine environment → its interpreter, how it was built and its packages (bench.envs)
    environments: dict[str, dict[str, Any]] = Field(default_factory=dict)


# -- versions.json: the LangChain version matrix (bench.results.versions) --


def line_key(line: str) -> tuple[int, ...]:
    """Sort key of a LangChain line ("0.3" < "1")."""
    return tuple(int(part) for part in line.split("."))


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def first_line(text: str | None, limit: int = 90) -> str:
    """The first line of an error, cut to ``limit`` characters."""
    lines = (text or "").strip().splitlines()
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class WarningSeen(BaseModel):
    """One distinct warning (category, message, where it was raised) and how often."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    category: str
    message: str
    where: str  # module path relative to site-packages (or the program's file), and line
    count: int = Field(ge=1)
    deprecation: bool  # a DeprecationWarning, PendingDeprecationWarning or FutureWarning

    @property
    def langchain_deprecation(self) -> bool:
        """LangChain's own announcement that an API the code uses goes away
        (``LangChainDeprecationWarning`` and its pending form, which LangChain shows by
        default) — not another library's deprecation raised inside LangChain."""
        return self.deprecation and self.category.startswith("LangChain")


class ProgramRun(BaseModel):
    """One run of a program (as written, or fixed) in one environment."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    ran: bool  # it ended as the scenario expects
    error: str | None = None  # the exception, or how the run missed the expectations
    warnings: list[WarningSeen] = Field(default_factory=list)

    @property
    def deprecations(self) -> list[WarningSeen]:
        """LangChain's deprecation warnings of the run (``WarningSeen.langchain_deprecation``)."""
        return [w for w in self.warnings if w.langchain_deprecation]

    @property
    def deprecations_text(self) -> str:
        return plural(len(self.deprecations), "deprecation warning")


class Fix(ProgramRun):
    """The change that makes a program that failed on a line run there, and its run."""

    statements: int = Field(ge=0)  # ast statements changed, program as written → fixed
    edits: list[str] = Field(default_factory=list)  # each "old → new", as declared
    packages: list[str] = Field(default_factory=list)  # distributions it adds to the install

    @property
    def summary(self) -> str:
        """ "1 statement + langchain-classic" (and, when even the fix fails, why)."""
        text = plural(self.statements, "statement")
        if self.packages:
            text += " + " + ", ".join(self.packages)
        return text if self.ran else f"{text}, still fails: {first_line(self.error)}"


class UpgradeCell(ProgramRun):
    """A program written for one line, run unchanged on one (newer or same) line."""

    written_for: str
    run_on: str
    fix: Fix | None = None  # when it failed and a fix is declared for this line


class VersionProbe(BaseModel):
    """What ``python -m bench.runner.phases.version_probe ENGINE`` saw in one line's
    environment."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    engine: str
    line: str
    packages: dict[str, str | None] = Field(default_factory=dict)
    upgrades: list[UpgradeCell] = Field(default_factory=list)
    reused_from: str | None = None  # taken from the results cache: when, at which commit


# The legacy table (versions.json before the upgrade direction): today's AgentExecutor
# baseline run on each older line, as is and back-ported. Read, never written.


class Backport(BaseModel):
    """A legacy row's compatibility columns: today's baseline run on this line as is, and
    with the harness's back-port (``adapter_code``); says nothing about upgrades."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    runs_unchanged: bool | None  # None: not probed
    unchanged_error: str | None = None
    runs_adapted: bool | None = None
    adapted_error: str | None = None
    statements_changed: int  # the back-port's statements (0: runs unchanged)
    adapter_parts: list[str] = Field(default_factory=list)
    deprecation_warnings: int | None = None  # distinct ones, of the adapted run
    warnings: list[WarningSeen] = Field(default_factory=list)  # of the adapted run
    unchanged_warnings: list[WarningSeen] = Field(default_factory=list)


class VersionRow(BaseModel):
    """One LangChain line in the version table."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    line: str
    engine: str
    environment: str
    packages: dict[str, str | None]
    upgrades: list[UpgradeCell] = Field(default_factory=list)  # the programs run on this line
    # today's AgentExecutor baseline back-ported to this line (lc-agentexecutor@<line>)
    overhead_per_step_ms: float | None = None  # median over its scenarios
    overhead_per_step_ms_by_scenario: dict[str, float] = Field(default_factory=dict)
    import_ms: float | None = None  # the stack probe (a pristine interpreter), median
    import_modules: float | None = None
    peak_rss_mb: float | None = None  # its workers, median
    error: str | None = None  # why it was not probed (then ``upgrades`` is empty)
    # the probe was taken from the results cache (bench.runner.cache): when, at which commit
    reused_from: str | None = None
    # a legacy table only (the back-port direction; ``read_versions``): then ``upgrades`` is empty
    backport: Backport | None = None


class LegacyVersionRow(Backport):
    """One row of a legacy table, as it was written."""

    line: str
    engine: str
    environment: str
    packages: dict[str, str | None]
    overhead_per_step_ms: float | None = None
    overhead_per_step_ms_by_scenario: dict[str, float] = Field(default_factory=dict)
    import_ms: float | None = None
    import_modules: float | None = None
    peak_rss_mb: float | None = None
    error: str | None = None

    def as_row(self) -> VersionRow:
        """The row in today's shape: no upgrade measured, the back-port kept apart."""
        backport = Backport.model_validate(self.model_dump(include=set(Backport.model_fields)))
        rest = self.model_dump(exclude=set(Backport.model_fields))
        return VersionRow(**rest, backport=backport)


# -- which rows count --


def key_of(row: Any, key: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(row, name) for name in key)


def latest(rows: Iterable[R], key: tuple[str, ...] = RUN_KEY) -> list[R]:
    """One row per key, the last one written, in first-seen order."""
    by_key: dict[tuple[Any, ...], R] = {}
    for row in rows:
        by_key[key_of(row, key)] = row
    return list(by_key.values())


def timed(rows: Iterable[RunRowT], key: tuple[str, ...] = RUN_KEY) -> Iterator[RunRowT]:
    """The latest timed rows (warm-ups and superseded rows left out)."""
    return (r for r in latest(rows, key) if r.phase == "timed")
