"""One per-engine figure, four readers (issue #25): the console, per_engine.csv,
``schedbench compare`` and the report print the same overhead per LLM step — the one
``bench.results.per_engine`` computes — and its value is the geometric mean over the happy
paths, worked out here by hand."""

from __future__ import annotations

import csv
import math
import re
import statistics

import numpy as np
import pytest
from rich.console import Console
from scipy.stats import t

from bench.cli import main
from bench.report import analysis
from bench.report.facts import compute_facts
from bench.report.from_folder import load_run_dir
from bench.results import fmt, per_engine
from bench.results.store import RunStore
from bench.runner.finish import engine_table, write_tables
from bench.runner.plan import RunConfig
from tests.results.folders import ENGINES, SCENARIOS, WALLS, config, meta, run_row, write_run

CALLS = {"customer_returns": 3, "single_tool": 2}  # tests.results.folders.run_row's


def by_hand(engine: str) -> tuple[float, float, float]:
    """Point and 95 % interval: per round, the geometric mean over both scenarios of the
    median of (overhead ÷ LLM calls); the geometric mean over the two rounds, Student's t on
    the log of the two per-round values."""
    logs = []
    for r in (0, 1):  # rounds: repeats 0–2 and 3–5
        per_scenario = [
            math.log(
                statistics.median(
                    (w - 0.01) / CALLS[s] for w in WALLS[(engine, s)][3 * r : 3 * r + 3]
                )
            )
            for s in SCENARIOS
        ]
        logs.append(sum(per_scenario) / len(per_scenario))
    centre = sum(logs) / 2
    half = float(t.ppf(0.975, 1)) * statistics.stdev(logs) / math.sqrt(2)
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


def interval_text(point: float, low: float, high: float) -> str:
    return f"{fmt.ms(point)} [{fmt.ms_range(low, high)}]"  # as the report's ms_ci


@pytest.fixture(scope="module")
def printed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("per-engine")
    run = write_run(root / "run")
    tables = write_tables(RunStore(run), RunConfig.from_dict(config()))
    console = Console(width=250, record=True)
    console.print(
        engine_table(tables.summary, tables.footprint, tables.throughput, ENGINES, tables.engines)
    )
    rows = [
        [c.strip() for c in line.split("│")[1:-1]]
        for line in console.export_text().splitlines()
        if line.startswith("│")
    ]
    with (run / "per_engine.csv").open(newline="") as f:
        csv_rows = {r["engine"]: r for r in csv.DictReader(f)}
    assert main(["report", str(run), "--out", str(root / "report")]) == 0
    return {
        "run": run,
        "tables": tables,
        "console": {cells[0]: cells[4] for cells in rows},
        "csv": csv_rows,
        "report": (root / "report" / "report.md").read_text(encoding="utf-8"),
        "facts": compute_facts(load_run_dir(run)),
    }


def report_step(md: str, engine: str) -> str:
    """The "overhead / LLM step [95 %]" cell of the report's "When to choose which" table."""
    section = md[md.index("## When to choose which") :]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] == engine:
            return cells[2]
    raise AssertionError(f"{engine} not in the report's table")


def compare_steps(text: str) -> dict[str, tuple[str, str]]:
    section = text[text.index("Overhead per LLM step") :]
    return {
        m.group(1): (m.group(2), m.group(3))
        for m in re.finditer(r"^  ([\w-]+): +(.+?) -> (.+?): no change$", section, re.M)
    }


def test_the_four_readers_print_the_same_overhead_per_step(printed, capsys):
    assert main(["compare", str(printed["run"]), str(printed["run"])]) == 0
    compared = compare_steps(capsys.readouterr().out)
    facts = printed["facts"]
    for engine in ENGINES:
        point, low, high = by_hand(engine)
        summary = printed["tables"].engines[engine]
        assert summary.step_ms is not None
        assert summary.step_ms.point == pytest.approx(point, rel=1e-12)
        assert (summary.step_ms.low, summary.step_ms.high) == pytest.approx((low, high), rel=1e-9)
        assert summary.scenarios == SCENARIOS and summary.left_out == "" and summary.runs == 12
        # the report's numbers are the very same estimate
        assert facts.engine_summaries[engine] == summary
        assert facts.step_ms[engine] == summary.step_ms  # point and interval
        assert np.array_equal(facts.step_ms[engine].resamples, summary.step_ms.resamples)
        # what each prints
        assert printed["console"][engine] == fmt.ms(point)
        row = printed["csv"][engine]
        for column, value in (
            ("step_overhead_ms", point),
            ("step_overhead_ms_ci_low", low),
            ("step_overhead_ms_ci_high", high),
        ):
            assert float(row[column]) == pytest.approx(value, rel=1e-5), column
        assert row["scenarios"] == "customer_returns; single_tool" and row["left_out"] == ""
        shown = interval_text(point, low, high)
        assert compared[engine] == (shown, shown)
        assert report_step(printed["report"], engine) == shown
    # the scheduler's single_tool is 16x slower than its customer_returns: a median over
    # scenarios (or over every run) would print another number
    scheduler = printed["tables"].engines["scheduler"].step_ms
    assert scheduler is not None
    medians = [
        statistics.median((w - 0.01) / CALLS[s] for w in WALLS[("scheduler", s)]) for s in SCENARIOS
    ]
    assert fmt.ms(statistics.median(medians)) != fmt.ms(scheduler.point)


def test_the_zero_profile_filter_is_the_same_for_every_reader(tmp_path):
    """Runs under two latency profiles: the per-engine figures and the report's performance
    frames both read the zero profile only (``per_engine.performance_profile``)."""
    run = write_run(tmp_path / "run")
    with RunStore(run) as store:  # the same cells under "realistic", ten times slower
        for (engine, scenario), walls in WALLS.items():
            for repeat, wall in enumerate(walls):
                row = run_row(engine, scenario, repeat, wall * 10, latency="realistic")
                store.append("runs.jsonl", row)
        store.write_meta(meta())
    tables = write_tables(RunStore(run), RunConfig.from_dict(config()))
    data = load_run_dir(run)
    assert set(analysis.perf_runs(data)["latency_profile"]) == {"zero"}
    for engine in ENGINES:
        step = tables.engines[engine].step_ms
        assert step is not None and step.point == pytest.approx(by_hand(engine)[0], rel=1e-12)
        assert compute_facts(data).step_ms[engine] == step
    assert per_engine.performance_profile(["realistic", "zero", None]) == "zero"
    assert per_engine.performance_profile(["realistic"]) is None
    assert per_engine.performance_profile(["realistic", "slow"]) is None
