"""The end of a run: CSV tables from the JSON lines, final meta.json, summary tables, exit code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.model.scenarios import performance_scenarios
from bench.results import fmt, metrics, per_engine, stats
from bench.results.files import (
    FOOTPRINT_CSV,
    LOAD_CSV,
    PER_ENGINE_CSV,
    SUMMARY,
    THROUGHPUT_CSV,
    TTFT_CSV,
)
from bench.results.folder import RunFolder, finished_repeats, finished_ttft, load_run_folder
from bench.results.per_engine import EngineSummary
from bench.results.summary import (
    build_footprint_table,
    build_summary,
    build_throughput_table,
    build_ttft_table,
    write_csv,
)
from bench.runner.metadata import cpu_reading, now_iso, other_cores, yardstick_ms, yardstick_repeats
from bench.runner.phases.outcomes import runs_missing as outcome_runs_missing
from bench.runner.plan import build_plan, build_ttft_plan, outcome_only


@dataclass(frozen=True)
class Tables:
    """The run folder as read once, and the tables written from it."""

    folder: RunFolder
    summary: Any
    footprint: Any
    throughput: Any
    ttft: Any
    load: list[Any]  # bench.results.metrics.LoadLevel, one per level of the load phase
    engines: dict[str, EngineSummary]  # per engine: overhead per step etc. (per_engine.csv)


def write_tables(store: Any, config: Any) -> Tables:
    """(Re)build summary.csv, per_engine.csv, footprint.csv, throughput.csv, ttft.csv and
    load.csv from the JSON lines."""
    import pandas as pd

    folder = load_run_folder(store.directory, require_runs=False)
    levels = metrics.load_levels(folder.load, seed=config.seed)
    tables = Tables(
        folder=folder,
        summary=build_summary(
            folder.runs,
            seed=config.seed,
            engine_order=config.engines,
            scenario_order=config.scenarios,
        ),
        footprint=build_footprint_table(folder.footprint),
        throughput=build_throughput_table(folder.throughput),
        ttft=build_ttft_table(folder.ttft, engine_order=config.engines),
        load=levels,
        engines=engine_summaries(
            folder,
            performance_scenarios(config.scenario_dir, {r.scenario for r in folder.timed_runs}),
        ),
    )
    write_csv(tables.summary, store.path(SUMMARY))
    write_csv(
        pd.DataFrame(
            per_engine.per_engine_records(tables.engines), columns=per_engine.PER_ENGINE_COLUMNS
        ),
        store.path(PER_ENGINE_CSV),
    )
    write_csv(tables.footprint, store.path(FOOTPRINT_CSV))
    write_csv(tables.throughput, store.path(THROUGHPUT_CSV))
    write_csv(tables.ttft, store.path(TTFT_CSV))
    if levels or store.path(LOAD_CSV).exists():
        records = [metrics.load_record(level) for level in levels]
        write_csv(pd.DataFrame(records, columns=metrics.LOAD_COLUMNS), store.path(LOAD_CSV))
    return tables


def engine_summaries(
    folder: RunFolder, performance: Sequence[str] | set[str] | None = None
) -> dict[str, EngineSummary]:
    """Per engine of a run folder: overhead per LLM step pooled over the happy paths, and the
    rest of ``bench.results.per_engine.EngineSummary`` — the report's figures (the engines
    that only play the outcome scenarios left out, as the report leaves them out)."""
    ran = tuple(dict.fromkeys(r.engine for r in folder.timed_runs))
    reduced = set(outcome_only(ran))
    measured = [e for e in ran if e not in reduced]
    return per_engine.of_folder(folder, engines=measured, performance=performance)


def engine_table(
    summary: Any,
    footprint: Any,
    throughput: Any,
    engines: tuple[str, ...],
    steps: dict[str, EngineSummary] | None = None,
) -> Any:
    """One row per engine: the headline numbers of the run. ``steps``: the per-engine
    summaries (``engine_summaries``: overhead per step pooled over the happy paths; None:
    not shown)."""
    from rich.table import Table

    table = Table(
        title="Per engine (medians over scenarios; overhead/step = geometric mean over the "
        "happy paths, as in the report; × raw = geometric mean over scenarios of median/raw's)"
    )
    for column in (
        "engine",
        "runs",
        "errors",
        "× raw",
        "overhead/step",
        "CPU",
        "tokens/req vs raw",
        "import",
        "peak RSS MB",
        "completed/s c=1",
        "unstable",
    ):
        table.add_column(column, justify="left" if column == "engine" else "right")
    for engine in engines:
        mine = summary[summary["engine"] == engine] if not summary.empty else summary
        if mine.empty:
            table.add_row(engine, "0", *["–"] * 9)
            continue
        fp = footprint[footprint["engine"] == engine] if not footprint.empty else footprint
        tp = (
            throughput[
                (throughput["engine"] == engine)
                & (throughput["concurrency"] == 1)
                & (throughput["latency"] == "zero")
            ]
            if not throughput.empty
            else throughput
        )
        import_ms = fp["stack_import_ms"].iloc[0] if not fp.empty else None
        if stats.number(import_ms) is None:
            import_ms = fp["engine_import_ms"].iloc[0] if not fp.empty else None
        table.add_row(
            engine,
            str(int(mine["n"].sum())),
            str(int(sum(mine[f"status_{s}"].sum() for s in metrics.STATUSES if s != "completed"))),
            # cells with no completed run make no speed claim
            fmt.ratio(
                stats.geometric_mean(mine[mine["status_completed"] > 0]["ratio_to_raw"]),
                digits=2,
            ),
            _step_ms(steps, engine),
            fmt.ms(stats.median(mine["cpu_ms_median"])),
            fmt.signed(stats.mean(mine["token_overhead_per_request"]), fmt.count),
            fmt.ms(import_ms),
            fmt.count(fp["peak_rss_mb"].iloc[0] if not fp.empty else None),
            fmt.num(tp["completed_per_s"].iloc[0] if not tp.empty else None),
            str(int(mine["unstable"].fillna(False).astype(bool).sum())),
        )
    return table


def _step_ms(steps: dict[str, EngineSummary] | None, engine: str) -> str:
    summary = (steps or {}).get(engine)
    return fmt.ms(summary.step_ms.point) if summary and summary.step_ms else fmt.MISSING


def failure_reasons(runs: Any) -> dict[tuple[str, str, str], str]:
    """Engine, scenario, latency → why its runs missed (``metrics.failure_reason``)."""
    return {
        (key[0], key[1], key[2]): why
        for key, rows in metrics.cells(runs).items()
        if (why := metrics.failure_reason(metrics.measured(rows)))
    }


def scenario_table(
    summary: Any,
    engines: tuple[str, ...],
    latency: str,
    reasons: dict[tuple[str, str, str], str] | None = None,
) -> Any:
    """Scenario × engine: median wall ms (! unstable, ✗ expectations not met); ``reasons``
    (engine, scenario, latency → why, ``metrics.failure_reason``) go under the table."""
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=f"Median wall time per run — {latency} latency (! unstable spread, ✗ not as expected)"
    )
    table.add_column("scenario")
    for engine in engines:
        table.add_column(engine, justify="right")
    rows = summary[summary["latency"] == latency] if not summary.empty else summary
    missed: list[str] = []
    for scenario in dict.fromkeys(rows["scenario"]) if not rows.empty else ():
        cells = []
        for engine in engines:
            hit = rows[(rows["scenario"] == scenario) & (rows["engine"] == engine)]
            if hit.empty:
                cells.append("–")
                continue
            row = hit.iloc[0]
            mark = ("!" if bool(row["unstable"]) else "") + (
                "✗"
                if row["expect_ok_rate"] == row["expect_ok_rate"] and row["expect_ok_rate"] < 1
                else ""
            )
            cells.append(f"{fmt.ms(row['wall_ms_median'])}{mark}")
            if "✗" in mark:
                why = (reasons or {}).get((engine, scenario, latency))
                missed.append(metrics.missed_line(engine, scenario, why))
        table.add_row(scenario, *cells)
    if missed:
        table.caption = Text("\n".join(missed))  # the user's text: no rich markup
        table.caption_justify = "left"
    return table


def ttft_console_table(ttft: Any) -> Any:
    """The TTFT phase: median time to the first answer token, the floor, what each adds."""
    from rich.table import Table

    table = Table(
        title="Time to first token of the final answer (medians; floor = scripted by the mock)"
    )
    for column in ("engine", "scenario", "runs", "TTFT", "p95", "floor", "extra", "vs raw"):
        table.add_column(column, justify="left" if column in ("engine", "scenario") else "right")
    for _, row in ttft.iterrows():
        table.add_row(
            str(row["engine"]),
            str(row["scenario"]),
            f"{int(row['n_ttft'])}/{int(row['n'])}",
            fmt.ms(row["ttft_ms_median"]),
            fmt.ms(row["ttft_ms_p95"]),
            fmt.ms(row["floor_ttft_ms"]),
            fmt.signed(row["extra_ttft_ms"]),
            fmt.signed(row["extra_ttft_vs_raw_ms"]),
        )
    return table


def capacity_table(levels: list[Any]) -> Any:
    """The load phase: per engine and process count, the capacity at the latency target."""
    from rich.table import Table

    caps = metrics.capacities(levels)
    target = next(iter(caps.values())).target_ms if caps else None
    profiles = ", ".join(sorted({level.profile for level in levels})) or "the load"
    table = Table(
        title=f"Load: the offered rate sustained with p95 ≤ {fmt.ms(target, seconds_from=1000)} "
        f"(open loop, the {profiles} mock profile)"
    )
    for column in ("engine", "processes", "capacity (runs/s)", "p95 there", "CPU/run",
                   "cores for 100 runs/s", "caveats"):  # fmt: skip
        table.add_column(column, justify="left" if column == "engine" else "right")
    for (engine, processes), cap in caps.items():
        cores = cap.cores_for()
        table.add_row(
            engine,
            str(processes),
            cap.text,
            fmt.ms(cap.p95.point if cap.p95 else None, seconds_from=1000),
            fmt.ms(cap.cpu_ms_per_run.point if cap.cpu_ms_per_run else None),
            fmt.num(cores.point if cores else None, "{:.2f}"),
            ", ".join(
                w for w, on in (("mock busy", cap.mock_busy), ("contended", cap.contended)) if on
            ),
        )
    return table


def finish_run(
    store: Any,
    config: Any,
    meta: dict[str, Any],
    outcome: Any,
    elapsed_s: float,
    *,
    cpu_before: tuple[float, float, float] | None = None,
) -> int:
    import sys

    from rich.console import Console

    from scenarios import load_scenarios

    tables = write_tables(store, config)
    summary, footprint, throughput = tables.summary, tables.footprint, tables.throughput
    scenarios = load_scenarios(config.scenario_dir)
    left = build_plan(config, scenarios, finished_repeats(tables.folder.runs))
    missing_runs = left.timed_runs + outcome_runs_missing(config, scenarios, tables.folder.runs)
    lost_levels = int(throughput["crashed"].sum()) if not throughput.empty else 0
    ttft_done = finished_ttft(
        tables.folder.ttft, config.ttft_scenario, config.ttft_latency, config.transport
    )
    ttft_left = sum(len(b.repeats) for b in build_ttft_plan(config, scenarios, ttft_done))
    lost_load = sum(1 for row in tables.folder.load if row.crashed)
    load = outcome.load
    measured_all = missing_runs == 0 and lost_levels == 0 and ttft_left == 0 and lost_load == 0
    # engines the load phase left out when its time budget ran out: reported, not a failure
    skipped_engines = list(load.skipped_engines) if load is not None else []
    complete = measured_all and not skipped_engines
    meta["ended_at"] = now_iso()
    # the machine's speed again at the end: a drift says the machine got busier (or quieter)
    repeats = yardstick_repeats(bool(getattr(config, "quick", False)))
    meta.setdefault("machine", {})["yardstick_end_ms"] = yardstick_ms(repeats)
    if cpu_before is not None:  # how busy the host was with other work (this session)
        meta["machine"]["other_cores"] = other_cores(cpu_before, cpu_reading())
    meta["duration_s"] = round(meta.get("duration_s", 0) + elapsed_s, 1)
    meta["complete"] = complete
    # each engine environment's interpreter and packages (bench.envs), kept across resumes
    meta["environments"] = {**meta.get("environments", {}), **outcome.environments}
    meta["outcome"] = {
        "timed_runs": outcome.timed_runs,
        "warmup_runs": outcome.warmup_runs,
        "crashed_runs": outcome.crashed_runs,
        "throughput_levels": outcome.throughput_levels,
        "crashed_levels": outcome.crashed_levels,
        "runs_missing": missing_runs,
        "ttft_runs": outcome.ttft_runs,
        "crashed_ttft_runs": outcome.crashed_ttft_runs,
        "ttft_missing": ttft_left,
        "ttft_skipped": outcome.ttft_skipped,
        "load_levels": load.levels if load is not None else 0,
        "crashed_load_levels": lost_load,
        "load_skipped": load.skipped if load is not None else None,
        "load_engines_skipped": list(load.skipped_engines) if load is not None else [],
        "load_s": round(load.elapsed_s, 1) if load is not None else None,
        # exact results reused from earlier runs (bench.runner.cache)
        "cache": {**outcome.cache, "reused_runs": outcome.reused_runs},
        # where this session's time went, phase by phase (a resume adds to the earlier one)
        "phase_s": _added(meta.get("outcome", {}).get("phase_s"), outcome.phase_s),
    }
    store.write_meta(meta)

    console = Console(width=None if sys.stdout.isatty() else 160)
    if not summary.empty:
        console.print(engine_table(summary, footprint, throughput, config.engines, tables.engines))
        reasons = failure_reasons(tables.folder.runs)
        for latency in config.latencies:
            console.print(scenario_table(summary, config.engines, latency, reasons))
    if not tables.ttft.empty:
        console.print(ttft_console_table(tables.ttft))
    if tables.load:
        console.print(capacity_table(tables.load))
    resumed = f" ({outcome.skipped_runs} measured before)" if outcome.skipped_runs else ""
    ttft_runs = f" + {outcome.ttft_runs} TTFT runs" if outcome.ttft_runs else ""
    reused = (
        f" + {outcome.reused_runs} outcome rows reused from the results cache (timings null)"
        if outcome.reused_runs
        else ""
    )
    console.print(
        f"{outcome.timed_runs} timed runs{resumed}{ttft_runs}{reused} in {elapsed_s:.0f}s → "
        f"{store.directory} "
        f"(meta.json, runs.jsonl, summary.csv, per_engine.csv, footprint.csv, throughput.csv, "
        "ttft.csv" + (", load.csv)" if tables.load else ")"),
        markup=False,  # the directory is the user's text: "[/x]" in it is no markup
    )
    for line in outcome.messages:
        print(f"warning: {line}", flush=True)
    skipped = tables.folder.skipped_summary()
    if skipped:
        print(f"warning: {skipped}; left out of every table", flush=True)
    if skipped_engines:
        print(
            f"note: the load phase's time budget ({config.load_budget_s:g} s) ran out before "
            f"{', '.join(skipped_engines)}: left out of the capacity tables; "
            f"`schedbench run --out {store.directory} --resume --load-budget N` measures them",
            file=sys.stderr,
        )
    if not measured_all:
        print(
            f"incomplete: {missing_runs} runs, {ttft_left} TTFT runs, {lost_levels} "
            f"throughput levels and {lost_load} load levels have no measurement "
            f"(worker crashes: see runs.jsonl, ttft.jsonl, load.jsonl and {store.logs}); "
            f"`schedbench run --out {store.directory} --resume` retries them",
            file=sys.stderr,
        )
        return 1
    return 0


def _added(before: object, now: dict[str, float]) -> dict[str, float]:
    """Phase seconds of earlier sessions (a resumed run) plus this one's."""
    total = dict(before) if isinstance(before, dict) else {}
    for name, seconds in now.items():
        total[name] = round(float(total.get(name, 0.0)) + seconds, 1)
    return total
