"""``debug-score`` over several engines at once.

Most of a capture waits on what the scenario scripts (a hung tool's timeout, a retry's
back-off), so the captures run in child processes, one group of engines each
(``schedbench debug-score --engines … --cost-runs 0`` into a scratch folder), and their
rows and outputs are merged in the engines' order. Each mode's cost is a timing, so it is
measured here first, one engine after another, never beside another process's work.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.debuggability.capture import ModeCost, amode_cost, run_sync
from bench.debuggability.csvrows import OUTPUTS_DIR, cost_fields, read_rows
from bench.debuggability.modes import modes_for
from bench.results.files import DEBUG_CSV
from scenarios import Scenario

JOB_TIMEOUT_S = 1800.0


def groups_of(engines: Sequence[str], jobs: int) -> list[list[str]]:
    """``engines`` split into at most ``jobs`` groups of about equal work (debug modes),
    the heaviest engine first into the lightest group; each group in the engines' order.
    An engine without a debug mode has nothing to capture and is in no group."""
    engines = [e for e in engines if modes_for(e)]
    bins: list[list[str]] = [[] for _ in range(max(1, min(jobs, len(engines))))]
    loads = [0] * len(bins)
    for engine in sorted(engines, key=lambda e: -len(modes_for(e))):
        lightest = loads.index(min(loads))
        bins[lightest].append(engine)
        loads[lightest] += len(modes_for(engine))
    order = {e: i for i, e in enumerate(engines)}
    return [sorted(b, key=order.__getitem__) for b in bins if b]


def child_command(
    part: Path,
    group: Sequence[str],
    scenario_names: str,
    outputs: str,
    scenario_dir: Path | str | None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """One group's ``debug-score`` child: its captures only, in one process (``--jobs 1``:
    a child never splits its group again)."""
    command = [sys.executable, "-m", "bench.cli", "debug-score", "--out", str(part)]
    command += ["--engines", ",".join(group), "--scenarios", scenario_names]
    command += ["--cost-runs", "0", "--jobs", "1", "--outputs", outputs, "--table", ""]
    command += list(extra_args)
    if scenario_dir is not None:
        command += ["--scenario-dir", str(scenario_dir)]
    return command


async def _costs(
    engines: Sequence[str], target: Scenario | None, runs: int
) -> dict[tuple[str, str], ModeCost]:
    if target is None or runs <= 0:
        return {}
    return {
        (engine, mode): await amode_cost(engine, target, mode, runs=runs, warmup=1)
        for engine in engines
        for mode in modes_for(engine)
    }


def score_in_parallel(
    run_dir: Path,
    engines: Sequence[str],
    scenarios: Sequence[Scenario],
    scenario_dir: Path | str | None,
    *,
    cost_target: Scenario | None,
    cost_runs: int,
    outputs: str,
    jobs: int,
    extra_args: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Every engine × mode × scenario's CSV row (``results.COLUMNS``), captured in up to
    ``jobs`` child processes; their outputs are moved under ``run_dir``."""
    costs = run_sync(_costs(engines, cost_target, cost_runs))
    groups = groups_of(engines, jobs)
    names = ",".join(s.name for s in scenarios)
    run_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".debug-score-", dir=run_dir) as scratch:
        parts = [Path(scratch) / f"part{i}" for i in range(len(groups))]
        children = []
        for group, part in zip(groups, parts, strict=True):
            command = child_command(part, group, names, outputs, scenario_dir, extra_args)
            children.append(
                subprocess.Popen(
                    command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
                )
            )
        failures = []
        for group, child in zip(groups, children, strict=True):
            _, stderr = child.communicate(timeout=JOB_TIMEOUT_S)
            if child.returncode != 0:
                failures.append(f"{', '.join(group)}: exit {child.returncode}: {stderr[-1500:]}")
        if failures:
            raise RuntimeError("debug-score of some engines failed:\n" + "\n".join(failures))
        rows: list[dict[str, Any]] = []
        for part in parts:
            rows += read_rows(part / DEBUG_CSV)
            if (part / OUTPUTS_DIR).is_dir():
                shutil.copytree(part / OUTPUTS_DIR, run_dir / OUTPUTS_DIR, dirs_exist_ok=True)
    order = {e: i for i, e in enumerate(engines)}
    rows.sort(key=lambda r: order[r["engine"]])  # stable: each engine's rows keep their order
    for row in rows:
        row.update(cost_fields(costs.get((row["engine"], row["mode"]))))
    return rows
