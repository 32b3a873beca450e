"""The debuggability table of a run: ``debuggability.csv`` next to ``summary.csv``.

``write_debuggability(run_dir, engines, scenarios)`` captures one run per engine x mode x
scenario (in this process, on the in-process mock), scores each output against the run's
ground truth, measures each mode's cost once per engine x mode, writes each output under
``debug/<scenario>/`` and one CSV row per capture, with the output's path and an excerpt
around the failure so a reader can judge the score. The columns are documented in
docs/debuggability.md.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.debuggability.capture import Capture, ModeCost, acapture, amode_cost, run_sync
from bench.debuggability.csvrows import OUTPUTS_DIR, cost_fields
from bench.debuggability.modes import MODES, modes_for
from bench.debuggability.render import excerpt
from bench.debuggability.score import Score, score_output
from bench.debuggability.truth import KINDS
from bench.model.scenarios import reference_scenario
from bench.results import fmt
from bench.results.files import DEBUG_CSV, META
from bench.results.folder import read_meta
from scenarios import Scenario, load_scenarios

CSV_NAME = DEBUG_CSV
EXHIBITS = ("customer_returns", "tool_flaky")
COST_RUNS = 5
OUTPUTS = ("all", "failures")  # which outputs are written: all, or exhibits + failure runs

COLUMNS: tuple[str, ...] = (
    "engine",
    "mode",
    "scenario",
    "status",
    "run_ms",
    "structured",
    "recall",
    "facts_total",
    "facts_found",
    "bytes",
    "lines",
    "bytes_per_fact",
    "failure_step",
    "failure_call",
    "failure_index",
    "failure_peers",
    "loc_tool",
    "loc_error",
    "loc_position",
    "loc_how",
    "localised",
    "mode_cost_ms",
    "mode_off_ms",
    "mode_on_ms",
    "cost_scenario",
    "cost_runs",
    *(f"recall_{kind}" for kind in KINDS),
    "missed",
    "output_path",
    "excerpt_line",
    "excerpt",
)


@dataclass(frozen=True)
class Row:
    capture: Capture
    score: Score
    cost: ModeCost | None

    @property
    def output_path(self) -> str:
        """Where the output is written, relative to the run folder."""
        c = self.capture
        ext = "json" if MODES[c.mode].structured else "txt"
        return f"{OUTPUTS_DIR}/{c.scenario}/{c.engine}.{c.mode}.{ext}"

    def written(self, outputs: str) -> bool:
        """Whether ``write_outputs(..., outputs)`` writes this row's output."""
        return (
            outputs == "all"
            or self.capture.scenario in EXHIBITS
            or self.capture.truth.failure is not None
        )

    def as_dict(self, outputs: str = "all") -> dict[str, Any]:
        c, s, cost = self.capture, self.score, self.cost
        loc = s.localisation
        failure = c.truth.failure
        row: dict[str, Any] = {
            "engine": c.engine,
            "mode": c.mode,
            "scenario": c.scenario,
            "status": c.record.status,
            "run_ms": round(c.elapsed_ms, 3),
            "structured": int(s.structured),
            "recall": round(s.recall, 4),
            "facts_total": s.facts_total,
            "facts_found": s.facts_found,
            "bytes": s.bytes,
            "lines": s.lines,
            "bytes_per_fact": "" if s.bytes_per_fact is None else round(s.bytes_per_fact, 1),
            "failure_step": "" if failure is None else failure.step,
            "failure_call": "" if failure is None else failure.tool or "llm",
            "failure_index": "" if failure is None else failure.index,
            "failure_peers": "" if failure is None else len(failure.all_peers),
            "loc_tool": "" if loc is None else int(loc.tool),
            "loc_error": "" if loc is None else int(loc.error),
            "loc_position": "" if loc is None else int(loc.position),
            "loc_how": "" if loc is None else "+".join(loc.how),
            "localised": "" if loc is None else int(loc.localised),
            **cost_fields(cost),
            "missed": s.missed_summary(),
            "output_path": self.output_path if self.written(outputs) else "",
        }
        row["excerpt_line"], row["excerpt"] = excerpt(c.output, s, c.truth)
        for kind in KINDS:
            found, total = s.by_kind.get(kind, (0, 0))
            row[f"recall_{kind}"] = round(found / total, 4) if total else ""
        return row


def _resolve_scenarios(
    scenarios: Iterable[str | Scenario] | None, scenario_dir: Path | str | None
) -> list[Scenario]:
    items = list(scenarios) if scenarios is not None else None
    if items is not None and all(isinstance(s, Scenario) for s in items):
        return items  # type: ignore[return-value]
    library = load_scenarios(scenario_dir)
    if items is None or items == ["all"]:
        return list(library.values())
    out = []
    for item in items:
        if isinstance(item, Scenario):
            out.append(item)
        elif item in library:
            out.append(library[item])
        else:
            raise ValueError(f"unknown scenario {item!r}; valid scenarios: {', '.join(library)}")
    return out


def _cost_target(scenarios: Sequence[Scenario], name: str | None = None) -> Scenario | None:
    """The scenario each mode's cost is measured on: ``name``, else the reference one."""
    by_name = {s.name: s for s in scenarios}
    target = by_name.get(name or str(reference_scenario()))
    return target or (scenarios[0] if scenarios else None)


async def ascore_all(
    engines: Sequence[str],
    scenarios: Sequence[Scenario],
    *,
    cost_runs: int = COST_RUNS,
    cost_scenario: str | None = None,
) -> list[Row]:
    """Capture and score every engine x mode x scenario; one mode cost per engine x mode,
    measured on ``cost_scenario`` (default: the reference scenario)."""
    cost_target = _cost_target(scenarios, cost_scenario)
    rows: list[Row] = []
    for engine in engines:
        for mode in modes_for(engine):
            cost = None
            if cost_target is not None and cost_runs > 0:
                cost = await amode_cost(engine, cost_target, mode, runs=cost_runs, warmup=1)
            for scenario in scenarios:
                captured = await acapture(engine, scenario, mode)
                rows.append(Row(captured, score_output(captured.output, captured.truth), cost))
    return rows


def write_rows(rows: Sequence[Row | dict[str, Any]], path: Path, outputs: str = "all") -> Path:
    """debuggability.csv: captured rows, or rows already made CSV dicts (merged from the
    child processes of ``bench.debuggability.parallel``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(COLUMNS), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow(row if isinstance(row, dict) else row.as_dict(outputs))
    return path


def write_outputs(rows: Sequence[Row], run_dir: Path, outputs: str = "all") -> None:
    """The raw outputs, as captured: ``debug/<scenario>/<engine>.<mode>.<txt|json>``.

    ``outputs="all"`` writes every row's; ``"failures"`` only the exhibit scenarios' and
    those of runs with a failure (the ones localisation is judged on).
    """
    for row in rows:
        if not row.written(outputs):
            continue
        target = run_dir / row.output_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(row.capture.output, encoding="utf-8")


def write_debuggability(
    run_dir: Path | str,
    engines: Sequence[str],
    scenarios: Sequence[str | Scenario] | None = None,
    scenario_dir: Path | str | None = None,
    *,
    cost_runs: int = COST_RUNS,
    outputs: str = "all",
    jobs: int = 1,
    extra_args: Sequence[str] = (),
) -> Path:
    """Capture, score and write ``<run_dir>/debuggability.csv``; returns its path.

    Runs in this process (its own short captures on the in-process mock), so it can be
    called after a benchmark run or on its own; with ``jobs`` > 1 the captures run in that
    many child processes (``bench.debuggability.parallel``; ``extra_args``: their handler
    options). Also writes the raw outputs under ``<run_dir>/debug/`` (``outputs``: see
    ``write_outputs``).
    """
    if outputs not in OUTPUTS:
        raise ValueError(f"unknown outputs {outputs!r}; valid: {', '.join(OUTPUTS)}")
    run_dir = Path(run_dir)
    resolved = _resolve_scenarios(scenarios, scenario_dir)
    if jobs > 1 and len(engines) > 1:
        from bench.debuggability.parallel import score_in_parallel

        merged = score_in_parallel(
            run_dir,
            list(engines),
            resolved,
            scenario_dir,
            cost_target=_cost_target(resolved),
            cost_runs=cost_runs,
            outputs=outputs,
            jobs=jobs,
            extra_args=extra_args,
        )
        return write_rows(merged, run_dir / CSV_NAME, outputs)
    rows = run_sync(ascore_all(list(engines), resolved, cost_runs=cost_runs))
    path = write_rows(rows, run_dir / CSV_NAME, outputs)
    write_outputs(rows, run_dir, outputs)
    return path


def score_run_dir(
    run_dir: Path | str,
    *,
    cost_runs: int = COST_RUNS,
    outputs: str = "all",
    jobs: int = 1,
    extra_args: Sequence[str] = (),
) -> Path:
    """``write_debuggability`` for an existing run folder, with the run's engines/scenarios.

    Reads ``meta.json`` (its ``config``: ``engines``, ``scenarios``, ``scenario_dir``) when
    present; otherwise every engine and every built-in scenario. Scenarios tagged
    ``stream-fault`` are left out: their ground truth cannot tell a broken stream from an
    answer (the replay mock plays the answer), so they would score no failure at all.
    """
    from bench.engines import ENGINE_NAMES
    from scenarios import load_scenarios

    run_dir = Path(run_dir)
    meta = read_meta(run_dir / META) or {}  # checked: a corrupt one is BadMeta, one line
    config: dict[str, Any] = meta.get("config") or {}
    engines = config.get("engines") or list(ENGINE_NAMES)
    library = load_scenarios(config.get("scenario_dir"))
    names = config.get("scenarios") or list(library)
    scenarios = [n for n in names if n in library and "stream-fault" not in library[n].tags]
    return write_debuggability(
        run_dir,
        engines,
        scenarios,
        config.get("scenario_dir"),
        cost_runs=cost_runs,
        outputs=outputs,
        jobs=jobs,
        extra_args=extra_args,
    )


def markdown_table(rows: Iterable[dict[str, Any]], scenarios: Sequence[str]) -> str:
    """recall / bytes / bytes per fact per engine x mode for ``scenarios``, plus mode cost."""
    table: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (str(row["engine"]), str(row["mode"]))
        entry = table.setdefault(key, {"cost": row.get("mode_cost_ms", "")})
        entry[str(row["scenario"])] = row
    head = ["engine", "mode"]
    for name in scenarios:
        head += [f"{name} recall", "bytes", "B/fact"]
    head.append("mode cost / run")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (engine, mode), entry in table.items():
        cells = [engine, mode]
        for name in scenarios:
            cell = entry.get(name)
            if cell is None:
                cells += ["", "", ""]
                continue
            bpf = cell["bytes_per_fact"]
            cells += [
                f"{float(cell['recall']):.2f}",
                f"{int(cell['bytes']):,}",
                "–"
                if bpf in ("", None) or (isinstance(bpf, float) and math.isnan(bpf))
                else f"{float(bpf):,.0f}",
            ]
        cost = entry["cost"]
        cells.append("" if cost in ("", None) else fmt.signed(float(cost)))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
