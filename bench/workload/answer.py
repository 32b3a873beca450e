"""The one-page answer to a workload (``decision.md``), written from the run folder alone.

Every number on the page is read from the run's files (runs.jsonl, ttft.jsonl, load.jsonl,
meta.json) with the harness's own statistics (``bench.results.stats``, ``metrics``), so a
sceptic can recompute each one; ``decision.json`` holds the same numbers unformatted.

- **per run** (runs.jsonl, the workload's latency profile, completed timed runs): wall time
  p50 and p95 with percentile-bootstrap 95 % intervals, and the means of LLM calls, prompt
  and completion tokens (a cost is linear in them: with tools failing at a rate, a median
  would hide the retries);
- **at the target rate** (load.jsonl, the level offered the per-host rate): whether the
  objective was met (the level sustained: p95 within the objective, errors within budget, the
  rate achieved; and the p99 within a p99 objective) and with how few processes; the engine
  CPU per run measured there, and the cores it takes at the whole target rate;
- **cost per 1,000 runs** (with prices): mean tokens × token prices + CPU per run under
  load × the core-hour price;
- the scenarios whose expectations some runs missed, and the decision.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.results import fmt, metrics, stats
from bench.results.folder import RunFolder
from bench.workload.decide import load_rates
from bench.workload.model import Workload, describe

CI = "95 % CI"


@dataclass(frozen=True)
class Interval:
    """A point and its 95 % interval (NaN where not measured)."""

    point: float
    low: float = math.nan
    high: float = math.nan

    @classmethod
    def of(cls, estimate: stats.Estimate | None) -> Interval:
        if estimate is None:
            return cls(math.nan)
        return cls(estimate.point, estimate.low, estimate.high)

    def plus(self, constant: float) -> Interval:
        return Interval(self.point + constant, self.low + constant, self.high + constant)

    def times(self, factor: float) -> Interval:
        return Interval(self.point * factor, self.low * factor, self.high * factor)

    def overlaps(self, other: Interval) -> bool:
        """Whether the two intervals share a value (unknown intervals count as overlapping)."""
        if not all(map(math.isfinite, (self.low, self.high, other.low, other.high))):
            return True
        return self.low <= other.high and other.low <= self.high

    def to_dict(self) -> dict[str, float | None]:
        return {k: stats.number(v) for k, v in vars(self).items()}


@dataclass(frozen=True)
class LoadAnswer:
    """What the load phase says about one engine at the per-host target rate."""

    measured: bool  # a level at the target rate exists
    met: bool | None  # None: not measured
    processes: int | None  # the fewest processes that met it
    p95_ms: Interval
    p99_ms: Interval
    why_not: str  # the verdict's reasons at the fewest processes tried (empty when met)
    cpu_ms_per_run: Interval  # where it met the objective, else at the fewest processes
    cpu_measured_at: int | None  # processes of that level
    cpu_rate: float | None = None  # the offered rate of the level the CPU per run is from
    caveats: tuple[str, ...] = ()  # the shown level's: mock near its ceiling, machine busy
    achieved_rate: float = math.nan  # ok completions per second in the shown level
    peak_rate: float | None = None  # the highest rate of the grid (1.5× the target)
    peak_met: bool | None = None  # the objective met there (None: not measured)
    peak_why: str = ""


@dataclass(frozen=True)
class EngineAnswer:
    """One engine on the workload's first scenario, and its expectations everywhere."""

    engine: str
    role: str
    runs: int  # completed timed runs of the first scenario
    of_runs: int  # timed runs of it (crashed and failed ones too)
    p50_ms: Interval
    p95_ms: Interval
    llm_calls: float
    prompt_tokens: float
    completion_tokens: float
    ttft_p50_ms: float
    streams: bool  # its ordinary run streams (the registry's flag; plugins: True)
    mix_llm_calls: float  # over the workload's scenarios: the mean of each one's mean
    mix_prompt_tokens: float
    load: LoadAnswer
    cores: Interval  # at the whole target rate
    cost: Interval | None  # per 1,000 runs (None: no prices)
    token_cost: float | None
    missed: tuple[str, ...] = ()  # "scenario: k of n runs missed (reason)"
    tool_failures: tuple[int, int] = (0, 0)  # (failed, all) tool executions of its runs
    waited_ms: float = math.nan  # mean per run: sleeps it chose (backoff), not overhead

    @property
    def expectations_met(self) -> bool:
        return not self.missed


@dataclass
class Answer:
    """The whole page's numbers."""

    workload: Workload
    spec: str
    scenario: str
    host_rate: float
    engines: list[EngineAnswer]
    other_scenarios: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cores: int | None = None  # the machine's logical cores (meta.json)
    decision: str = ""
    turns_on: str = ""


def _role(engine: str) -> str:
    from bench.engines.registry import REGISTRY

    spec = REGISTRY.get(engine)
    return spec.role if spec is not None else "plugin"


def _streams(engine: str) -> bool:
    from bench.engines.registry import REGISTRY

    spec = REGISTRY.get(engine)
    return spec.streams if spec is not None else True


def _mix(runs: list[dict[str, Any]], name: str) -> float:
    """The mean over the scenarios of each one's mean (NaN if one has none)."""
    values = [r[name] for r in runs]
    return stats.mean(values) if all(map(math.isfinite, values)) else math.nan


def _runs(folder: RunFolder, engine: str, scenario: str, spec: str) -> list[Any]:
    return [
        r
        for r in folder.timed_runs
        if r.engine == engine and r.scenario == scenario and r.latency == spec
    ]


def per_run(rows: list[Any], seed: int, engine: str, scenario: str) -> dict[str, Any]:
    """Wall-time percentiles (bootstrap over runs) of the completed runs, and the mean
    calls and tokens of every measured run (a failed run's tokens are spent too)."""
    spent = metrics.measured(rows)
    done = metrics.completed(spent)
    walls = metrics.values(done, "wall_ms")
    percentiles = stats.bootstrap_percentiles(
        walls, (50.0, 95.0), seed=stats.seed_for(seed, "decide wall", engine, scenario)
    )
    return {
        "runs": len(walls),
        "of_runs": len(rows),
        "p50_ms": Interval.of(percentiles[50.0]),
        "p95_ms": Interval.of(percentiles[95.0]),
        "llm_calls": stats.mean(metrics.values(spent, "llm_calls")),
        "prompt_tokens": stats.mean(metrics.values(spent, "prompt_tokens")),
        "completion_tokens": stats.mean(metrics.values(spent, "completion_tokens")),
        "tool_failures": (
            sum(r.tool_errors or 0 for r in spent),
            sum(r.tool_calls or 0 for r in spent),
        ),
        "waited_ms": stats.mean(metrics.values(spent, "waited_ms")),
    }


def missed(folder: RunFolder, engine: str, scenarios: list[str], spec: str) -> tuple[str, ...]:
    """The scenarios where some of the engine's runs missed their expectations."""
    out = []
    for scenario in scenarios:
        rows = metrics.measured(_runs(folder, engine, scenario, spec))
        if not rows:
            out.append(f"{scenario}: no measured run")
            continue
        bad = [r for r in rows if r.expect_ok is False or metrics.is_error(r)]
        if bad:
            why = metrics.failure_reason(rows) or "reason not recorded"
            out.append(f"{scenario}: {why}")
    return tuple(out)


def _same_rate(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def load_answer(
    levels: list[metrics.LoadLevel], workload: Workload, peak_rate: float | None = None
) -> LoadAnswer:
    """The levels of one engine at the per-host target rate, judged against the objective
    (and, for the headroom, at ``peak_rate``)."""
    p99_limit = workload.objective.p99_ms

    def why(level: metrics.LoadLevel) -> list[str]:
        reasons = list(level.why_not)
        if p99_limit is not None and not level.percentiles[99.0].point <= p99_limit:
            reasons.append("p99 over the p99 objective")
        return reasons

    def at_rate(rate: float) -> list[metrics.LoadLevel]:
        return sorted((v for v in levels if _same_rate(v.rate, rate)), key=lambda v: v.processes)

    peak = at_rate(peak_rate) if peak_rate is not None else []
    peak_met = any(not why(v) for v in peak) if peak else None
    at = at_rate(workload.host_rate)
    if not at:
        nan = Interval(math.nan)
        return LoadAnswer(False, None, None, nan, nan, "not measured", nan, None)
    met = [v for v in at if not why(v)]
    shown = met[0] if met else at[0]
    cpu, cpu_rate = shown.cpu_ms_per_run, shown.rate
    if not met:
        # a level the engine fell behind in counts too few completions for its CPU: the CPU
        # per run at the highest rate the same sweep sustained, where there is one
        sweep = [v for v in levels if v.processes == shown.processes]
        best = metrics.capacity(sweep)
        if best.rate is not None and best.cpu_ms_per_run is not None:
            cpu, cpu_rate = best.cpu_ms_per_run, best.rate
    return LoadAnswer(
        measured=True,
        met=bool(met),
        processes=met[0].processes if met else None,
        p95_ms=Interval.of(shown.p95),
        p99_ms=Interval.of(shown.percentiles[99.0]),
        why_not="; ".join(why(at[0])),
        cpu_ms_per_run=Interval.of(cpu),
        cpu_measured_at=shown.processes,
        cpu_rate=cpu_rate,
        caveats=tuple(
            text
            for flag, text in (
                (shown.mock_busy, "the mock near its ceiling"),
                (shown.contended, "other processes busy on the machine"),
            )
            if flag
        ),
        achieved_rate=shown.achieved_rate,
        peak_rate=peak_rate if peak else None,
        peak_met=peak_met,
        peak_why="; ".join(why(peak[0])) if peak else "",
    )


def build_answer(folder: RunFolder, workload: Workload, engines: tuple[str, ...]) -> Answer:
    """Every number of the page, from the run folder."""
    spec = workload.latency_spec
    first = workload.scenarios[0]
    seed = folder.seed
    levels = [
        v
        for v in metrics.load_levels(folder.load, seed=seed)
        if v.scenario == first and v.profile == spec
    ]
    prices = workload.prices
    answers = []
    for engine in engines:
        run = per_run(_runs(folder, engine, first, spec), seed, engine, first)
        every = [run] + [
            per_run(_runs(folder, engine, name, spec), seed, engine, name)
            for name in workload.scenarios[1:]
        ]
        load = load_answer(
            [v for v in levels if v.engine == engine], workload, max(load_rates(workload))
        )
        cores = load.cpu_ms_per_run.times(workload.rate / 1000)
        cost = token_cost = None
        if prices is not None:
            # each scenario's mean tokens at the prices, the scenarios weighted alike
            token_cost = stats.mean(
                (r["prompt_tokens"] * prices.prompt_per_1m
                 + r["completion_tokens"] * prices.completion_per_1m) / 1e6 * 1000
                for r in every
            )  # fmt: skip
            counts = [r[k] for r in every for k in ("prompt_tokens", "completion_tokens")]
            if not all(map(math.isfinite, counts)):
                token_cost = math.nan  # a scenario without a measured run
            # CPU seconds per run × price per core-second × 1,000 runs
            cost = load.cpu_ms_per_run.times(prices.core_hour / 3600).plus(token_cost)
        ttft = [
            r.ttft_ms
            for r in metrics.completed(folder.timed_ttft)
            if r.engine == engine and r.latency == spec
        ]
        answers.append(
            EngineAnswer(
                engine=engine,
                role=_role(engine),
                streams=_streams(engine),
                mix_llm_calls=_mix(every, "llm_calls"),
                mix_prompt_tokens=_mix(every, "prompt_tokens"),
                ttft_p50_ms=stats.median(ttft),
                load=load,
                cores=cores,
                cost=cost,
                token_cost=token_cost,
                missed=missed(folder, engine, workload.scenarios, spec),
                **run,
            )
        )
    answer = Answer(workload, spec, first, workload.host_rate, answers)
    answer.cores = (folder.meta.get("machine") or {}).get("cpu_logical")
    for scenario in workload.scenarios[1:]:
        for engine in engines:
            run = per_run(_runs(folder, engine, scenario, spec), seed, engine, scenario)
            answer.other_scenarios.append({"scenario": scenario, "engine": engine, **run})
    decide(answer)
    return answer


# -- the decision ---------------------------------------------------------------------------


def _criterion(answer: Answer) -> str:
    return "cost" if answer.workload.prices is not None else "p95"


def _score(e: EngineAnswer, criterion: str) -> Interval:
    """The engine's figure on the criterion (NaN where not measured: ranked last)."""
    if criterion == "cost":
        return e.cost if e.cost is not None else Interval(math.nan)
    return e.p95_ms


def ranking(answer: Answer) -> list[EngineAnswer]:
    """The candidates (``candidates``), best first: meeting the objective at
    the target rate, then meeting every scenario's expectations, then the criterion (cost
    per 1,000 runs with prices, else p95 per run); unmeasured values last."""
    criterion = _criterion(answer)

    def key(e: EngineAnswer) -> tuple[int, int, float]:
        point = _score(e, criterion).point
        return (
            0 if e.load.met else 1,
            0 if e.expectations_met else 1,
            point if math.isfinite(point) else math.inf,
        )

    return sorted(candidates(answer), key=key)


def candidates(answer: Answer) -> list[EngineAnswer]:
    """Every engine but the floor; for a streaming workload only the engines that stream
    (the non-streaming stand-ins are shown, not chosen), unless none does."""
    pool = [e for e in answer.engines if e.role != "floor"]
    if answer.workload.streaming and any(e.streams for e in pool):
        pool = [e for e in pool if e.streams]
    return pool


def decide(answer: Answer) -> None:
    """The decision sentence and what would turn it (``answer.decision``, ``turns_on``)."""
    ranked = ranking(answer)
    if not ranked:
        answer.decision = "No engine to decide between (only the floor was measured)."
        return
    criterion = _criterion(answer)
    what = "cost per 1,000 runs" if criterion == "cost" else "p95 per run at this latency"
    show = _money(answer) if criterion == "cost" else fmt.ms
    win = ranked[0]
    rate = f"{answer.host_rate:g} runs/s per host"
    lead = ""
    if not win.load.met:
        lead = (
            f"No engine met the objective at {rate} on this machine with the processes "
            "tried; of those that did not, "
        )
    elif not win.expectations_met:
        lead = "Every engine that met the objective missed some expectations; "
    score = _score(win, criterion)
    figure = f"{show(score.point)} ({CI} {_range(score, show)})"
    if len(ranked) == 1:
        answer.decision = f"{lead}**{win.engine}** ({what} {figure}) is the only candidate."
        return
    other = ranked[1]
    their = _score(other, criterion)
    versus = f"{other.engine}'s {show(their.point)} ({CI} {_range(their, show)})"
    overlap = (
        "the intervals overlap, so at these run counts the two are not told apart"
        if score.overlaps(their)
        else "the intervals do not overlap"
    )
    if win.load.met and not other.load.met:
        text = (
            f"**{win.engine}** wins on the objective: it met {_objective(answer)} at {rate}, "
            f"{other.engine} did not ({other.load.why_not}). On {what}: {figure} against "
            f"{versus}; {overlap}."
        )
    elif win.expectations_met and not other.expectations_met:
        text = (
            f"{lead}**{win.engine}** wins on expectations: {other.engine} missed some "
            f"({'; '.join(other.missed)}). On {what}: {figure} against {versus}; {overlap}."
        )
    else:
        text = f"{lead}**{win.engine}** wins on {what}: {figure}, against {versus}; {overlap}."
    answer.decision = text
    answer.turns_on = _turns_on(answer, win, other, criterion)


def _turns_on(answer: Answer, win: EngineAnswer, other: EngineAnswer, criterion: str) -> str:
    rate = f"{answer.host_rate:g} runs/s per host"
    prices = answer.workload.prices
    priced = criterion == "cost" and prices is not None and win.cost is not None and other.cost
    if win.load.met and not other.load.met:
        cpu = other.load.cpu_ms_per_run.point
        text = (
            f"{other.engine} would be in the running if it met the objective at {rate} "
            f"({other.load.why_not or 'not measured'}; p95 there "
            f"{fmt.ms(other.load.p95_ms.point)} against {_objective(answer)}; "
            f"{fmt.num(cpu, '{:,.2f}')} ms CPU per run under load"
            f"{_cpu_rate(other.load, answer.host_rate)} = "
            f"{fmt.num(cpu * answer.host_rate / 1000, '{:,.2f}')} cores at {rate}, on "
            f"{answer.cores or '?'} cores shared with the mock)."
        )
        if priced:
            text += " On cost alone: " + _cost_turns_on(answer, win, other)
        return text + _headroom(win, other)
    if priced:
        return _cost_turns_on(answer, win, other) + _headroom(win, other)
    gap = other.p95_ms.point - win.p95_ms.point
    return f"{other.engine} would win if its p95 per run fell by {fmt.ms(gap)}."


def _headroom(win: EngineAnswer, other: EngineAnswer) -> str:
    """A sentence when only one of the two met the objective at the grid's top rate."""
    rate = win.load.peak_rate or other.load.peak_rate
    if rate is None or win.load.peak_met is None or other.load.peak_met is None:
        return ""
    if win.load.peak_met == other.load.peak_met:
        return ""
    loser, keeper = (win, other) if other.load.peak_met else (other, win)
    text = (
        f" Headroom: at {rate:g} runs/s per host {keeper.engine} met the objective and "
        f"{loser.engine} did not ({loser.load.peak_why})"
    )
    if loser is win:
        text += f"; a peak that high would turn it to {keeper.engine}"
    return text + "."


def _cost_turns_on(answer: Answer, win: EngineAnswer, other: EngineAnswer) -> str:
    """What would make ``other`` the cheaper one: a core-hour price on the other side of the
    break-even (when one engine saves tokens and the other CPU), else fewer tokens or less
    CPU. Cost = token cost + CPU s per run × core-hour price ÷ 3,600, per 1,000 runs."""
    prices = answer.workload.prices
    assert prices is not None and win.cost is not None and other.cost is not None
    money = _money(answer)
    d_tok = (other.token_cost or 0.0) - (win.token_cost or 0.0)  # per 1,000 runs
    d_cpu = other.load.cpu_ms_per_run.point - win.load.cpu_ms_per_run.point  # ms per run
    per_price = d_cpu / 1000 / 3600 * 1000  # cost per 1,000 runs per unit of core-hour price
    gap = other.cost.point - win.cost.point
    calls = fmt.signed(other.mix_llm_calls - win.mix_llm_calls, lambda v: fmt.num(v, "{:,.1f}"))
    tokens = fmt.signed(other.mix_prompt_tokens - win.mix_prompt_tokens, fmt.count)
    cpu = fmt.signed(d_cpu, lambda v: fmt.num(v, "{:,.2f}"))
    facts = (
        f"{other.engine} makes {calls} LLM calls and sends {tokens} prompt tokens per run "
        f"(means over the workload's scenarios) and spends {cpu} ms "
        f"of CPU per run under load against {win.engine}"
    )
    if math.isfinite(per_price) and per_price and d_tok * per_price < 0:
        even = -d_tok / per_price
        side = "below" if per_price > 0 else "above"
        return (
            f"{facts}: it would be the cheaper at a core-hour price {side} {money(even)} "
            f"(stated: {money(prices.core_hour)})."
        )
    if gap < 0:
        return (
            f"{facts}: it is the cheaper by {money(-gap)} per 1,000 runs, and ranks below "
            "only because of the gate above."
        )
    return (
        f"{facts}: at the stated prices it costs {money(gap)} more per 1,000 runs "
        f"({money(d_tok)} in tokens, {money(per_price * prices.core_hour)} in CPU), so it "
        "would win only by sending fewer tokens or spending less CPU per run, not by a "
        "change of prices."
    )


def _objective(answer: Answer) -> str:
    o = answer.workload.objective
    parts = [f"p{q} ≤ {v:g} ms" for q, v in ((95, o.p95_ms), (99, o.p99_ms)) if v is not None]
    return " and ".join(parts)


def _money(answer: Answer) -> Any:
    currency = answer.workload.prices.currency if answer.workload.prices else "$"

    def show(value: float) -> str:
        """Four significant digits, at least two decimals (``$0.04800``, ``$12.35``)."""
        if not math.isfinite(value):
            return fmt.MISSING
        magnitude = math.floor(math.log10(abs(value))) if value else 0
        decimals = max(2, 3 - magnitude) if value else 2
        return f"{'−' if value < 0 else ''}{currency}{abs(value):,.{decimals}f}"

    return show


def _range(i: Interval, show: Any) -> str:
    if not (math.isfinite(i.low) and math.isfinite(i.high)):
        return "not enough runs"
    return f"{show(i.low)}–{show(i.high)}"


# -- the page -----------------------------------------------------------------------------


def _cell(i: Interval, show: Any = fmt.ms) -> str:
    if not math.isfinite(i.point):
        return fmt.MISSING
    if not (math.isfinite(i.low) and math.isfinite(i.high)):
        return str(show(i.point))
    return f"{show(i.point)} [{show(i.low)}–{show(i.high)}]"


def _met(e: EngineAnswer) -> str:
    load = e.load
    if not load.measured:
        return "not measured"
    caveat = f" ⚠ {', '.join(load.caveats)}" if load.caveats else ""
    p95 = load.p95_ms
    achieved = f", p95 {_cell(p95)}, achieved {fmt.num(load.achieved_rate, '{:,.1f}')}/s"
    if load.met:
        processes = f"{load.processes} process{'es' * (load.processes != 1)}"
        return f"yes, {processes}{achieved}{caveat}"
    return f"no ({load.why_not}{achieved}){caveat}"


def _failures_line(answer: Answer) -> str:
    """The tool failure rate as the measured runs met it, and what each engine waited."""
    rate = answer.workload.tools.failure_rate if answer.workload.tools else 0.0
    parts = []
    for e in answer.engines:
        failed, calls = e.tool_failures
        share = f" ({failed / calls:.1%})" if calls else ""
        wait = f", waited {fmt.ms(e.waited_ms)} a run" if e.waited_ms > 0 else ""
        parts.append(f"{e.engine} {failed} of {calls}{share}{wait}")
    return (
        f"Tool calls that failed in these runs (the workload's rate: {rate:.1%}; a retry "
        "counts as a call): " + "; ".join(parts) + ". A wait is a sleep the engine chose "
        "(a retry's backoff): part of its time per run, never of its framework overhead."
    )


def _cpu_rate(load: LoadAnswer, target: float) -> str:
    """`` (at 10/s)`` when the CPU per run is from a level other than the target's."""
    if load.cpu_rate is None or _same_rate(load.cpu_rate, target):
        return ""
    return f" (at {load.cpu_rate:g}/s)"


def machine_line(meta: dict[str, Any]) -> str:
    """The machine of the run, from meta.json."""
    m = meta.get("machine") or {}
    parts = [
        str(m.get("cpu_model") or "CPU unknown"),
        f"{m.get('cpu_logical', '?')} logical cores",
    ]
    if m.get("memory_total_mb"):
        parts.append(f"{m['memory_total_mb'] / 1024:,.1f} GiB")
    python = (meta.get("python") or {}).get("version")
    if python:
        parts.append(f"Python {python}")
    return ", ".join(parts)


def render(answer: Answer, folder: RunFolder, source: str) -> str:
    """``decision.md``: the workload, the machine, the table, the decision, the caveats."""
    w = answer.workload
    money = _money(answer)
    lines = [f"# Decision for workload `{w.name}`", ""]
    if w.description:
        lines += [w.description.strip(), ""]
    lines.append(f"- **workload**: `{source}`")
    lines += [f"- **{key}**: {value}" for key, value in describe(w).items()]
    lines.append(f"- **mock latency profile**: `{answer.spec}`")
    lines.append(f"- **machine**: {machine_line(folder.meta)}")
    lines.append(f"- **run**: `{folder.directory}` (every number below is read from its files)")
    lines.append("")
    pool = ", ".join(e.engine for e in candidates(answer)) or "none"
    ranked_by = "cost per 1,000 runs" if w.prices is not None else "p95 per run"
    lines += [
        "## Decision",
        "",
        answer.decision,
        "",
        f"Candidates: {pool} (the floor{' and non-streaming engines' * w.streaming} shown "
        f"for reference), ranked by meeting the objective at the target rate, then every "
        f"scenario's expectations, then {ranked_by}.",
    ]
    if answer.turns_on:
        lines += ["", f"What would turn it: {answer.turns_on}"]
    lines.append("")
    objective = _objective(answer)
    head = [
        "engine",
        "runs",
        f"p50 per run [{CI}]",
        f"p95 per run [{CI}]",
        "LLM calls",
        "prompt tok",
        "completion tok",
    ]
    if w.streaming:
        head.append("TTFT p50")
    head += [
        f"met {objective} at {answer.host_rate:g}/s",
        "CPU ms/run under load",
        f"cores at {w.rate:g}/s",
    ]
    if w.prices is not None:
        head.append("cost / 1,000 runs (tokens: all scenarios)")
    lines += [
        f"## Per engine on `{answer.scenario}` (the load phase's scenario)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for e in answer.engines:
        floor = " (floor)" if e.role == "floor" else ""
        cells = [
            f"{e.engine}{floor}",
            f"{e.runs}/{e.of_runs}",
            _cell(e.p50_ms),
            _cell(e.p95_ms),
            fmt.num(e.llm_calls, "{:,.1f}"),
            fmt.num(e.prompt_tokens, "{:,.0f}"),
            fmt.num(e.completion_tokens, "{:,.0f}"),
        ]
        if w.streaming:
            cells.append(fmt.ms(e.ttft_p50_ms))
        cells += [
            _met(e),
            _cell(e.load.cpu_ms_per_run, lambda v: fmt.num(v, "{:,.2f}"))
            + _cpu_rate(e.load, answer.host_rate),
            _cell(e.cores, lambda v: fmt.num(v, "{:,.3f}")),
        ]
        if w.prices is not None:
            cost = _cell(e.cost, money) if e.cost is not None else fmt.MISSING
            cells.append(cost + (" ✗" if e.missed else ""))
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if w.tools is not None and w.tools.failure_rate:
        lines += [_failures_line(answer), ""]
    if answer.other_scenarios:
        lines += [
            "## The other scenarios",
            "",
            "| scenario | engine | runs | p50 per run | p95 per run | LLM calls | prompt tok |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in answer.other_scenarios:
            lines.append(
                f"| {row['scenario']} | {row['engine']} | {row['runs']}/{row['of_runs']} | "
                f"{fmt.ms(row['p50_ms'].point)} | {fmt.ms(row['p95_ms'].point)} | "
                f"{fmt.num(row['llm_calls'], '{:,.1f}')} | "
                f"{fmt.num(row['prompt_tokens'], '{:,.0f}')} |"
            )
        lines.append("")
    misses = [(e.engine, m) for e in answer.engines for m in e.missed]
    lines += ["## Expectations missed", ""]
    if misses:
        lines += [f"- {engine} on {m}" for engine, m in misses]
    else:
        lines.append("- none: every engine met every scenario's expectations in every run")
    lines += ["", "## How to read it", ""]
    lines += [
        f"- Per run: completed timed runs of runs.jsonl at `{answer.spec}`; p50/p95 with "
        "percentile-bootstrap intervals over runs (few runs: wide intervals). Calls and tokens "
        "are means over every measured run (a cost is linear in them).",
        f"- Load: the load.jsonl level offered {answer.host_rate:g} runs/s (Poisson arrivals, "
        "latency from each run's scheduled start); met = p95 within the objective, at most "
        f"{metrics.LOAD_ERROR_BUDGET:.0%} of runs bad, the rate achieved"
        + ("; and p99 within the p99 objective" if w.objective.p99_ms is not None else "")
        + ".",
        "- CPU ms per run under load: engine CPU ÷ ok completions over the level's slices, "
        "at the target rate; where the engine did not meet it there, at the highest rate "
        "it sustained (shown as `(at R/s)`).",
        f"- Cores at {w.rate:g}/s = CPU ms per run measured under load × {w.rate:g} ÷ 1,000"
        + (f" (over all {w.hosts} hosts)" if w.hosts > 1 else "")
        + "; the mock's own CPU is not counted.",
    ]
    if w.prices is not None:
        lines.append(
            "- Cost per 1,000 runs = tokens: the mean over the workload's scenarios (each "
            "weighted alike) of (mean prompt tokens × prompt price + mean completion "
            "tokens × completion price) ÷ 1M × 1,000; plus CPU: CPU ms per run under load ÷ "
            "1,000 × core-hour price ÷ 3,600 × 1,000. Its interval is the CPU's (token counts "
            "are scripted; with a tool failure rate they vary from run to run, and their mean "
            "carries no interval here). Tokens and calls count failed runs too (they were spent); ✗: some "
            "runs missed their expectations, and a run that fails early is cheap."
        )
    if folder.config.get("quick"):
        lines.append(
            "- `--quick`: few runs per engine and one load process: a smoke answer, not a "
            "measurement to rely on."
        )
    lines += [f"- {n}" for n in answer.notes]
    return "\n".join(lines) + "\n"


def to_json(answer: Answer) -> dict[str, Any]:
    """The page's numbers, unformatted (``decision.json``)."""

    def plain(value: Any) -> Any:
        if isinstance(value, Interval):
            return value.to_dict()
        if isinstance(value, float):
            return stats.number(value)
        if isinstance(value, LoadAnswer | EngineAnswer):
            return {k: plain(v) for k, v in vars(value).items()}
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [plain(v) for v in value]
        return value

    return {
        "workload": answer.workload.model_dump(),
        "latency": answer.spec,
        "scenario": answer.scenario,
        "host_rate": answer.host_rate,
        "engines": plain(answer.engines),
        "other_scenarios": plain(answer.other_scenarios),
        "decision": answer.decision,
        "turns_on": answer.turns_on,
        "notes": answer.notes,
    }


def write_answer(
    folder: RunFolder,
    workload: Workload,
    engines: tuple[str, ...],
    source: str,
    notes: list[str] | None = None,
) -> tuple[str, Path]:
    """Write decision.md and decision.json into the run folder; (the page, its path)."""
    answer = build_answer(folder, workload, engines)
    answer.notes += list(notes or [])
    page = render(answer, folder, source)
    path = Path(folder.directory) / "decision.md"
    path.write_text(page, encoding="utf-8")
    (Path(folder.directory) / "decision.json").write_text(
        json.dumps(to_json(answer), indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return page, path


__all__ = [
    "Answer",
    "EngineAnswer",
    "Interval",
    "LoadAnswer",
    "build_answer",
    "decide",
    "load_answer",
    "machine_line",
    "missed",
    "per_run",
    "ranking",
    "render",
    "to_json",
    "write_answer",
]
