"""The metrics of a run, each defined once (docs/measurement.md, "Metrics").

Functions take *row-like* objects: the typed rows of ``bench.results.rows``, or anything
with the same attribute names (the report passes ``DataFrame.itertuples()`` rows); a missing
attribute, ``None`` or NaN is "not measured". Statistics come from ``bench.results.stats``.

- a **cell** is one engine × scenario × latency profile × transport: ``cells(rows)``;
  ``cell_stats(rows, raw_rows)`` is everything summary.csv says about one;
- **per-step** figures divide a run's total by its LLM calls (``per_step``);
- **token overhead** compares an engine's prompt tokens with the ``raw`` engine's on the
  same turn (``token_overhead_per_request``) or per run (``token_overhead_per_run``);
- **TTFT over the floor**: a run's time to first token minus the mock's scripted floor
  (``ttft_over_floor``); ``ttft_stats`` is everything ttft.csv says about a cell;
- **throughput** of a level (``throughput_level``) and the **footprint** of an engine
  (``footprint_by_engine``);
- the **profiling probe** of an engine (``profile_by_engine``): calls per LLM step, the
  marginal calls of one more tool call and one more step (``profile_marginals``), stack
  depths, and the share of a run's time per package group (``profile_shares``).
- the **load phase**: a level judged (``load_level``: percentiles from each run's scheduled
  start, CPU per run under load, sustained or not), the **capacity** of a sweep at the
  latency target (``capacity``: the bracket [highest sustained rate, lowest not
  sustained], cores needed for 100 runs/s), re-judged at other targets (``capacity_at``),
  the rate an engine **saturates** at (``saturation_rate``), one engine's **tail** against
  another's at each rate (``tail_ratio``) and the **mock's ceiling** (``mock_ceilings``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bench.engines.packages import CALLBACK_RUNNABLE_GROUPS, GROUPS
from bench.results import stats
from bench.results.rows import FootprintRow, ProfileRow, RunRow, ThroughputRow, timed

BASELINE = "raw"  # the engine ratios and token overheads are taken against
GROUP_COLUMNS = ("engine", "scenario", "latency", "transport")  # what a cell is
CellKey = tuple[str, str, str, str]
STATUSES = ("completed", "failed", "aborted", "error")
# metrics that get a full set of statistics (median, p95, p99, IQR, CI, …)
FULL_METRICS = ("wall_ms", "cpu_ms", "overhead_ms")
# metrics summarised by their median only
MEDIAN_METRICS = (
    "overhead_per_step_ms",
    "tool_ms",
    "waited_ms",
    "mock_latency_ms",
    "outer_ms",
    "llm_calls",
    "tool_calls",
    "prompt_tokens",
    "completion_tokens",
    "request_count",
    "gc_collections",
)


def value(row: object, name: str) -> float | None:
    """A numeric field of a row as a finite float, or None (absent, null, NaN)."""
    return stats.number(getattr(row, name, None))


def values(rows: Iterable[object], name: str) -> list[float]:
    """The finite values of a numeric field over the rows, in row order."""
    return [v for v in (value(r, name) for r in rows) if v is not None]


def is_crashed(row: object) -> bool:
    return bool(getattr(row, "crashed", False) is True)


def measured(rows: Iterable[object]) -> list[Any]:
    """The rows of runs that were measured (rows a crashed worker owed left out)."""
    return [r for r in rows if not is_crashed(r)]


def is_error(row: object) -> bool:
    """A run that did not complete: crashed, or a status other than ``completed`` (a row
    without a status, as hand-made folders have, counts as completed)."""
    status = getattr(row, "status", None)
    return is_crashed(row) or (status is not None and status != "completed")


def completed(rows: Iterable[object]) -> list[Any]:
    """The rows of runs that completed (``is_error`` rows left out)."""
    return [r for r in rows if not is_error(r)]


# ---------------------------------------------------------------------------------------------
# per run


def per_step(total: object, llm_calls: object) -> float | None:
    """``total`` per LLM call (None without calls or without a total)."""
    t, calls = stats.number(total), stats.number(llm_calls)
    if t is None or calls is None or calls <= 0:
        return None
    return t / calls


def step_overhead_ms(row: object) -> float | None:
    """Framework overhead per LLM step: overhead_ms / llm_calls."""
    return per_step(getattr(row, "overhead_ms", None), getattr(row, "llm_calls", None))


def tokens_per_request(row: object) -> float | None:
    """Prompt tokens per LLM request: prompt_tokens / llm_calls."""
    return per_step(getattr(row, "prompt_tokens", None), getattr(row, "llm_calls", None))


# ---------------------------------------------------------------------------------------------
# cells


def cell_key(row: object) -> CellKey:
    return tuple(str(getattr(row, k, None)) for k in GROUP_COLUMNS)  # type: ignore[return-value]


def baseline_key(key: CellKey) -> CellKey:
    """The ``raw`` engine's cell on the same scenario, profile and transport."""
    return (BASELINE, *key[1:])


def cells(rows: Iterable[RunRow]) -> dict[CellKey, list[RunRow]]:
    """The latest timed rows by cell (crashed rows included), cells in first-seen order."""
    out: dict[CellKey, list[RunRow]] = {}
    for row in timed(rows):
        out.setdefault(cell_key(row), []).append(row)
    return out


def most_common(items: Iterable[object]) -> object:
    """The most frequent non-None item (the first seen on a tie); None for none."""
    counts: dict[object, int] = {}
    for item in items:
        if item is not None:
            counts[item] = counts.get(item, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else None


def failure_reason(rows: Iterable[object]) -> str | None:
    """Why a cell's runs missed their expectations: the most common ``expect_failures``
    entry (else the error of a run that did not complete), with how many runs it hit.
    Rows may be typed rows or a frame's records (NaN for a missing value)."""
    rows = list(rows)
    reasons = [_miss_reason(r) for r in rows if _missed(r) or is_error(r)]
    reason = most_common(r for r in reasons if r)
    if reason is None:
        return None
    return f"{reason} ({reasons.count(str(reason))} of {len(rows)} runs)"


def _missed(row: object) -> bool:
    ok = getattr(row, "expect_ok", None)
    return ok is not None and ok == ok and not bool(ok)  # ok == ok: not NaN


def _miss_reason(row: object) -> str:
    failures = getattr(row, "expect_failures", None)
    if isinstance(failures, (list, tuple)) and failures:
        return str(failures[0])
    error = getattr(row, "error", None)
    return error if isinstance(error, str) else ""


def missed_line(engine: str, scenario: str, why: str | None) -> str:
    """The footnote of one ✗ (console and report): ``✗ engine on scenario: why``."""
    return f"✗ {engine} on {scenario}: {why or 'reason not recorded'}"


def expect_ok_rate(rows: Iterable[object]) -> float:
    """Share of the runs that met the scenario's expectations (runs without the flag left out)."""
    return stats.share(getattr(r, "expect_ok", None) for r in rows)


@dataclass(frozen=True)
class CellStats:
    """Everything summary.csv says about one cell (columns in docs/measurement.md)."""

    key: CellKey
    n: int  # measured runs with a wall time
    crashed: int
    statuses: dict[str, int]  # over every timed row, crashed ones counted as error
    expect_ok_rate: float
    termination: str | None  # the most common
    summaries: dict[str, stats.Summary]  # FULL_METRICS → statistics
    medians: dict[str, float]  # MEDIAN_METRICS, and tokens_per_request → median
    ttft_median: float
    ttft_p95: float
    token_overhead: float  # median prompt tokens − raw's (NaN without raw)
    token_overhead_per_request: float
    ratio_to_raw: tuple[float, float, float]  # median wall / raw's, CI low, CI high
    cpu_ratio_to_raw: float
    overhead_ratio_to_raw: float

    @property
    def wall(self) -> stats.Summary:
        return self.summaries["wall_ms"]

    @property
    def unstable(self) -> bool:
        return self.wall.unstable


def _ratio_of_medians(mine: Sequence[float], base: Sequence[float]) -> float:
    b = stats.median(base)
    return stats.median(mine) / b if math.isfinite(b) and b > 0 else math.nan


def cell_stats(
    rows: Sequence[object],
    raw_rows: Sequence[object] | None = None,
    *,
    seed: stats.Seed = stats.DEFAULT_SEED,
) -> CellStats:
    """The statistics of one cell's timed rows; ratios and token overheads against
    ``raw_rows`` (the ``raw`` engine's rows of the same cell; NaN without them)."""
    ok = measured(rows)
    raw = measured(raw_rows or ())
    statuses = {s: sum(1 for r in rows if getattr(r, "status", None) == s) for s in STATUSES}
    summaries = {m: stats.summarize(values(ok, m), seed=seed) for m in FULL_METRICS}
    medians = {m: stats.median(values(ok, m)) for m in MEDIAN_METRICS}
    # per-step figures are derived from the totals, the same way for every reader
    medians["overhead_per_step_ms"] = stats.median(map(step_overhead_ms, ok))
    medians["tokens_per_request"] = stats.median(map(tokens_per_request, ok))
    ttft = values(ok, "ttft_ms")
    nan3 = (math.nan, math.nan, math.nan)
    return CellStats(
        key=cell_key(rows[0]) if rows else ("", "", "", ""),
        n=len(values(ok, "wall_ms")),
        crashed=len(rows) - len(ok),
        statuses=statuses,
        expect_ok_rate=expect_ok_rate(ok),
        termination=most_common(getattr(r, "termination", None) for r in ok),  # type: ignore[arg-type]
        summaries=summaries,
        medians=medians,
        ttft_median=stats.median(ttft),
        ttft_p95=stats.percentile(ttft, 95),
        token_overhead=token_overhead_per_run(ok, raw) if raw else math.nan,
        token_overhead_per_request=token_overhead_per_request(ok, raw) if raw else math.nan,
        ratio_to_raw=(
            stats.ratio_of_medians(values(ok, "wall_ms"), values(raw, "wall_ms"), seed=seed)
            if raw
            else nan3
        ),
        cpu_ratio_to_raw=_ratio_of_medians(values(ok, "cpu_ms"), values(raw, "cpu_ms")),
        overhead_ratio_to_raw=_ratio_of_medians(
            values(ok, "overhead_ms"), values(raw, "overhead_ms")
        ),
    )


# ---------------------------------------------------------------------------------------------
# tokens


def per_request_tokens(rows: Iterable[object]) -> list[float]:
    """Median prompt tokens at each request index over the runs (index = turn of the run)."""
    columns: list[list[float]] = []
    for row in rows:
        tokens = getattr(row, "request_prompt_tokens", None)
        if not isinstance(tokens, list | tuple):
            continue
        for i, count in enumerate(tokens):
            while len(columns) <= i:
                columns.append([])
            if stats.number(count) is not None:
                columns[i].append(float(count))
    return [stats.median(c) for c in columns]


def token_overhead_per_request(mine: Sequence[object], raw: Sequence[object]) -> float:
    """Extra prompt tokens per request over ``raw`` on the same scenario.

    Turn by turn: the mean over the request indices both have of (engine's median prompt
    tokens at that index − raw's). When the rows carry no per-request counts: the
    difference of the median prompt tokens per request.
    """
    a, b = per_request_tokens(mine), per_request_tokens(raw)
    pairs = [x - y for x, y in zip(a, b, strict=False) if math.isfinite(x) and math.isfinite(y)]
    if pairs:
        return stats.mean(pairs)
    return stats.median(map(tokens_per_request, mine)) - stats.median(map(tokens_per_request, raw))


def token_overhead_per_run(mine: Sequence[object], raw: Sequence[object]) -> float:
    """Median prompt tokens of a run − raw's median."""
    return stats.median(values(mine, "prompt_tokens")) - stats.median(values(raw, "prompt_tokens"))


# ---------------------------------------------------------------------------------------------
# time to first token


def ttft_over_floor(row: object) -> float | None:
    """A run's TTFT minus the mock's scripted floor (the part no engine can avoid)."""
    ttft, floor = value(row, "ttft_ms"), value(row, "floor_ttft_ms")
    return None if ttft is None or floor is None else ttft - floor


@dataclass(frozen=True)
class TtftStats:
    """Everything ttft.csv says about one cell of the TTFT phase."""

    key: CellKey
    n: int
    n_ttft: int
    crashed: int
    errors: int
    expect_ok_rate: float
    ttft: dict[str, float]  # median, p25, p75, p95, min, max
    floor_ms: float  # median scripted floor (the same for every engine)
    extra_ms: float  # median over runs of TTFT − floor
    extra_vs_raw_ms: float  # median TTFT − raw's (NaN without raw)
    medians: dict[str, float]  # scripted_ttft_ms, ttft_overhead_ms, wall_ms, llm_calls, …


def ttft_stats(rows: Sequence[object], raw_rows: Sequence[object] | None = None) -> TtftStats:
    """The statistics of one cell's timed TTFT rows (``raw_rows``: the raw engine's)."""
    ok = measured(rows)
    ttft = values(ok, "ttft_ms")
    raw_median = stats.median(values(measured(raw_rows or ()), "ttft_ms"))
    return TtftStats(
        key=cell_key(rows[0]) if rows else ("", "", "", ""),
        n=len(values(ok, "wall_ms")),
        n_ttft=len(ttft),
        crashed=len(rows) - len(ok),
        errors=sum(1 for r in rows if getattr(r, "status", None) != "completed"),
        expect_ok_rate=expect_ok_rate(ok),
        ttft={
            "median": stats.median(ttft),
            "p25": stats.percentile(ttft, 25),
            "p75": stats.percentile(ttft, 75),
            "p95": stats.percentile(ttft, 95),
            "min": min(ttft) if ttft else math.nan,
            "max": max(ttft) if ttft else math.nan,
        },
        floor_ms=stats.median(values(ok, "floor_ttft_ms")),
        extra_ms=stats.median(map(ttft_over_floor, ok)),
        extra_vs_raw_ms=stats.median(ttft) - raw_median,
        medians={
            m: stats.median(values(ok, m))
            for m in (
                "scripted_ttft_ms",
                "ttft_overhead_ms",
                "wall_ms",
                "llm_calls",
                "streamed_requests",
            )
        },
    )


# ---------------------------------------------------------------------------------------------
# throughput and footprint


def completed_per_s(row: ThroughputRow) -> float | None:
    """Completed runs per second of one level: ``runs_per_s`` (which counts failed runs too)
    times the share of the level's runs that completed."""
    rate, runs, errors = (stats.number(v) for v in (row.runs_per_s, row.runs, row.errors))
    if rate is None or runs is None or runs <= 0:
        return rate if errors is None or errors == 0 else None
    return rate * max(runs - (errors or 0), 0) / runs


def throughput_level(row: ThroughputRow) -> dict[str, Any]:
    """One level's numbers; the latency percentiles are taken over the runs' latencies."""
    latencies = list(row.latencies_ms)
    return {
        "engine": row.engine,
        "scenario": row.scenario,
        "latency": row.latency,
        "transport": row.transport,
        "concurrency": row.concurrency,
        "runs": row.runs,
        "errors": row.errors,
        "duration_s": row.duration_s,
        "runs_per_s": row.runs_per_s,
        "completed_per_s": completed_per_s(row),
        "latency_mean_ms": stats.mean(latencies),
        "latency_p50_ms": stats.median(latencies),
        "latency_p95_ms": stats.percentile(latencies, 95),
        "latency_p99_ms": stats.percentile(latencies, 99),
        "overhead_median_ms": row.overhead_median_ms,
        "cpu_ms_per_run": row.cpu_ms_per_run,
        "cpu_utilization": row.cpu_utilization,
        "window_s": row.window_s,
        "crashed": row.crashed,
    }


def footprint_by_engine(rows: Sequence[FootprintRow]) -> list[dict[str, Any]]:
    """Per engine (first-seen order): medians over its stack probes and over its workers."""
    out = []
    for engine in dict.fromkeys(r.engine for r in rows):
        mine = [r for r in rows if r.engine == engine]
        entry: dict[str, Any] = {"engine": engine}
        stack = [r for r in mine if r.kind == "stack" and r.status == "ok"]
        if stack:
            entry["stack"] = " ".join(stack[0].stack)
            entry["stack_probes"] = len(stack)
            entry["stack_import_ms"] = stats.median(values(stack, "import_ms"))
            entry["stack_import_ms_min"] = min(values(stack, "import_ms"), default=math.nan)
            entry["stack_import_ms_max"] = max(values(stack, "import_ms"), default=math.nan)
            entry["stack_modules"] = stats.median(values(stack, "modules"))
            entry["stack_rss_mb"] = stats.median(
                _difference(r.rss_after_mb, r.rss_before_mb) for r in stack
            )
        workers = [r for r in mine if r.kind == "worker"]
        if workers:
            entry["workers"] = len(workers)
            entry["harness_modules"] = stats.median(values(workers, "harness_modules"))
            entry["engine_import_ms"] = stats.median(values(workers, "engine_import_ms"))
            entry["engine_import_ms_min"] = min(
                values(workers, "engine_import_ms"), default=math.nan
            )
            entry["engine_modules"] = stats.median(
                _difference(r.modules_after_import, r.harness_modules) for r in workers
            )
            for name in ("modules_after_first_run", "rss_after_import_mb", "peak_rss_mb"):
                entry[name] = stats.median(values(workers, name))
            entry["first_run_ms"] = stats.median(values(workers, "first_run_ms"))
            entry["first_run_status"] = most_common(r.first_run_status for r in workers)
        out.append(entry)
    return out


def _difference(a: object, b: object) -> float | None:
    x, y = stats.number(a), stats.number(b)
    return None if x is None or y is None else x - y


def order_index(names: Iterable[str]) -> Mapping[str, int]:
    """name → position, for sorting by a run's configured order (unknown names last)."""
    return {name: i for i, name in enumerate(names)}


# ---------------------------------------------------------------------------------------------
# the profiling probe (bench.probe; docs/measurement.md, "The profiling probe")

SHARE_METHODS = ("sampling", "sampling-leaf", "cprofile")
# a scenario whose runs mostly wait (a tool's scripted latency) gets few samples of work at
# zero latency (parallel_tool_calls: ~10): its shares would be noise, so pooled shares leave
# out scenarios with fewer samples than this, whatever the method (like for like)
MIN_SHARE_SAMPLES = 50


def probe_rows(rows: Iterable[ProfileRow], kind: str = "scenario") -> list[ProfileRow]:
    """The probe's rows of one kind that measured something (status ok)."""
    return [r for r in rows if r.status == "ok" and r.kind == kind]


def _median_of(values: Sequence[float]) -> float | None:
    return stats.number(stats.median(values)) if values else None


def _share_counts(row: ProfileRow, method: str) -> dict[str, float]:
    if method == "sampling":
        return dict(row.samples_by_group)
    if method == "sampling-leaf":
        return dict(row.leaf_samples_by_group)
    if method == "cprofile":
        return dict(row.cprofile_ms_by_group)
    raise ValueError(f"unknown share method {method!r}; one of {', '.join(SHARE_METHODS)}")


def row_shares(row: ProfileRow, method: str = "sampling") -> dict[str, float]:
    """One scenario's share of time per group (0..1): samples, or cProfile's tottime."""
    counts = _share_counts(row, method)
    total = sum(counts.values())
    return {g: v / total for g, v in counts.items()} if total > 0 else {}


def share_rows(rows: Sequence[ProfileRow]) -> list[ProfileRow]:
    """The scenarios pooled shares are taken over (``MIN_SHARE_SAMPLES`` samples or more)."""
    return [r for r in rows if (r.samples or 0) >= MIN_SHARE_SAMPLES]


def profile_shares(rows: Sequence[ProfileRow], method: str = "sampling") -> dict[str, float]:
    """Share per group, the mean over scenarios of each scenario's share (each scenario
    weighted once; ``share_rows`` only), in ``GROUPS`` order (groups the data adds last)."""
    if method not in SHARE_METHODS:
        raise ValueError(f"unknown share method {method!r}; one of {', '.join(SHARE_METHODS)}")
    per = [row_shares(r, method) for r in share_rows(rows)]
    per = [p for p in per if p]
    if not per:
        return {}
    names = [g for g in GROUPS if any(g in p for p in per)]
    names += sorted({g for p in per for g in p} - set(names))
    return {g: sum(p.get(g, 0.0) for p in per) / len(per) for g in names}


def share_standard_error(rows: Sequence[ProfileRow], group: str | Sequence[str]) -> float:
    """Sampling error of a pooled share (``profile_shares``): the binomial error of each
    scenario's share, combined over the mean."""
    groups = (group,) if isinstance(group, str) else tuple(group)
    errors = []
    for row in share_rows(rows):
        n = row.samples or 0
        if n <= 0:
            continue
        p = sum(row.samples_by_group.get(g, 0) for g in groups) / n
        errors.append(p * (1 - p) / n)
    return math.sqrt(sum(errors)) / len(errors) if errors else math.nan


def inclusive_callback_share(rows: Sequence[ProfileRow]) -> tuple[float, float] | None:
    """Claim 2 on inclusive time: the share of samples with a callback manager, tracer or
    langsmith wrapper anywhere on the stack, or a runnable's own frame charged
    (``CALLBACK_STACK_GROUPS``, ``RUNNABLE_GROUP``); the mean over scenarios and its
    binomial error, as ``profile_shares``. None without stack samples (older probes)."""
    from bench.engines.packages import RUNNABLE_GROUP

    shares, errors = [], []
    for row in share_rows(rows):
        stacks = row.stack_samples
        n = sum(count for _, _, count in stacks)
        if not stacks or n <= 0:
            continue
        hit = sum(count for group, on, count in stacks if on or group == RUNNABLE_GROUP)
        p = hit / n
        shares.append(p)
        errors.append(p * (1 - p) / n)
    if not shares:
        return None
    return sum(shares) / len(shares), math.sqrt(sum(errors)) / len(errors)


def _per_step(row: ProfileRow, field: str) -> float | None:
    return per_step(_median_of(getattr(row, field)), row.llm_calls)


def _ratio(numerator: Sequence[float], denominator: Sequence[float]) -> float | None:
    a, b = _median_of(numerator), _median_of(denominator)
    return a / b if a is not None and b else None


def profile_marginals(rows: Sequence[ProfileRow], engine: str) -> dict[str, Any]:
    """The marginal variants (``bench.probe.variants``) of one engine: engine calls of one more
    tool call, of one more LLM step with its tool call, and of a step without it."""
    mine = [r for r in rows if r.engine == engine and r.status == "ok"]
    variants = [r for r in mine if r.kind == "variant"]
    if not variants:
        return {}
    base_name = variants[0].variant_of
    base = next((r for r in mine if r.kind == "scenario" and r.scenario == base_name), None)
    plus = {r.scenario[len(base_name or "") :]: r for r in variants if r.scenario}
    if base is None or "+tool" not in plus or "+step" not in plus:
        return {}
    medians = {k: _median_of(r.calls_per_run) for k, r in (("base", base), *plus.items())}
    calls = {k: v for k, v in medians.items() if v is not None}
    if len(calls) < len(medians):
        return {}
    tool, step = calls["+tool"] - calls["base"], calls["+step"] - calls["base"]
    return {
        "scenario": base_name,
        "per_tool_call": tool,
        "per_step_with_tool": step,
        "per_step_without_tool": step - tool,
        # what each variant really did (a ReAct engine plays parallel calls one per LLM turn)
        "llm_calls": {k: r.llm_calls for k, r in (("base", base), *plus.items())},
        "tool_calls": {k: r.tool_calls for k, r in (("base", base), *plus.items())},
    }


def _range(values: Sequence[float | None]) -> tuple[float, float]:
    finite = [v for v in values if v is not None]
    return (min(finite), max(finite)) if finite else (math.nan, math.nan)


def _spread(values: Sequence[int]) -> float:
    """Relative spread of counts over counted runs: (max − min) / median; 0 = reproducible;
    NaN with fewer than two counted runs (nothing to compare: the brief probe plan)."""
    if len(values) < 2:
        return math.nan
    mid = stats.median(values)
    return (max(values) - min(values)) / mid if mid else 0.0


def profile_by_engine(rows: Sequence[ProfileRow]) -> list[dict[str, Any]]:
    """Per engine (first-seen order): the probe's numbers pooled over its scenarios.

    Calls and wall time per step are geometric means over scenarios of each scenario's median
    per run ÷ its LLM calls; depths, modules and classes the median over scenarios of each
    scenario's median over its sends (tool bodies); shares the mean of each scenario's.
    Engines that were not probed carry their status and reason only.
    """
    out = []
    for engine in dict.fromkeys(r.engine for r in rows):
        mine = [r for r in rows if r.engine == engine]
        ok = probe_rows(mine)
        entry: dict[str, Any] = {"engine": engine, "scenarios": len(ok)}
        failed = [r for r in mine if r.status != "ok"]
        entry["status"] = "ok" if ok else (failed[0].status if failed else "error")
        entry["errors"] = [f"{r.scenario or engine}: {r.error}" for r in failed if r.error]
        if not ok:
            out.append(entry)
            continue
        by_scenario = {r.scenario: r for r in ok}
        for name, field in (
            ("calls_per_step", "calls_per_run"),
            ("resumes_per_step", "resumes_per_run"),
            ("c_calls_per_step", "c_calls_per_run"),
            ("harness_calls_per_step", "harness_calls_per_run"),
            ("executor_jobs_per_step", "executor_jobs_per_run"),
            ("ms_per_step", "wall_ms"),
        ):
            values = {s: _per_step(r, field) for s, r in by_scenario.items()}
            positive = [v for v in values.values() if v is not None and v > 0]
            entry[name] = (
                stats.geometric_mean(positive)
                if positive
                else (0.0 if any(v == 0 for v in values.values()) else math.nan)
            )
            entry[f"{name}_range"] = _range(list(values.values()))
        spreads = [s for s in (_spread(r.calls_per_run) for r in ok) if math.isfinite(s)]
        entry["calls_spread"] = max(spreads) if spreads else math.nan
        for edge in ("send", "tool"):
            for what in ("depths", "modules", "classes"):
                medians = [_median_of(getattr(r, f"{edge}_{what}")) for r in ok]
                medians = [m for m in medians if m is not None]
                key = f"{edge}_{what[:-1] if what == 'depths' else what}"
                entry[key] = stats.median(medians) if medians else math.nan
                entry[f"{key}_range"] = _range(medians)
            entry[f"{edge}_unanchored"] = sum(len(getattr(r, f"{edge}_unanchored")) for r in ok)
        entry.update({f"marginal_{k}": v for k, v in profile_marginals(rows, engine).items()})
        entry["shares"] = profile_shares(ok, "sampling")
        entry["leaf_shares"] = profile_shares(ok, "sampling-leaf")
        entry["cprofile_shares"] = profile_shares(ok, "cprofile")
        entry["samples"] = sum(r.samples or 0 for r in ok)
        entry["share_scenarios"] = [r.scenario for r in share_rows(ok)]
        entry["callback_runnable_share"] = sum(
            entry["shares"].get(g, 0.0) for g in CALLBACK_RUNNABLE_GROUPS
        )
        entry["callback_runnable_share_se"] = share_standard_error(ok, CALLBACK_RUNNABLE_GROUPS)
        # the profilers' own cost: profiled wall time per run ÷ plain wall time per run
        for name, field in (
            ("cprofile_factor", "cprofile_wall_ms"),
            ("sampling_factor", "sampled_wall_ms"),
        ):
            ratios = [_ratio(getattr(r, field), r.wall_ms) for r in ok]
            ratios = [x for x in ratios if x]
            entry[name] = stats.geometric_mean(ratios) if ratios else math.nan
        # a cross-check of the sampler: the mock's share by samples and by its own clock
        entry["mock_share_sampled"] = stats.mean(
            [(r.samples_in_mock or 0) / r.samples for r in ok if r.samples]
        )
        entry["mock_share_timed"] = stats.mean(
            [x for x in (_ratio(r.mock_ms, r.wall_ms) for r in ok) if x is not None]
        )
        out.append(entry)
    return out


# the open-loop load phase (load.jsonl)

LOAD_ERROR_BUDGET = 0.01  # a level sustains its rate with at most this share of bad runs
# … and completes at least this share of its offered rate: "well below" only, since over a
# 1 s window the completions in the interval and the arrivals in the window are two
# Poisson counts (±10 % each at 100 runs/s); an engine falling behind fails its p95 first
LOAD_ACHIEVED_FLOOR = 0.5
LOAD_INTERVAL_SAMPLED = 0.9  # achieved rate only over (nearly) the whole interval
MOCK_BUSY = 0.8  # a mock process this busy (CPU s per s) may be what limits a level
CONTENDED = 0.25  # other processes on the machine used this many cores: a contended level
CAPACITY_RATE = 100.0  # runs/s: the rate "cores needed" is given for (the article's claim)
LoadKey = tuple[str, int]  # engine, processes


@dataclass(frozen=True)
class LoadLevel:
    """One level of the load phase, judged (docs/measurement.md, "The load phase")."""

    engine: str
    processes: int
    rate: float  # offered runs/s, all processes together
    scenario: str
    profile: str  # the mock's latency profile
    target_ms: float
    scripted_ms: float
    scheduled: int  # measured runs that were due
    ok: int
    errors: int  # measured runs that completed wrongly, failed or raised
    timeouts: int  # cut at the level's timeout, or by an early stop
    not_run: int  # due after an early stop
    offered_rate: float  # measured runs due ÷ the window
    achieved_rate: float  # ok completions ÷ the throughput interval
    percentiles: dict[float, stats.Estimate]  # 50, 95, 99 → latency (ms) from scheduled start
    cpu_ms_per_run: stats.Estimate  # engine CPU ÷ ok completions, over the interval's slices
    cores_used: float  # engine CPU seconds per wall second (all processes)
    peak_rss_mb: float  # the largest engine process
    mock_cpu_per_s: float  # the busiest mock process
    host_cpu_per_s: float  # every process of the machine
    other_cpu_per_s: float  # of it, neither the engine's processes nor the mock's
    start_lag_p99_ms: float  # how late the generator started runs
    stopped: str | None
    sustained: bool
    why_not: tuple[str, ...]  # why the level is not sustained (empty when it is)

    @property
    def key(self) -> LoadKey:
        return (self.engine, self.processes)

    @property
    def p95(self) -> stats.Estimate:
        return self.percentiles[95.0]

    @property
    def mock_busy(self) -> bool:
        """The mock may have been the bottleneck: one of its processes near a full core."""
        return self.mock_cpu_per_s >= MOCK_BUSY

    @property
    def contended(self) -> bool:
        """Other processes on the machine took ``CONTENDED`` cores or more during the level:
        its verdict may say more about the machine than about the engine."""
        return self.other_cpu_per_s >= CONTENDED


def _float(v: object) -> float:
    n = stats.number(v)
    return math.nan if n is None else n


def load_level(row: Any, *, seed: int = stats.DEFAULT_SEED) -> LoadLevel:
    """A ``kind: "level"`` row of load.jsonl: its percentiles, CPU per run and verdict.

    Sustained: the p95 of the latencies (each from the run's scheduled start; timeouts and
    cut runs at their censored value) within the target, at most ``LOAD_ERROR_BUDGET`` of
    the measured runs bad (wrong, failed, timed out, cut), ok completions at
    ``LOAD_ACHIEVED_FLOOR`` × the offered rate or more, and no early stop (the generator
    stops a level only once one of these has certainly failed; its percentiles are then
    lower bounds, and its achieved rate unknown: the interval was cut short).
    """
    rate = float(row.rate)
    scheduled = int(row.scheduled or 0)
    errors = int((row.wrong or 0) + (row.failed or 0))
    timeouts = int((row.timeouts or 0) + (row.cut or 0))
    slices = list(row.cpu_slices)
    ids = (row.engine, int(row.processes), rate)
    percentiles = stats.bootstrap_percentiles(
        row.latencies_ms, seed=stats.seed_for(seed, "load latency", *ids)
    )
    cpu = stats.bootstrap_ratio_of_sums(
        [c * 1000 for c, _ in slices],
        [n for _, n in slices],
        seed=stats.seed_for(seed, "load cpu", *ids),
    )
    interval, window = _float(row.interval_s), _float(row.window_s)
    # the interval is as long as the window; a level stopped early sampled part of it only
    complete = interval > 0 and interval >= LOAD_INTERVAL_SAMPLED * window
    if not row.ok and not row.completions:
        achieved = 0.0  # no ok run at all: none in any interval, sampled in full or not
    else:
        achieved = (row.completions or 0) / interval if complete else math.nan
    offered = scheduled / window if window > 0 else math.nan
    target = _float(row.target_ms)
    cores_used = stats.number(row.cores_used)
    if cores_used is None:  # a row of an older run: summed CPU over the shortest interval
        cores_used = (row.cpu_s or 0.0) / interval if interval > 0 else math.nan
    why: list[str] = []
    if row.stopped:
        why.append(f"stopped early: {row.stopped}")
    else:
        if not (percentiles[95.0].point <= target):
            why.append("p95 over the target")
        bad = errors + timeouts
        if scheduled == 0 or bad > LOAD_ERROR_BUDGET * scheduled:
            why.append(f"{bad} of {scheduled} runs bad")
        if not (achieved >= LOAD_ACHIEVED_FLOOR * rate):
            why.append("achieved rate under the offered rate")
    return LoadLevel(
        engine=row.engine,
        processes=int(row.processes),
        rate=rate,
        scenario=row.scenario,
        profile=row.latency,
        target_ms=target,
        scripted_ms=_float(row.scripted_ms),
        scheduled=scheduled,
        ok=int(row.ok or 0),
        errors=errors,
        timeouts=timeouts,
        not_run=int(row.not_run or 0),
        offered_rate=offered,
        achieved_rate=achieved,
        percentiles=percentiles,
        cpu_ms_per_run=cpu,
        cores_used=cores_used,
        peak_rss_mb=_float(row.peak_rss_mb),
        mock_cpu_per_s=_float(row.mock_cpu_per_s),
        host_cpu_per_s=_float(row.host_cpu_per_s),
        other_cpu_per_s=_float(row.host_cpu_per_s)
        - (row.engine_cpu_total_per_s or 0.0)
        - (row.mock_cpu_total_per_s or 0.0),
        start_lag_p99_ms=_float(row.start_lag_p99_ms),
        stopped=row.stopped,
        sustained=not why,
        why_not=tuple(why),
    )


def load_levels(rows: Iterable[Any], *, seed: int = stats.DEFAULT_SEED) -> list[LoadLevel]:
    """Every measured level of load.jsonl (mock probes and crashed levels left out), ordered
    by engine (first seen), process count and rate."""
    levels = [
        load_level(r, seed=seed)
        for r in rows
        if getattr(r, "kind", None) == "level" and not is_crashed(r) and r.rate is not None
    ]
    order = order_index(dict.fromkeys(level.engine for level in levels))
    return sorted(levels, key=lambda v: (order[v.engine], v.processes, v.rate))


def by_sweep(levels: Iterable[LoadLevel]) -> dict[LoadKey, list[LoadLevel]]:
    """Levels grouped by (engine, processes), each group by rate."""
    out: dict[LoadKey, list[LoadLevel]] = {}
    for level in levels:
        out.setdefault(level.key, []).append(level)
    return {k: sorted(v, key=lambda x: x.rate) for k, v in out.items()}


@dataclass(frozen=True)
class Capacity:
    """The highest offered rate an engine sustained within the latency target, from its
    sweep at one process count, and what it costs there."""

    engine: str
    processes: int
    target_ms: float
    rate: float | None  # the highest sustained rate (None: none of the rates measured)
    above: float | None  # the lowest rate above it that was not sustained (None: none)
    below_all: float | None  # no rate sustained: the lowest rate tried
    p95: stats.Estimate | None  # latency at ``rate``
    cpu_ms_per_run: stats.Estimate | None  # engine CPU per run measured at ``rate``
    mock_busy: bool  # the mock was near its ceiling at ``rate`` or at ``above``
    contended: bool  # other processes loaded the machine at ``rate`` or at ``above``
    # every sustained rate (up to ``rate``) -> the CPU per run measured there: CPU per run
    # grows with the rate, so two engines compare at a rate both sustained
    cpu_ms_by_rate: dict[float, stats.Estimate] = dataclasses.field(default_factory=dict)

    @property
    def censored(self) -> bool:
        """Sustained the highest rate tried: the capacity is at least ``rate``."""
        return self.rate is not None and self.above is None

    @property
    def resolution(self) -> float | None:
        """``above`` ÷ ``rate``: how wide the bracket is (None: open at one end)."""
        if self.rate is None or self.above is None:
            return None
        return self.above / self.rate

    @property
    def plus_minus(self) -> float | None:
        """The bracket as ± around its geometric middle: √(above ÷ rate) − 1 (0.08: ±8 %)."""
        r = self.resolution
        return None if r is None else math.sqrt(r) - 1

    @property
    def text(self) -> str:
        """The capacity as its bracket: ``sustains 74, not 86 (±8 %)``; ``≥ 400 (the highest
        tried)``; ``< 10 (none sustained)``."""
        if self.rate is None:
            return f"< {self.below_all:g} (none sustained)"
        if self.above is None:
            return f"≥ {self.rate:g} (the highest tried)"
        pm = self.plus_minus
        return f"sustains {self.rate:g}, not {self.above:g}" + (
            f" (±{pm * 100:.0f} %)" if pm is not None else ""
        )

    def cores_for(
        self, runs_per_s: float = CAPACITY_RATE, *, measured_at: float | None = None
    ) -> stats.Estimate | None:
        """Cores busy at ``runs_per_s``: the CPU per run measured at capacity (or at the
        sustained rate ``measured_at``) × the rate."""
        cpu = self.cpu_ms_per_run if measured_at is None else self.cpu_ms_by_rate.get(measured_at)
        if cpu is None:
            return None
        return stats.scaled(cpu, runs_per_s / 1000)


def common_rate(*sweeps: Capacity) -> float | None:
    """The highest rate every sweep sustained (None: there is none): where their CPU per
    run compares like for like. A searched sweep (``loadplan.search``) starts with a level
    at ``loadplan.COMMON_RATE``, so sweeps that all sustained it share at least that one."""
    shared = set.intersection(*(set(c.cpu_ms_by_rate) for c in sweeps)) if sweeps else set()
    return max(shared) if shared else None


def capacity(levels: Sequence[LoadLevel]) -> Capacity:
    """``Capacity`` of one sweep (the levels of one engine and process count).

    ``rate`` is the highest sustained rate below the lowest rate that was not sustained
    (noise cannot lift it over a failure), ``above`` that lowest failure: the true capacity
    lies in the bracket [``rate``, ``above``), ``resolution`` wide (the search of
    ``loadplan.search`` narrows it to ``loadplan.RESOLUTION``; a grid leaves it at the
    grid's step). A rate measured twice counts its latest level (a confirmation). Cores for 100 runs/s use the CPU per run
    measured under load at ``rate`` (its interval: a bootstrap over the 100 ms slices of
    the level's throughput interval).
    """
    if not levels:
        raise ValueError("capacity of an empty sweep")
    ordered = sorted(levels, key=lambda v: v.rate)
    first = ordered[0]
    failed = [v for v in ordered if not v.sustained]
    above = failed[0] if failed else None
    passed = [v for v in ordered if v.sustained and (above is None or v.rate < above.rate)]
    best = passed[-1] if passed else None
    return Capacity(
        engine=first.engine,
        processes=first.processes,
        target_ms=first.target_ms,
        rate=best.rate if best is not None else None,
        above=above.rate if above is not None else None,
        below_all=None if best is not None else first.rate,
        p95=best.p95 if best is not None else None,
        cpu_ms_per_run=best.cpu_ms_per_run if best is not None else None,
        mock_busy=any(v.mock_busy for v in (best, above) if v is not None),
        contended=any(v.contended for v in (best, above) if v is not None),
        cpu_ms_by_rate={v.rate: v.cpu_ms_per_run for v in passed},
    )


def verdict_at(level: LoadLevel, factor: float) -> bool | None:
    """The level re-judged with the target at ``factor`` × its scripted latency: True,
    False, or None when its record cannot tell. A level that stopped early on its p95
    fails every target up to its own (its percentiles are lower bounds) and is unknown
    above it; one stopped on errors fails every target (bad runs do not depend on it)."""
    if not math.isfinite(level.scripted_ms) or not level.scripted_ms > 0:
        return None
    target = level.scripted_ms * factor
    if level.stopped:
        if level.stopped == "errors":
            return False
        return False if target <= level.target_ms * (1 + 1e-9) else None
    others = [w for w in level.why_not if w != "p95 over the target"]
    return not others and level.p95.point <= target


@dataclass(frozen=True)
class Bracket:
    """A capacity re-judged at another target (``capacity_at``): the highest rate sustained
    below the lowest rate known to fail, that rate, and how many levels could not be
    re-judged (their verdict unknown)."""

    factor: float
    sustained: float | None
    fails: float | None
    unknown: int
    lowest: float  # the lowest rate measured


def capacity_at(levels: Sequence[LoadLevel], factor: float) -> Bracket:
    """The sweep's capacity with the target at ``factor`` × the scripted latency, from the
    levels' records (``verdict_at``); levels whose verdict is unknown count for nothing."""
    verdicts = {v.rate: verdict_at(v, factor) for v in levels}
    failed = [r for r, ok in verdicts.items() if ok is False]
    fails = min(failed) if failed else None
    passed = [r for r, ok in verdicts.items() if ok and (fails is None or r < fails)]
    return Bracket(
        factor=factor,
        sustained=max(passed) if passed else None,
        fails=fails,
        unknown=sum(1 for ok in verdicts.values() if ok is None),
        lowest=min(verdicts) if verdicts else math.nan,
    )


SENSITIVITY_FACTORS = (1.1, 1.2, 1.5)  # targets the capacity is re-judged at (× scripted)


def capacities(levels: Iterable[LoadLevel]) -> dict[LoadKey, Capacity]:
    """``capacity`` of every sweep, by (engine, processes)."""
    return {key: capacity(group) for key, group in by_sweep(levels).items()}


def saturation_rate(levels: Sequence[LoadLevel]) -> float | None:
    """The lowest rate of a sweep the engine did not sustain (None: it sustained them all)."""
    failed = [v.rate for v in levels if not v.sustained]
    return min(failed) if failed else None


def tail_ratio(
    mine: Sequence[LoadLevel], theirs: Sequence[LoadLevel], q: float = 99.0
) -> dict[float, stats.Estimate]:
    """At each rate both sweeps measured: my ``q``-th latency percentile ÷ theirs, with an
    interval from the two (independent) bootstraps."""
    other = {v.rate: v for v in theirs}
    return {
        v.rate: stats.ratio_of_estimates(v.percentiles[q], other[v.rate].percentiles[q])
        for v in sorted(mine, key=lambda x: x.rate)
        if v.rate in other
    }


@dataclass(frozen=True)
class MockCeiling:
    """The mock's ceiling, measured by a bare client (``kind: "mock"`` rows)."""

    stream: bool
    processes: int
    requests_per_s: float  # what the probe reached (limited by its own concurrency)
    cpu_ms_per_request: float  # what each request cost the mock
    concurrency: int

    @property
    def busy_at_requests_per_s(self) -> float:
        """Requests/s at which every mock process would be busy all the time."""
        if not self.cpu_ms_per_request > 0:
            return math.nan
        return self.processes * 1000 / self.cpu_ms_per_request


def mock_ceilings(rows: Iterable[Any]) -> list[MockCeiling]:
    """The mock probes of load.jsonl (JSON replies first, then streamed)."""
    out = [
        MockCeiling(
            stream=bool(r.stream),
            processes=int(r.processes),
            requests_per_s=_float(r.requests_per_s),
            cpu_ms_per_request=_float(r.mock_cpu_ms_per_request),
            concurrency=int(r.concurrency or 0),
        )
        for r in rows
        if getattr(r, "kind", None) == "mock" and not is_crashed(r)
    ]
    return sorted(out, key=lambda m: m.stream)


LOAD_COLUMNS = [
    "engine", "processes", "rate", "scenario", "latency", "target_ms", "scheduled", "ok",
    "errors", "timeouts", "not_run", "offered_rate", "achieved_rate",
    "p50_ms", "p50_ci_low", "p50_ci_high", "p95_ms", "p95_ci_low", "p95_ci_high",
    "p99_ms", "p99_ci_low", "p99_ci_high", "cpu_ms_per_run", "cpu_ms_per_run_ci_low",
    "cpu_ms_per_run_ci_high", "cores_used", "peak_rss_mb", "mock_cpu_per_s", "mock_busy",
    "host_cpu_per_s", "other_cpu_per_s", "contended", "start_lag_p99_ms", "stopped",
    "sustained", "why_not",
]  # fmt: skip


def load_record(level: LoadLevel) -> dict[str, Any]:
    """One row of load.csv (``LOAD_COLUMNS``)."""
    out: dict[str, Any] = {
        "engine": level.engine,
        "processes": level.processes,
        "rate": level.rate,
        "scenario": level.scenario,
        "latency": level.profile,
        "target_ms": level.target_ms,
        "scheduled": level.scheduled,
        "ok": level.ok,
        "errors": level.errors,
        "timeouts": level.timeouts,
        "not_run": level.not_run,
        "offered_rate": level.offered_rate,
        "achieved_rate": level.achieved_rate,
    }
    for q in (50, 95, 99):
        e = level.percentiles[float(q)]
        out.update({f"p{q}_ms": e.point, f"p{q}_ci_low": e.low, f"p{q}_ci_high": e.high})
    cpu = level.cpu_ms_per_run
    out.update(
        {
            "cpu_ms_per_run": cpu.point,
            "cpu_ms_per_run_ci_low": cpu.low,
            "cpu_ms_per_run_ci_high": cpu.high,
            "cores_used": level.cores_used,
            "peak_rss_mb": level.peak_rss_mb,
            "mock_cpu_per_s": level.mock_cpu_per_s,
            "mock_busy": level.mock_busy,
            "host_cpu_per_s": level.host_cpu_per_s,
            "other_cpu_per_s": level.other_cpu_per_s,
            "contended": level.contended,
            "start_lag_p99_ms": level.start_lag_p99_ms,
            "stopped": level.stopped,
            "sustained": level.sustained,
            "why_not": "; ".join(level.why_not),
        }
    )
    return out
