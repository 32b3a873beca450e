"""``schedbench compare RUN_A RUN_B``: two runs judged benchmark by benchmark, like pyperf.

For every engine × scenario × latency profile × transport present in both runs: the ratio of
the medians (B / A) and a two-sided Mann–Whitney U test on the timed values, worded the way
pyperf words it — ``1.31× slower (significant)`` or ``1.02× faster (not significant)``.
The cells and their values come from ``bench.results`` (the same cells as summary.csv).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.results import fmt, metrics, stats
from bench.results.folder import RunFolder, load_run_folder
from bench.results.metrics import CellKey

METRICS = ("wall_ms", "cpu_ms", "overhead_ms")
_ENV_FIELDS = (("python", "version"), ("machine", "cpu_model"), ("machine", "cpu_logical"))


@dataclass(frozen=True)
class LoadedRun:
    """A run folder and its cells (latest timed rows), in the run's own order."""

    folder: RunFolder
    cells: dict[CellKey, list[Any]]
    order: list[CellKey]

    @property
    def directory(self) -> Path:
        return self.folder.directory

    @property
    def meta(self) -> dict[str, Any]:
        return self.folder.meta

    def values(self, key: CellKey, metric: str) -> list[float]:
        """The measured values of ``metric`` in one cell (crashed rows left out)."""
        return metrics.values(metrics.measured(self.cells.get(key, ())), metric)


def load_run(directory: Path | str) -> LoadedRun:
    """A run directory's cells (``bench.results.folder``: ``RunFolderError`` if unreadable)."""
    folder = load_run_folder(directory)
    cells = metrics.cells(folder.runs)
    engines = metrics.order_index(folder.engine_order)
    scenarios = metrics.order_index(folder.scenario_order)
    order = sorted(
        cells,
        key=lambda k: (
            scenarios.get(k[1], len(scenarios)),
            k[1],
            k[2],
            k[3],
            engines.get(k[0], len(engines)),
            k[0],
        ),
    )
    return LoadedRun(folder, cells, order)


@dataclass(frozen=True)
class BenchmarkComparison:
    key: CellKey  # engine, scenario, latency, transport
    comparison: stats.Comparison
    n_ref: int
    n_changed: int


def verdict(comparison: stats.Comparison) -> str:
    """``1.31× slower (significant)`` or ``1.01× faster (not significant)``, as pyperf says."""
    judged = "significant" if comparison.significant else "not significant"
    return f"{fmt.change(comparison.ratio)} ({judged})"


def compare_runs(
    ref: LoadedRun, changed: LoadedRun, *, metric: str = "wall_ms", alpha: float = stats.ALPHA
) -> list[BenchmarkComparison]:
    """Every benchmark present in both runs, in the reference run's order."""
    out = []
    for key in ref.order:
        if key not in changed.cells:
            continue
        a, b = ref.values(key, metric), changed.values(key, metric)
        if not a or not b:
            continue
        out.append(
            BenchmarkComparison(key, stats.compare_samples(a, b, alpha=alpha), len(a), len(b))
        )
    return out


def environment_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    diffs = []
    for section, field in _ENV_FIELDS:
        x, y = (a.get(section) or {}).get(field), (b.get(section) or {}).get(field)
        if x != y:
            diffs.append(f"{section}.{field}: {x} -> {y}")
    pa, pb = a.get("packages") or {}, b.get("packages") or {}
    for name in sorted(set(pa) | set(pb)):
        if pa.get(name) != pb.get(name):
            diffs.append(f"{name}: {pa.get(name)} -> {pb.get(name)}")
    ga, gb = (a.get("git") or {}).get("sha"), (b.get("git") or {}).get("sha")
    if ga != gb:
        diffs.append(f"git: {str(ga)[:12]} -> {str(gb)[:12]}")
    return diffs


def render(
    ref: LoadedRun,
    changed: LoadedRun,
    comparisons: list[BenchmarkComparison],
    *,
    metric: str = "wall_ms",
    alpha: float = stats.ALPHA,
) -> str:
    """The text ``schedbench compare`` prints."""
    lines = [
        f"Reference: {ref.directory}",
        f"Changed:   {changed.directory}",
        f"Metric: median {metric}; significance: two-sided Mann-Whitney U, alpha={alpha:g}",
    ]
    diffs = environment_differences(ref.meta, changed.meta)
    if diffs:
        lines.append("Environment differs: " + "; ".join(diffs))
    for run in (ref, changed):
        skipped = run.folder.skipped_summary()
        if skipped:
            lines.append(f"Warning: {run.directory}: {skipped}")
    lines.append("")
    width = max((len(c.key[0]) for c in comparisons), default=0) + 1
    current = None
    for c in comparisons:
        engine, scenario, latency, transport = c.key
        header = f"{scenario} [{latency}, {transport}]"
        if header != current:
            if current is not None:
                lines.append("")
            lines.append(header)
            current = header
        cmp = c.comparison
        lines.append(
            f"  {engine + ':':<{width}} {fmt.ms(cmp.ref_median)} -> "
            f"{fmt.ms(cmp.changed_median)}: {verdict(cmp)} "
            f"[p={cmp.pvalue:.3g}, n={c.n_ref}/{c.n_changed}]"
        )
    if comparisons:
        lines.append("")
        slower = sum(1 for c in comparisons if c.comparison.significant and c.comparison.ratio > 1)
        faster = sum(1 for c in comparisons if c.comparison.significant and c.comparison.ratio < 1)
        geo = stats.geometric_mean(c.comparison.ratio for c in comparisons)
        lines.append(f"Geometric mean: {fmt.change(geo)}")
        lines.append(
            f"{len(comparisons)} benchmarks: {slower} significantly slower, "
            f"{faster} significantly faster, {len(comparisons) - slower - faster} not significant"
        )
    else:
        lines.append("No benchmark in common.")
    only_ref = [k for k in ref.order if k not in changed.cells]
    only_changed = [k for k in changed.order if k not in ref.cells]
    for label, keys in (
        ("Only in the reference", only_ref),
        ("Only in the changed run", only_changed),
    ):
        if keys:
            lines.append(f"{label}: " + ", ".join(f"{k[0]}/{k[1]}/{k[2]}" for k in keys))
    return "\n".join(lines) + "\n"
