"""The typed rows of a run directory, and the schema of its meta.json (formats in
docs/measurement.md). A leaf module: it imports nothing of the harness.

Rows are validated strictly (a string where a number belongs, a float where an integer
belongs, a bool where a count belongs: the row is corrupt) but are open: fields this version
does not know are kept (``model_extra``), so a newer minor version of the runner still reads.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_PER_RUN = 10_000  # entries of a per-run array (requests, tools, failures) a row may hold
MAX_PER_LEVEL = 1_000_000  # latencies of one throughput or load level


class Row(BaseModel):
    """Common base: strict, immutable, unknown fields kept; NaN and infinities refused (a
    writer stores a missing number as null, so a non-finite one is a corrupt row)."""

    model_config = ConfigDict(strict=True, frozen=True, extra="allow", allow_inf_nan=False)


class RunRow(Row):
    """One line of runs.jsonl: one run of one engine on one scenario."""

    engine: str
    scenario: str
    latency: str  # the mock's latency profile: zero, realistic (ttft.jsonl: ttft)
    transport: str  # inprocess or loopback
    round: int = Field(ge=0)  # a fresh worker per engine and round
    repeat: int = Field(ge=0)
    phase: Literal["timed", "warmup"]
    status: str | None = None  # completed, failed, aborted, error
    termination: str | None = None
    error: str | None = None
    final_answer: str | None = None
    expect_ok: bool | None = None
    expect_failures: tuple[str, ...] = Field((), max_length=MAX_PER_RUN)
    llm_calls: int | None = None
    tool_calls: int | None = None
    tool_errors: int | None = None
    request_count: int | None = None
    tools: tuple[str, ...] = Field((), max_length=MAX_PER_RUN)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    request_prompt_tokens: tuple[int | None, ...] = Field((), max_length=MAX_PER_RUN)
    # what the outcome expectations judge (scenarios.expect)
    max_request_tokens: int | None = None  # the largest request's prompt tokens
    max_tool_ms: float | None = None  # the longest tool execution
    invalid_tool_args: int | None = None  # executions with arguments outside the schema
    wall_ms: float | None = None
    cpu_ms: float | None = None
    outer_ms: float | None = None
    tool_ms: float | None = None
    mock_latency_ms: float | None = None
    overhead_ms: float | None = None
    overhead_per_step_ms: float | None = None
    ttft_ms: float | None = None
    gc_collections: int | None = None
    debug_output_chars: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    pid: int | None = None
    ended_at: float | None = None
    crashed: bool = False  # written by the parent for runs a dead worker owed


class TtftRow(RunRow):
    """One line of ttft.jsonl: a run of the TTFT phase (a runs.jsonl row plus the floor)."""

    floor_ttft_ms: float | None = None
    scripted_ttft_ms: float | None = None
    ttft_overhead_ms: float | None = None
    streamed_requests: int | None = None


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
    duration_s: float = None  # absent until the first end of the run; null is invalid
    runs_per_s: float | None = None
    latency_mean_ms: float | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    latency_p99_ms: float | None = None
    overhead_median_ms: float | None = None
    cpu_ms_per_run: float | None = None
    cpu_utilization: float | None = None
    window_s: float | None = None
    latencies_ms: tuple[float, ...] = Field((), max_length=MAX_PER_LEVEL)
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
    rate: float | None = Field(None, gt=0)  # level: offered runs/s (all processes together)
    stream: bool | None = None  # mock: the probe's requests streamed (SSE) or not
    # -- level: the schedule ------------------------------------------------------------
    seed: int | None = None
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
        (), max_length=MAX_PER_LEVEL
    )  # from the scheduled start: ok runs, timeouts, cut
    start_lag_p99_ms: float | None = None  # how late the generator started runs (p99)
    interval_s: float | None = None  # the throughput interval (window shifted by scripted_ms)
    completions: int | None = None  # ok completions of any run inside the interval
    cpu_s: float | None = None  # engine processes' CPU inside the interval, summed
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

    model_config = ConfigDict(frozen=True, extra="allow")

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

    model_config = ConfigDict(strict=True, extra="forbid")

    latency: str
    window_s: float = Field(ge=0)
    min_runs: int = Field(ge=0)
    warmup_runs: int = Field(ge=0)


class ConfigRecord(BaseModel):
    """meta.json's ``config``: the fields of ``bench.runner.plan.RunConfig`` as stored. A field
    left out takes the RunConfig default: the ``None`` defaults mean "absent" (pydantic never
    validates a default), while a stored ``null`` is valid only where RunConfig allows it.
    A test keeps the two field lists equal."""

    model_config = ConfigDict(strict=True, extra="allow")

    engines: list[str] = None
    scenarios: list[str] = None
    scenario_dir: str | None = None
    latencies: list[str] = None
    transport: str = None
    repeat: int | None = Field(None, ge=1)
    warmup: int = Field(None, ge=0)
    rounds: int = Field(None, ge=1)
    seed: int = Field(None, ge=0, le=2**32 - 1)  # numpy's SeedSequence takes no negative
    quick: bool = None
    cell_budget_s: float = Field(None, gt=0)
    min_repeats: int = Field(None, ge=1)
    max_repeats: int = Field(None, ge=1)
    concurrency: list[int] = None
    throughput: bool = None
    throughput_scenario: str | None = None
    throughput_profiles: list[ThroughputProfileRecord] = None
    footprint: bool = None
    footprint_processes: int = Field(None, ge=0)
    reference_scenario: str | None = None
    ttft: bool = None
    ttft_scenario: str = None
    ttft_latency: str = None
    ttft_repeat: int = Field(None, ge=0)
    ttft_warmup: int = Field(None, ge=0)
    outcome_repeat: int = Field(None, ge=1)
    fault_repeat: int | None = Field(None, ge=1)
    load: bool = None
    load_engines: list[str] | None = None
    load_scenario: str = None
    load_latency: str = None
    load_rates: list[float] = None
    load_start_rate: float = Field(None, gt=0)
    load_processes: list[int] | None = None
    load_window_s: float = Field(None, gt=0)
    load_min_runs: int = Field(None, ge=1)
    load_ramp: float = Field(None, ge=0)
    load_target_factor: float = Field(None, gt=0)
    load_timeout_factor: float = Field(None, gt=0)
    load_max_arrivals: int = Field(None, ge=1)
    load_budget_s: float = Field(None, gt=0)


class Meta(BaseModel):
    """meta.json (keys in docs/measurement.md); unknown keys are kept."""

    model_config = ConfigDict(strict=True, extra="allow")

    schema_version: int | str  # an integer major version (1); "1.2" is read as major 1
    run_id: str | None = None
    command: list[str] | str | None = None
    config: ConfigRecord = Field(default_factory=ConfigRecord)
    packages: dict[str, str | None] = Field(default_factory=dict)
    python: dict[str, Any] = Field(default_factory=dict)
    machine: dict[str, Any] = Field(default_factory=dict)
    git: dict[str, Any] = Field(default_factory=dict)
    code_size: list[dict[str, Any]] = Field(default_factory=list)  # bench.codesize rows
    started_at: str | None = None
    ended_at: str | None = None
    resumed_at: list[str] = Field(default_factory=list)
    interrupted_at: str | None = None
    duration_s: float = None  # absent until the first end of the run; null is invalid
    complete: bool | None = None
    outcome: dict[str, Any] | None = None
    # engine environment → its interpreter, how it was built and its packages (bench.envs)
    environments: dict[str, dict[str, Any]] = Field(default_factory=dict)
