"""``schedbench compare RUN_A RUN_B``: two runs judged benchmark by benchmark, like pyperf.

For every engine × scenario × latency profile × transport present in both runs: the ratio of
the medians (B / A) and a two-sided Mann–Whitney U test on the timed values, worded the way
pyperf words it — ``1.31x slower (significant)`` or ``1.02x faster (not significant)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import stats
from bench.results import META, RUNS, read_jsonl, timed_rows

GROUP = ("engine", "scenario", "latency", "transport")
METRICS = ("wall_ms", "cpu_ms", "overhead_ms")
_ENV_FIELDS = (("python", "version"), ("machine", "cpu_model"), ("machine", "cpu_logical"))


class RunNotFound(ValueError):
    """A directory that holds no run (no runs.jsonl)."""


@dataclass(frozen=True)
class LoadedRun:
    directory: Path
    meta: dict[str, Any]
    samples: dict[tuple[str, str, str, str], dict[str, list[float]]]  # group → metric → values
    order: list[tuple[str, str, str, str]]


def load_run(directory: Path | str) -> LoadedRun:
    """The timed values of a run directory, grouped by engine × scenario × latency × transport."""
    import json

    directory = Path(directory)
    runs = directory / RUNS
    if not directory.is_dir():
        raise RunNotFound(f"{directory}: not a directory")
    if not runs.exists():
        raise RunNotFound(f"{directory}: no {RUNS} (not a schedbench run directory)")
    meta: dict[str, Any] = {}
    if (directory / META).exists():
        meta = json.loads((directory / META).read_text(encoding="utf-8"))
    samples: dict[tuple[str, str, str, str], dict[str, list[float]]] = {}
    for row in timed_rows(read_jsonl(runs)):
        if row.get("crashed"):
            continue
        key = tuple(str(row.get(k)) for k in GROUP)
        metrics = samples.setdefault(key, {m: [] for m in METRICS})
        for metric in METRICS:
            value = row.get(metric)
            if isinstance(value, int | float) and math.isfinite(value):
                metrics[metric].append(float(value))
    config = meta.get("config") or {}
    engines = {e: i for i, e in enumerate(config.get("engines") or ())}
    scenarios = {s: i for i, s in enumerate(config.get("scenarios") or ())}
    order = sorted(
        samples,
        key=lambda k: (
            scenarios.get(k[1], len(scenarios)),
            k[1],
            k[2],
            k[3],
            engines.get(k[0], 99),
            k[0],
        ),
    )
    return LoadedRun(directory, meta, samples, order)


@dataclass(frozen=True)
class BenchmarkComparison:
    key: tuple[str, str, str, str]  # engine, scenario, latency, transport
    comparison: stats.Comparison
    n_ref: int
    n_changed: int


def compare_runs(
    ref: LoadedRun, changed: LoadedRun, *, metric: str = "wall_ms", alpha: float = stats.ALPHA
) -> list[BenchmarkComparison]:
    """Every benchmark present in both runs, in the reference run's order."""
    out = []
    for key in ref.order:
        if key not in changed.samples:
            continue
        a, b = ref.samples[key][metric], changed.samples[key][metric]
        if not a or not b:
            continue
        out.append(
            BenchmarkComparison(key, stats.compare_samples(a, b, alpha=alpha), len(a), len(b))
        )
    return out


def format_ms(value: float) -> str:
    if not math.isfinite(value):
        return "n/a"
    if value < 1:
        return f"{value:.3f} ms"
    if value < 100:
        return f"{value:.2f} ms"
    return f"{value:.1f} ms"


def _environment_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
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
    diffs = _environment_differences(ref.meta, changed.meta)
    if diffs:
        lines.append("Environment differs: " + "; ".join(diffs))
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
            f"  {engine + ':':<{width}} {format_ms(cmp.ref_median)} -> "
            f"{format_ms(cmp.changed_median)}: {cmp.verdict} "
            f"[p={cmp.pvalue:.3g}, n={c.n_ref}/{c.n_changed}]"
        )
    if comparisons:
        lines.append("")
        slower = sum(1 for c in comparisons if c.comparison.significant and c.comparison.ratio > 1)
        faster = sum(1 for c in comparisons if c.comparison.significant and c.comparison.ratio < 1)
        geo = stats.geometric_mean(c.comparison.ratio for c in comparisons)
        lines.append(f"Geometric mean: {stats.format_ratio(geo)}")
        lines.append(
            f"{len(comparisons)} benchmarks: {slower} significantly slower, "
            f"{faster} significantly faster, {len(comparisons) - slower - faster} not significant"
        )
    else:
        lines.append("No benchmark in common.")
    only_ref = [k for k in ref.order if k not in changed.samples]
    only_changed = [k for k in changed.order if k not in ref.samples]
    for label, keys in (
        ("Only in the reference", only_ref),
        ("Only in the changed run", only_changed),
    ):
        if keys:
            lines.append(f"{label}: " + ", ".join(f"{k[0]}/{k[1]}/{k[2]}" for k in keys))
    return "\n".join(lines) + "\n"
