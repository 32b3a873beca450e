"""Failed runs are errors, never speed: counted in the console, left out of throughput ranks.

An engine whose every throughput run failed must not rank above one that completed its runs,
and the console's ``errors`` column counts every status other than ``completed``.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from bench.report import analysis
from bench.report.from_folder import load_run_dir
from bench.report.sections import _throughput_tables
from bench.results.store import RunStore
from bench.runner.finish import engine_table, failure_reasons, scenario_table, write_tables
from bench.runner.plan import RunConfig
from tests.results.folders import config, meta, run_row


def _level(engine: str, runs: int, errors: int, duration_s: float) -> dict:
    return {
        "engine": engine, "scenario": "customer_returns", "latency": "zero",
        "transport": "inprocess", "concurrency": 1, "runs": runs, "errors": errors,
        "duration_s": duration_s, "runs_per_s": runs / duration_s,
        "latencies_ms": [10.0] * runs,
    }  # fmt: skip


def _folder(directory: Path) -> Path:
    """scheduler: 2 runs, one failed, one aborted; raw: 2 completed. Throughput: raw completes
    its 50 runs in 5 s (10/s); scheduler fails all 50 in 3.2 s (15.6 runs/s, none completed)."""
    with RunStore(directory) as store:
        store.create()
        store.write_meta(meta())
        for repeat, wall in enumerate((0.7, 0.71)):
            store.append("runs.jsonl", run_row("raw", "customer_returns", repeat, wall))
        for repeat, status in enumerate(("failed", "aborted")):
            row = run_row("scheduler", "customer_returns", repeat, 0.5, status=status)
            store.append("runs.jsonl", row)
        store.append("throughput.jsonl", _level("raw", 50, 0, 5.0))
        store.append("throughput.jsonl", _level("scheduler", 50, 50, 3.2))
    return directory


def test_an_engine_whose_runs_all_failed_is_never_ranked(tmp_path):
    data = load_run_dir(_folder(tmp_path / "run"))
    peak = analysis.peak_throughput(data)
    assert peak[["engine", "runs_per_s"]].to_dict("records") == [
        {"engine": "raw", "runs_per_s": 10.0}
    ]
    (table,) = _throughput_tables(data.throughput)
    assert table.columns[:3] == ("engine", "errors", "runs/s @1")
    rows = {row[0]: row[1:3] for row in table.rows}
    assert rows == {"raw": ("0/50", "10.0"), "scheduler": ("50/50", "0.0")}


def test_the_console_counts_failed_and_aborted_runs_as_errors(tmp_path):
    run = _folder(tmp_path / "run")
    tables = write_tables(RunStore(run), RunConfig.from_dict(config()))
    console = Console(width=250, record=True)
    console.print(
        engine_table(tables.summary, tables.footprint, tables.throughput, ("raw", "scheduler"))
    )
    cells = [
        [c.strip() for c in line.split("│")[1:-1]]
        for line in console.export_text().splitlines()
        if line.startswith("│")
    ]
    # engine, runs, errors, × raw (no speed claim for runs that all failed), …, completed/s c=1
    assert [(c[0], c[1], c[2], c[3], c[9]) for c in cells] == [
        ("raw", "2", "0", "1.00×", "10.0"),
        ("scheduler", "2", "2", "–", "0.0"),
    ]
    assert tables.throughput["completed_per_s"].tolist() == [10.0, 0.0]


def test_every_cross_in_the_console_carries_its_reason(tmp_path):
    run = tmp_path / "run"
    with RunStore(run) as store:
        store.create()
        store.write_meta(meta())
        for repeat in range(3):
            store.append("runs.jsonl", run_row("raw", "customer_returns", repeat, 0.7))
            missed = ["final answer lacks 'A123' [policy]"] if repeat else []
            row = run_row("scheduler", "customer_returns", repeat, 0.8, expect_ok=not missed,
                          expect_failures=missed)  # fmt: skip
            store.append("runs.jsonl", row)
    tables = write_tables(RunStore(run), RunConfig.from_dict(config()))
    reasons = failure_reasons(tables.folder.runs)
    assert reasons == {
        (
            "scheduler",
            "customer_returns",
            "zero",
        ): "final answer lacks 'A123' [policy] (2 of 3 runs)"
    }
    console = Console(width=200, record=True)
    console.print(scenario_table(tables.summary, ("raw", "scheduler"), "zero", reasons))
    text = console.export_text()
    marked = next(line for line in text.splitlines() if "customer_returns │" in line)
    assert marked.endswith("✗ │")  # the scheduler's cell
    caption = " ".join(text.split("┘", 1)[1].split())  # under the table, wrapped to its width
    assert caption == (
        "✗ scheduler on customer_returns: final answer lacks 'A123' [policy] (2 of 3 runs)"
    )


def test_the_console_overhead_per_step_is_the_reports_headline_figure(tmp_path):
    """One label, one number: the console's overhead/step is the report's per-step figure
    (the geometric mean over the happy paths, ``bench.results.per_engine``), not a median
    over every scenario."""
    from bench.report.facts import compute_facts
    from tests.results.folders import write_run

    run = write_run(tmp_path / "run")
    facts = compute_facts(load_run_dir(run))
    tables = write_tables(RunStore(run), RunConfig.from_dict(config()))
    steps = tables.engines
    for engine in ("raw", "scheduler"):
        step = steps[engine].step_ms
        assert step is not None and step.point == facts.step_ms[engine].point
    # the scheduler's single_tool is 16x slower than its customer_returns: a median over
    # scenarios and the geometric mean differ, so the test can tell them apart
    console = Console(width=250, record=True)
    console.print(
        engine_table(tables.summary, tables.footprint, tables.throughput, ("scheduler",), steps)
    )
    row = next(line for line in console.export_text().splitlines() if "scheduler" in line)
    cells = [c.strip() for c in row.split("│")[1:-1]]
    from bench.results import fmt

    assert cells[4] == fmt.ms(facts.step_ms["scheduler"].point)
