"""``schedbench compare RUN_A RUN_B``: two runs judged benchmark by benchmark, like pyperf.

For every engine × scenario × latency profile × transport present in both runs: the ratio of
the medians (B / A) and a two-sided Mann–Whitney U test on the timed values, worded the way
pyperf words it — ``1.31× slower (significant)`` or ``1.02× faster (not significant)``.
The cells and their values come from ``bench.results`` (the same cells as summary.csv).

Only completed runs are timed: a failed run can be fast because it stopped early. A benchmark
in which one side has no completed run gets no speed claim, only its error counts; one whose
samples are too small for the test ever to reach ``alpha`` says so instead of "not significant".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.results import fmt, metrics, stats
from bench.results.folder import RunFolder, load_run_folder
from bench.results.metrics import CellKey
from bench.results.per_engine import EngineSummary

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
        """The values of ``metric`` over one cell's completed runs (failed, crashed left out)."""
        return metrics.values(metrics.completed(self.cells.get(key, ())), metric)

    def errors(self, key: CellKey) -> int:
        """How many of one cell's timed runs did not complete (``metrics.is_error``)."""
        return sum(1 for r in self.cells.get(key, ()) if metrics.is_error(r))

    def runs(self, key: CellKey) -> int:
        return len(self.cells.get(key, ()))


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
    """One benchmark of both runs; ``comparison`` is None when a side has no completed run."""

    key: CellKey  # engine, scenario, latency, transport
    comparison: stats.Comparison | None
    n_ref: int  # completed runs with a value
    n_changed: int
    errors_ref: int = 0  # timed runs that did not complete
    errors_changed: int = 0
    runs_ref: int = 0  # timed runs
    runs_changed: int = 0
    alpha: float = stats.ALPHA

    @property
    def too_small(self) -> bool:
        """True when no outcome of these sample sizes could be significant at ``alpha``."""
        return stats.smallest_pvalue(self.n_ref, self.n_changed) >= self.alpha


def judged(comparisons: list[BenchmarkComparison]) -> list[BenchmarkComparison]:
    """The benchmarks with completed runs on both sides (the ones with a speed claim)."""
    return [c for c in comparisons if c.comparison is not None]


def verdict(comparison: stats.Comparison, *, too_small: bool = False) -> str:
    """``1.31× slower (significant)`` or ``1.01× faster (not significant)``, as pyperf says;
    ``(too few runs to be significant)`` when the samples could never reach alpha."""
    if comparison.significant:
        word = "significant"
    else:
        word = "too few runs to be significant" if too_small else "not significant"
    return f"{fmt.change(comparison.ratio)} ({word})"


def failure_text(c: BenchmarkComparison) -> str:
    """Why a benchmark has no speed claim: the runs each side completed."""
    return (
        f"no speed claim: completed {c.runs_ref - c.errors_ref} of {c.runs_ref} runs in the "
        f"reference, {c.runs_changed - c.errors_changed} of {c.runs_changed} in the changed run"
    )


def compare_runs(
    ref: LoadedRun, changed: LoadedRun, *, metric: str = "wall_ms", alpha: float = stats.ALPHA
) -> list[BenchmarkComparison]:
    """Every benchmark present in both runs, in the reference run's order."""
    out = []
    for key in ref.order:
        if key not in changed.cells:
            continue
        a, b = ref.values(key, metric), changed.values(key, metric)
        out.append(
            BenchmarkComparison(
                key,
                stats.compare_samples(a, b, alpha=alpha) if a and b else None,
                len(a),
                len(b),
                errors_ref=ref.errors(key),
                errors_changed=changed.errors(key),
                runs_ref=ref.runs(key),
                runs_changed=changed.runs(key),
                alpha=alpha,
            )
        )
    return out


def small_sample_warning(small: list[BenchmarkComparison], alpha: float) -> str:
    """The line saying that some benchmarks can never be judged significant, and why."""
    worst = max(small, key=lambda c: stats.smallest_pvalue(c.n_ref, c.n_changed))
    p = stats.smallest_pvalue(worst.n_ref, worst.n_changed)
    need = next(n for n in range(1, 1000) if stats.smallest_pvalue(n, n) < alpha)
    count = f"{len(small)} benchmark{'s' if len(small) != 1 else ''}"
    return (
        f"Warning: sample too small: with {worst.n_ref} against {worst.n_changed} runs a two-sided "
        f"Mann-Whitney U test cannot go below p={p:.3g}, so it can never reach alpha={alpha:g} "
        f"({count}); at least {need} completed runs on each side are needed."
    )


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


def step_text(summary: EngineSummary | None) -> str:
    """``1.23 ms [1.19–1.28 ms]``: a pooled overhead per step and its interval, or ``–``."""
    e = summary.step_ms if summary else None
    if e is None:
        return fmt.MISSING
    interval = f" [{fmt.ms_range(e.low, e.high)}]" if e.high > e.low else ""
    return fmt.ms(e.point) + interval


def per_engine_lines(
    ref: Mapping[str, EngineSummary], changed: Mapping[str, EngineSummary]
) -> list[str]:
    """Per engine of either run: the overhead per LLM step of each (``bench.results.
    per_engine``, the console's and the report's figure) and the change between them; none
    when neither run has such a figure."""
    engines = list(dict.fromkeys([*ref, *changed]))
    if not any(s.step_ms for s in (*ref.values(), *changed.values())):
        return []  # no run with LLM calls on a happy path: nothing to print
    lines = ["Overhead per LLM step (geometric mean over the happy paths, as in the report)"]
    width = max(len(e) for e in engines) + 1
    for engine in engines:
        a, b = ref.get(engine), changed.get(engine)
        text = f"  {engine + ':':<{width}} {step_text(a)} -> {step_text(b)}"
        if a and b and a.step_ms and b.step_ms:
            text += f": {fmt.change(b.step_ms.point / a.step_ms.point)}"
        else:
            why = {
                side: s.left_out
                for side, s in (("reference", a), ("changed", b))
                if s and s.left_out
            }
            if len(set(why.values())) == 1 and len(why) == 2:
                text += f" (left out of both: {why['reference']})"
            elif why:
                text += " (" + "; ".join(f"{side}: {w}" for side, w in why.items()) + ")"
        lines.append(text)
    return lines


def render(
    ref: LoadedRun,
    changed: LoadedRun,
    comparisons: list[BenchmarkComparison],
    *,
    metric: str = "wall_ms",
    alpha: float = stats.ALPHA,
    engines: tuple[Mapping[str, EngineSummary], Mapping[str, EngineSummary]] | None = None,
) -> str:
    """The text ``schedbench compare`` prints; ``engines``: each run's per-engine summaries
    (``bench.results.per_engine``), printed after the benchmarks (None: not printed)."""
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
        if cmp is None:
            lines.append(f"  {engine + ':':<{width}} {failure_text(c)}")
            continue
        errors = (
            f", errors={c.errors_ref}/{c.errors_changed}"
            if c.errors_ref or c.errors_changed
            else ""
        )
        lines.append(
            f"  {engine + ':':<{width}} {fmt.ms(cmp.ref_median)} -> "
            f"{fmt.ms(cmp.changed_median)}: {verdict(cmp, too_small=c.too_small)} "
            f"[p={cmp.pvalue:.3g}, n={c.n_ref}/{c.n_changed}{errors}]"
        )
    good = judged(comparisons)
    if comparisons:
        lines.append("")
    if good:
        cmps = [c.comparison for c in good if c.comparison is not None]
        slower = sum(1 for c in cmps if c.significant and c.ratio > 1)
        faster = sum(1 for c in cmps if c.significant and c.ratio < 1)
        geo = stats.geometric_mean(c.ratio for c in cmps)
        lines.append(f"Geometric mean: {fmt.change(geo)}")
        lines.append(
            f"{len(good)} benchmarks: {slower} significantly slower, "
            f"{faster} significantly faster, {len(good) - slower - faster} not significant"
        )
    unjudged = len(comparisons) - len(good)
    if unjudged:
        lines.append(
            f"{unjudged} benchmark{'s' if unjudged != 1 else ''} without a speed claim: "
            "no completed run on one side or both."
        )
    small = [c for c in good if c.too_small]
    if small:
        lines.append(small_sample_warning(small, alpha))
    if not comparisons:
        lines.append("No benchmark in common.")
    only_ref = [k for k in ref.order if k not in changed.cells]
    only_changed = [k for k in changed.order if k not in ref.cells]
    for label, keys in (
        ("Only in the reference", only_ref),
        ("Only in the changed run", only_changed),
    ):
        if keys:
            lines.append(f"{label}: " + ", ".join(f"{k[0]}/{k[1]}/{k[2]}" for k in keys))
    if engines is not None and (per_engine := per_engine_lines(*engines)):
        lines += ["", *per_engine]
    return "\n".join(lines) + "\n"
