"""The report's part on the open-loop load phase: its frames (for the charts) and its section.

Every number comes from ``bench.results.metrics`` (``LoadLevel``, ``capacity``,
``capacity_at``, ``common_rate``, ``tail_ratio``, ``mock_ceilings``), read into ``RunData.load_levels`` by the adapter; this
module lays them out. ``load_frame`` feeds the latency-against-load chart,
``capacity_frame`` the capacity chart (``bench.report.charts``); ``load_phase`` is the
section (the document's blocks, as ``bench.report.sections`` builds them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from bench.engines.registry import REGISTRY
from bench.report.document import Block, Bullets, Figure, Note, Paragraph, Section, Strong, Table
from bench.report.frames import RunData, is_langchain
from bench.results import fmt, metrics

P = Paragraph.of
ChartSlot = Figure | Note

LOAD_FRAME_COLUMNS = [
    "engine", "processes", "rate", "p50_ms", "p95_ms", "p99_ms", "p99_low", "p99_high",
    "target_ms", "scripted_ms", "sustained", "stopped", "mock_busy",
]  # fmt: skip
CAPACITY_FRAME_COLUMNS = [
    "engine", "processes", "rate", "above", "censored", "below_all", "cores_100",
    "cores_low", "cores_high", "target_ms",
]  # fmt: skip


def load_frame(levels: Sequence[metrics.LoadLevel]) -> pd.DataFrame:
    """One row per level: latency percentiles against the offered rate."""
    rows = [
        {
            "engine": v.engine,
            "processes": v.processes,
            "rate": v.rate,
            "p50_ms": v.percentiles[50.0].point,
            "p95_ms": v.p95.point,
            "p99_ms": v.percentiles[99.0].point,
            "p99_low": v.percentiles[99.0].low,
            "p99_high": v.percentiles[99.0].high,
            "target_ms": v.target_ms,
            "scripted_ms": v.scripted_ms,
            "sustained": v.sustained,
            "stopped": v.stopped,
            "mock_busy": v.mock_busy,
        }
        for v in levels
    ]
    return pd.DataFrame(rows, columns=LOAD_FRAME_COLUMNS)


def capacity_frame(levels: Sequence[metrics.LoadLevel]) -> pd.DataFrame:
    """One row per engine × process count: the capacity and the cores for 100 runs/s."""
    rows = []
    for (engine, processes), cap in metrics.capacities(levels).items():
        cores = cap.cores_for()
        rows.append(
            {
                "engine": engine,
                "processes": processes,
                "rate": cap.rate if cap.rate is not None else math.nan,
                "above": cap.above if cap.above is not None else math.nan,
                "censored": cap.censored,
                "below_all": cap.below_all if cap.below_all is not None else math.nan,
                "cores_100": cores.point if cores else math.nan,
                "cores_low": cores.low if cores else math.nan,
                "cores_high": cores.high if cores else math.nan,
                "target_ms": cap.target_ms,
            }
        )
    return pd.DataFrame(rows, columns=CAPACITY_FRAME_COLUMNS)


def bracket_text(b: metrics.Bracket) -> str:
    """A re-judged capacity (``metrics.capacity_at``): ``74–86``, ``≥ 74 (higher unknown)``,
    ``≥ 74 (the highest tried)``, ``< 10``, or ``unknown`` — never more than the levels'
    records say."""
    if b.sustained is not None and b.fails is not None:
        return f"{b.sustained:g}–{b.fails:g}"
    if b.sustained is not None:
        return f"≥ {b.sustained:g}" + (" (higher unknown)" if b.unknown else " (the highest tried)")
    if b.fails is not None:
        return f"< {b.fails:g}" if b.fails <= b.lowest else f"< {b.fails:g} (lower unknown)"
    return "unknown"


def host_ceilings(caps: Mapping[metrics.LoadKey, metrics.Capacity]) -> dict[int, str]:
    """Per process count, the bare loop's capacity (the host's own ceiling), as text."""
    floor = next((e for e, _ in caps if _role(e) == "floor"), None)
    return {p: c.text for (e, p), c in caps.items() if e == floor}


def common_rates(caps: Mapping[metrics.LoadKey, metrics.Capacity]) -> dict[int, float | None]:
    """Per process count, the highest rate every sweep sustained (``metrics.common_rate``)."""
    counts = sorted({p for _, p in caps})
    return {p: metrics.common_rate(*(c for (_, q), c in caps.items() if q == p)) for p in counts}


def caveats(item: Any) -> str:
    """'mock busy', 'contended' or both, for a level or a capacity."""
    words = [w for w, on in (("mock busy", item.mock_busy), ("contended", item.contended)) if on]
    return ", ".join(words)


def _estimate_text(e: Any, show: Any = fmt.ms) -> str:
    if e is None or not math.isfinite(e.point):
        return "–"
    if math.isfinite(e.low) and math.isfinite(e.high):
        return f"{show(e.point)} ({show(e.low)}–{show(e.high)})"
    return show(e.point)


def _cores(value: float) -> str:
    return fmt.num(value, "{:.2f}")


def _capacity_table(levels: Sequence[metrics.LoadLevel]) -> Table:
    caps = metrics.capacities(levels)
    sweeps = metrics.by_sweep(levels)
    hosts = host_ceilings(caps)
    common = common_rates(caps)
    rows = []
    for (engine, processes), cap in caps.items():
        spec = REGISTRY.get(engine)
        cores = cap.cores_for()
        at = common.get(processes)
        rows.append(
            (
                engine,
                spec.role_label if spec else "–",
                str(processes),
                cap.text,
                fmt.num(cap.above, "{:g}"),
                hosts.get(processes, "–"),
                _estimate_text(cap.p95, lambda v: fmt.ms(v, seconds_from=1000)),
                _estimate_text(cap.cpu_ms_per_run),
                _estimate_text(cap.cpu_ms_by_rate.get(at)) + (f" at {at:g}" if at else "")
                if at is not None
                else "–",
                _estimate_text(cores, _cores),
                fmt.num(metrics.saturation_rate(sweeps[(engine, processes)]), "{:g}"),
                caveats(cap),
            )
        )
    return Table(
        (
            "engine",
            "role",
            "processes",
            "capacity (runs/s)",
            "first rate not sustained",
            "host's ceiling (bare loop)",
            "p95 at capacity (95 % CI)",
            "CPU per run there",
            "CPU per run at the common rate",
            "cores for 100 runs/s",
            "saturates at",
            "caveats",
        ),
        tuple(rows),
        caption="Capacity: the highest offered rate (Poisson arrivals) whose p95 latency, "
        "measured from each run's scheduled start, stays within the target, with at most 1 % "
        "of the runs wrong, failed or timed out, and the first rate not sustained: the true "
        "capacity lies in that bracket (± = half its width on a log scale; the search "
        "narrows it to ±10 % in one process, ±20 % in more). ≥: the highest rate tried. The "
        "host's ceiling: the bare loop's capacity at the same process count, what the "
        "machine itself allows. CPU per run at the common rate: at the highest rate every "
        "sweep of that process count sustained (CPU per run grows with the rate, so this is "
        "the like-for-like column). Cores for 100 runs/s = 100 × the engine's CPU per run "
        "measured at capacity (the mock's CPU not included). Caveats: 'mock busy' — a mock "
        "process used ≥ 80 % of a core at capacity or at the next rate, so the referee may "
        "share the blame; 'contended' — other processes on the machine took ≥ 0.25 cores "
        "there, so the verdict may say more about the machine.",
        numeric=(2, 4, 6, 7, 8, 9, 10),
    )


def _sensitivity_table(levels: Sequence[metrics.LoadLevel]) -> Table:
    """Each sweep's capacity re-judged at other targets (``metrics.capacity_at``)."""
    factors = metrics.SENSITIVITY_FACTORS
    rows = []
    for (engine, processes), group in metrics.by_sweep(levels).items():
        rows.append(
            (
                engine,
                str(processes),
                *(bracket_text(metrics.capacity_at(group, f)) for f in factors),
            )
        )
    return Table(
        ("engine", "processes", *(f"p95 ≤ {f:g}× scripted" for f in factors)),
        tuple(rows),
        caption="The objective's sensitivity: each sweep's capacity (runs/s: sustained–not "
        "sustained) re-judged from the recorded latencies with the target at other multiples "
        "of the scripted latency. The search aimed at the run's own target, so the other "
        "brackets are wider; a level stopped early at the run's target is known to fail a "
        "lower one and is unknown for a higher one ('higher unknown').",
        numeric=(1,),
    )


def _tail_table(levels: Sequence[metrics.LoadLevel]) -> Table | None:
    """Each self-built engine's p99 against the floor's, at the rates both sustained (like
    for like: only the self-built engines that stream the way the floor does)."""
    sweeps = metrics.by_sweep(levels)
    engines = list(dict.fromkeys(v.engine for v in levels))
    floors = [e for e in engines if _role(e) == "floor"]
    if not floors:
        return None
    floor = floors[0]
    ours = [
        e
        for e in engines
        if _role(e) == "self-built" and REGISTRY[e].streams == REGISTRY[floor].streams
    ]
    if not ours:
        return None
    rows = []
    for engine in ours:
        for processes in sorted({v.processes for v in levels}):
            mine = [v for v in sweeps.get((engine, processes), []) if v.sustained]
            theirs = [v for v in sweeps.get((floor, processes), []) if v.sustained]
            by_rate = {v.rate: v for v in theirs}
            for rate, ratio in metrics.tail_ratio(mine, theirs, 99.0).items():
                m = next(v for v in mine if v.rate == rate)
                rows.append(
                    (
                        engine,
                        str(processes),
                        f"{rate:g}",
                        fmt.ms(by_rate[rate].percentiles[99.0].point),
                        fmt.ms(m.percentiles[99.0].point),
                        _estimate_text(ratio, lambda v: fmt.ratio(v, digits=2)),
                        fmt.ms(m.percentiles[99.0].point - by_rate[rate].percentiles[99.0].point),
                    )
                )
    if not rows:
        return None
    return Table(
        ("engine", "processes", "runs/s", f"{floor} p99", "its p99", "ratio (95 % CI)", "extra"),
        tuple(rows),
        caption=f"The tail under load: p99 latency from the scheduled start, against the "
        f"{floor} loop at every rate both sustained. The target of the issue: within 1.2× "
        f"{floor}'s.",
        numeric=(1, 2, 3, 4, 5, 6),
    )


def _role(engine: str) -> str | None:
    spec = REGISTRY.get(engine)
    return spec.role if spec else None


def _levels_table(levels: Sequence[metrics.LoadLevel]) -> Table:
    rows = []
    for v in levels:
        verdict = "sustained" if v.sustained else "; ".join(v.why_not)
        rows.append(
            (
                v.engine,
                str(v.processes),
                f"{v.rate:g}",
                fmt.num(v.offered_rate),
                fmt.num(v.achieved_rate),
                fmt.ms(v.percentiles[50.0].point, seconds_from=1000),
                _estimate_text(v.p95, lambda x: fmt.ms(x, seconds_from=1000)),
                fmt.ms(v.percentiles[99.0].point, seconds_from=1000),
                f"{v.errors} / {v.timeouts}",
                fmt.ms(v.cpu_ms_per_run.point),
                _cores(v.cores_used),
                fmt.count(v.peak_rss_mb),
                _cores(v.mock_cpu_per_s),
                _cores(v.other_cpu_per_s),
                verdict + (f" ({caveats(v)})" if caveats(v) else ""),
            )
        )
    return Table(
        (
            "engine",
            "processes",
            "rate",
            "offered",
            "achieved",
            "p50",
            "p95 (95 % CI)",
            "p99",
            "errors / timeouts",
            "CPU per run",
            "cores used",
            "peak RSS (MB)",
            "mock CPU/s",
            "other CPU/s",
            "verdict",
        ),
        tuple(rows),
        caption="Every level: offered = measured runs due ÷ the window; achieved = ok "
        "completions ÷ the throughput interval (unknown when the level stopped early); "
        "percentiles from each run's scheduled start (lower bounds when stopped early); "
        "cores used = engine CPU seconds per second; mock CPU/s: its busiest process; other "
        "CPU/s: what every other process on the machine used meanwhile.",
        numeric=tuple(range(1, 14)),
    )


def _mock_paragraph(data: RunData) -> Paragraph | None:
    ceilings = list(data.mock_ceilings)
    if not ceilings:
        return None
    parts = []
    for c in ceilings:
        parts.append(
            f"{'streamed' if c.stream else 'JSON'} replies cost it "
            f"{fmt.ms(c.cpu_ms_per_request)} of CPU each, so its {c.processes} process(es) "
            f"would be busy at about {c.busy_at_requests_per_s:,.0f} requests/s "
            f"(the bare client reached {c.requests_per_s:,.0f}/s with {c.concurrency} "
            "connections in flight)"
        )
    busiest = max(
        (v.mock_cpu_per_s for v in data.load_levels if math.isfinite(v.mock_cpu_per_s)),
        default=math.nan,
    )
    busy = [v for v in data.load_levels if v.mock_busy]
    tail = f" At the levels measured, its busiest process used at most {_cores(busiest)} cores" + (
        f"; {len(busy)} level(s) found it busy (⚠ in the tables)."
        if busy
        else ": it was never the bottleneck."
    )
    return P(
        Strong("The referee's ceiling. "),
        "A bare HTTP client (no agent) measured the mock on the load profile: "
        + "; ".join(parts)
        + "."
        + tail,
    )


def _placement_text(data: RunData) -> str:
    """Where a spread load phase ran (``run --cluster --spread-load``; one host: nothing)."""
    placement = (data.meta or {}).get("load_placement")
    if not placement:
        return ""
    generators = list(placement.get("generators") or [])
    return (
        f" Spread over a cluster: the mock on {placement.get('mock')}, the load workers on "
        f"{', '.join(generators)} (process i on generator i mod {len(generators)}; "
        f"{placement.get('cores')} cores together): one process is one node's figure, the "
        "most processes the deployment's."
    )


def _bullets(data: RunData) -> list[Paragraph]:
    levels = list(data.load_levels)
    caps = metrics.capacities(levels)
    sweeps = metrics.by_sweep(levels)
    out: list[Paragraph] = []
    one = {e: c for (e, p), c in caps.items() if p == 1}
    many = {(e, p): c for (e, p), c in caps.items() if p > 1}
    lc_sat = [
        f"{e} at {fmt.num(metrics.saturation_rate(sweeps[(e, 1)]), '{:g}')} runs/s"
        for e in one
        if is_langchain(e) and metrics.saturation_rate(sweeps[(e, 1)]) is not None
    ]
    if lc_sat:
        out.append(
            P(
                Strong("One process. "),
                "The LangChain engines stop keeping up with: " + ", ".join(lc_sat) + ".",
            )
        )
    for (engine, p), cap in many.items():
        if engine in one:
            text = f"{one[engine].text} runs/s in one process, {cap.text} in {p}."
            out.append(P(Strong(f"{engine}. "), text))
    return out


def load_phase(data: RunData, charts: Mapping[str, ChartSlot]) -> Section:
    """The load phase's section: capacity, latency against load, the tail, the referee."""
    levels = list(data.load_levels)
    title, anchor = "Load: capacity under a latency target", "load"
    if not levels:
        return Section(title, anchor, (Note("No load phase in this run (load.jsonl)."),))
    first = levels[0]
    processes = sorted({v.processes for v in levels})
    blocks: list[Block] = [
        P(
            f"Open loop, as traffic arrives at a service: runs of {first.scenario} start at "
            "Poisson arrival times at a fixed offered rate, whether or not the engine keeps up, "
            "and each run's latency counts from its scheduled start, so queueing shows. The "
            f"mock answers on its '{first.profile}' profile: one run is scripted to take "
            f"{fmt.ms(first.scripted_ms, seconds_from=1000)}; the target is a p95 within "
            f"{fmt.ms(first.target_ms, seconds_from=1000)} "
            f"(× {first.target_ms / first.scripted_ms:.2g}). Each engine runs in "
            + " and ".join(f"{p} process{'es' if p > 1 else ''}" for p in processes)
            + " (independent seeded arrival streams, the same for every engine), the mock "
            "in processes of its own." + _placement_text(data)
        ),
        _capacity_table(levels),
        _sensitivity_table(levels),
    ]
    if bullets := _bullets(data):
        blocks.append(Bullets(tuple(bullets)))
    for key in ("load_latency", "capacity"):
        if key in charts:
            blocks.append(charts[key])
    tail = _tail_table(levels)
    if tail is not None:
        blocks.append(tail)
    mock = _mock_paragraph(data)
    if mock is not None:
        blocks.append(mock)
    details = Section("Every level", "load-levels", (_levels_table(levels),), collapsed=True)
    return Section(title, anchor, tuple(blocks), (details,))


__all__ = [
    "bracket_text",
    "capacity_frame",
    "common_rates",
    "host_ceilings",
    "load_frame",
    "load_phase",
]
