"""One number, one pipeline: compare, summary.csv and the report print the same median (and
the same interval, overhead per step and token overhead) for the same cell."""

from __future__ import annotations

import csv
import re

import pytest

from bench.cli import main
from bench.results import compare, fmt, metrics
from bench.results.folder import load_run_folder
from bench.results.store import RunStore
from bench.runner.finish import write_tables
from bench.runner.plan import RunConfig
from tests.results.folders import config, write_run

# the median of each cell's six wall times in tests.results.folders.WALLS, worked out by hand
MEDIANS = {
    ("raw", "customer_returns"): "715 µs",  # (0.71 + 0.72) / 2
    ("scheduler", "customer_returns"): "815 µs",  # (0.81 + 0.82) / 2
    ("raw", "single_tool"): "505 µs",  # (0.50 + 0.51) / 2
    ("scheduler", "single_tool"): "12.5 ms",  # (12.44 + 12.49) / 2
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("one-number")
    run = write_run(root / "run")
    write_tables(RunStore(run), RunConfig.from_dict(config()))
    with (run / "summary.csv").open(newline="") as f:
        summary = {(r["engine"], r["scenario"]): r for r in csv.DictReader(f)}
    ref = compare.load_run(run)
    printed = compare.render(ref, ref, compare.compare_runs(ref, ref))  # what compare prints
    assert main(["report", str(run), "--out", str(root / "report")]) == 0
    return {
        "run": run,
        "summary": summary,
        "compare": compare_medians(printed),
        "report": (root / "report" / "report.md").read_text(encoding="utf-8"),
    }


def compare_medians(printed: str) -> dict[tuple[str, str], str]:
    """engine × scenario → the reference median ``schedbench compare`` printed."""
    out = {}
    scenario = None
    for line in printed.splitlines():
        if match := re.match(r"^(\w+) \[zero, inprocess\]$", line):
            scenario = match.group(1)
        elif match := re.match(r"^  ([\w-]+): +(.+?) -> ", line):
            out[(match.group(1), scenario)] = match.group(2)
    return out


def report_cells(md: str, scenario: str) -> dict[str, dict[str, str]]:
    """The per-scenario table of the report: engine → column → printed cell."""
    section = md[md.index(f"### {scenario}\n") :]
    lines = [line for line in section.splitlines() if line.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = {}
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) != len(header) or cells[0] == "engine":
            break
        rows[cells[0]] = dict(zip(header, cells, strict=True))
    return rows


def test_every_reader_prints_the_same_median(outputs):
    summary, compared, md = outputs["summary"], outputs["compare"], outputs["report"]
    for (engine, scenario), median in MEDIANS.items():
        assert fmt.ms(float(summary[(engine, scenario)]["wall_ms_median"])) == median
        assert compared[(engine, scenario)] == median
        assert report_cells(md, scenario)[engine]["median"] == median
    # the report's overview table too
    assert "| customer_returns | 715 µs | 815 µs |" in md
    assert "| single_tool | 505 µs | 12.5 ms |" in md


def test_the_report_and_summary_csv_agree_on_the_other_cell_numbers(outputs):
    summary, md = outputs["summary"], outputs["report"]
    cells = metrics.cells(load_run_folder(outputs["run"]).runs)
    for engine, scenario in MEDIANS:
        key = (engine, scenario, "zero", "inprocess")
        cell = metrics.cell_stats(cells[key], cells[metrics.baseline_key(key)])
        wall = cell.wall
        row = summary[(engine, scenario)]  # floats with 6 significant digits
        for column, value in (
            ("wall_ms_ci_low", wall.ci_low),
            ("wall_ms_ci_high", wall.ci_high),
            ("wall_ms_q1", wall.q1),
            ("wall_ms_q3", wall.q3),
            ("wall_ms_p95", wall.p95),
            ("overhead_per_step_ms_median", cell.medians["overhead_per_step_ms"]),
            ("cpu_ms_median", cell.summaries["cpu_ms"].median),
            ("token_overhead_per_request", cell.token_overhead_per_request),
        ):
            assert float(row[column]) == pytest.approx(value, rel=1e-5, abs=1e-9), column
        printed = report_cells(md, scenario)[engine]
        assert printed["95 % CI"] == fmt.ms_range(wall.ci_low, wall.ci_high, digits=4)
        assert printed["IQR"] == fmt.ms_range(wall.q1, wall.q3)
        assert printed["p95"] == fmt.ms(wall.p95)
        assert printed["overhead / step"] == fmt.ms(cell.medians["overhead_per_step_ms"])
        assert printed["CPU"] == fmt.ms(cell.summaries["cpu_ms"].median)
        assert printed["Δ tokens vs raw"] == fmt.signed(cell.token_overhead_per_request, fmt.count)
    # the folder's rows make every engine send the same tokens: the overhead is zero
    assert {summary[k]["token_overhead_per_request"] for k in MEDIANS} == {"0"}
