"""Statistics of a benchmark: robust summaries, bootstrap intervals, pooling, comparisons.

Everything here takes plain sequences of numbers (non-finite values, ``None`` and bools are
left out) and returns plain values, so that the console summary, summary.csv,
``schedbench compare`` and the report all judge the data the same way.

- ``median``, ``mean``, ``percentile`` (linear interpolation), ``share``,
  ``coefficient_of_variation``: the one implementation of each.
- ``summarize(values)``: n, mean, stdev, min, max, median, p95, p99, quartiles, IQR, a
  bootstrap 95 % confidence interval of the median and pyperf-like instability warnings.
- ``bootstrap(values, statistic, groups=...)``: a percentile bootstrap over runs, or over
  *groups* of runs (rounds: runs of one worker process are not independent), returning an
  ``Estimate`` (point, 95 % interval and every resample, so that a verdict can be evaluated
  on each resample as well as on the point).
- ``bootstrap_percentiles(values, qs)``: p50/p95/p99 estimates from one set of resamples;
  ``bootstrap_ratio_of_sums(num, den)``: a ratio of totals (CPU per run over slices of
  time); ``ratio_of_estimates(a, b)`` and ``scaled(e, k)``: combining estimates.
- ``geometric_mean_over(samples)``: pooled over scenarios, each scenario weighted once,
  with an interval over runs (pooled figures with intervals over rounds:
  ``bench.results.pooling``); ``spread(samples)``: the per-scenario range of a metric.
- ``t_interval(values)``: Student's t interval of a mean of a few replicates (rounds).
- ``ratio_of_medians``, ``compare_samples`` (Mann–Whitney U), ``geometric_mean``.

Bootstraps are seeded: the same data and seed always give the same interval. Independent
samples that are resampled together (a ratio, a pool of scenarios) should draw from
independent streams: ``seed_for(seed, name)``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 2000
DEFAULT_SEED = 0
ALPHA = 0.05  # significance level of compare

# instability thresholds (pyperf warns at a standard deviation above 10% of the mean)
MAX_RELATIVE_IQR = 0.10
MAX_RELATIVE_STDEV = 0.10
MAX_OVER_MEDIAN = 2.0
MIN_VALUES = 5

Seed = int | Sequence[int] | np.random.SeedSequence | np.random.Generator
# a numpy-style reduction: statistic(array) -> float, statistic(matrix, axis=1) -> array
Statistic = Callable[..., object]


def number(value: object) -> float | None:
    """``value`` as a finite float, or None (None, NaN, ±inf, bools, text and NA are not)."""
    if value is None or isinstance(value, bool | str | bytes):
        return None
    try:
        result = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return result if math.isfinite(result) else None


def finite(values: Iterable[object]) -> np.ndarray:
    """The finite numbers of ``values`` as a float array (see ``number``)."""
    kept = [n for n in map(number, values) if n is not None]
    return np.asarray(kept, dtype=float)


def median(values: Iterable[object]) -> float:
    """Median of the finite values; NaN for none."""
    array = finite(values)
    return float(np.median(array)) if array.size else math.nan


def mean(values: Iterable[object]) -> float:
    """Arithmetic mean of the finite values; NaN for none."""
    array = finite(values)
    return float(array.mean()) if array.size else math.nan


def percentile(values: Iterable[object], q: float) -> float:
    """The ``q``-th percentile (0–100, linear interpolation); NaN for no values."""
    array = finite(values)
    return float(np.percentile(array, q)) if array.size else math.nan


def share(flags: Iterable[object]) -> float:
    """Share of true flags among the known ones (None and NaN left out); NaN for none."""
    known = [
        bool(f) for f in flags if f is not None and not (isinstance(f, float) and math.isnan(f))
    ]
    return sum(known) / len(known) if known else math.nan


def coefficient_of_variation(values: Iterable[object]) -> float:
    """Standard deviation (n − 1) over mean; NaN for fewer than two values or a zero mean."""
    array = finite(values)
    if array.size < 2 or array.mean() == 0:
        return math.nan
    return float(array.std(ddof=1) / array.mean())


def geometric_mean(ratios: Iterable[object]) -> float:
    """Geometric mean of the positive finite values (NaN if none)."""
    array = finite(ratios)
    array = array[array > 0]
    return float(np.exp(np.log(array).mean())) if array.size else math.nan


# ---------------------------------------------------------------------------------------------
# bootstrap


def seed_for(seed: int, *names: object) -> np.random.SeedSequence:
    """An independent, reproducible random stream for the sample called ``names``."""
    return np.random.SeedSequence([seed, *(zlib.crc32(str(n).encode()) for n in names)])


@dataclass(frozen=True)
class Estimate:
    """A statistic, its percentile-bootstrap interval, and the statistic on every resample.

    ``resamples`` always has the requested length (NaN where a resample is undefined, and
    all NaN when the data cannot be resampled: fewer than two values or groups), so that
    estimates of independent samples can be combined resample by resample.
    """

    point: float
    low: float
    high: float
    resamples: np.ndarray = field(repr=False, compare=False)
    confidence: float = CONFIDENCE

    def agreement(self, predicate: Callable[[np.ndarray], np.ndarray]) -> float:
        """Share of the (finite) resamples for which ``predicate`` holds; NaN if none."""
        values = self.resamples[np.isfinite(self.resamples)]
        return float(np.mean(predicate(values))) if values.size else math.nan


def interval(resamples: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The percentile interval of the finite resamples (NaN, NaN if none)."""
    values = resamples[np.isfinite(resamples)]
    if values.size == 0:
        return math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _estimate(point: float, resamples: np.ndarray, confidence: float) -> Estimate:
    resamples.setflags(write=False)
    low, high = interval(resamples, confidence)
    return Estimate(point, low, high, resamples, confidence)


def bootstrap(
    values: Sequence[object],
    statistic: Statistic = np.median,
    *,
    groups: Sequence[Hashable] | None = None,
    resamples: int = RESAMPLES,
    seed: Seed = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """Percentile bootstrap of ``statistic`` over the values, or over ``groups`` of them.

    Without ``groups`` the runs are resampled with replacement. With ``groups`` (one label
    per value, e.g. each run's round) whole groups are resampled and the statistic is taken
    on the values of the drawn groups: the interval then includes the variation between
    rounds (worker processes), which independent-run resampling would hide. Non-finite
    values are left out (with their group labels).
    """
    values = list(values)
    labels_in = list(groups) if groups is not None else [None] * len(values)
    pairs = [(n, g) for n, g in zip(map(number, values), labels_in, strict=True) if n is not None]
    array = np.asarray([v for v, _ in pairs], dtype=float)
    if array.size == 0:
        return _estimate(math.nan, np.full(resamples, math.nan), confidence)
    point = float(statistic(array))  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    if groups is None:
        if array.size < 2:
            return _estimate(point, np.full(resamples, math.nan), confidence)
        picks = rng.integers(0, array.size, size=(resamples, array.size))
        drawn = np.asarray(statistic(array[picks], axis=1), dtype=float)
        return _estimate(point, drawn, confidence)
    labels = list(dict.fromkeys(g for _, g in pairs))
    members = [np.asarray([v for v, g in pairs if g == label]) for label in labels]
    if len(members) < 2:
        return _estimate(point, np.full(resamples, math.nan), confidence)
    picks = rng.integers(0, len(members), size=(resamples, len(members)))
    return _estimate(point, grouped_statistic(members, picks, statistic), confidence)


def grouped_statistic(
    members: Sequence[np.ndarray], picks: np.ndarray, statistic: Statistic = np.median
) -> np.ndarray:
    """``statistic`` of each row of ``picks`` (indices into ``members``), taken on the
    concatenation of the picked groups' values in the picked order, without a Python loop
    over rows: rows of equal total length are gathered into one matrix and reduced at once
    (``statistic(matrix, axis=1)``). Groups must be non-empty."""
    sizes = np.asarray([m.size for m in members])
    flat = np.concatenate(members)
    starts = np.cumsum(sizes) - sizes
    lengths = sizes[picks].sum(axis=1)
    out = np.empty(len(picks))
    for length in np.unique(lengths):
        rows = np.flatnonzero(lengths == length)
        matrix = flat[_gather(picks[rows], sizes, starts, int(length))]
        out[rows] = np.asarray(statistic(matrix, axis=1), dtype=float)
    return out


def _gather(picks: np.ndarray, sizes: np.ndarray, starts: np.ndarray, length: int) -> np.ndarray:
    """For rows of picked groups that total ``length`` values each: the index into the flat
    values of every position of each row's concatenation, as a (rows, length) matrix."""
    lens = sizes[picks].ravel()
    first = starts[picks].ravel()
    # concatenated ranges: position t of range i is first[i] + (t - where range i begins)
    begins = np.cumsum(lens) - lens
    index = np.repeat(first - begins, lens) + np.arange(lens.sum())
    return index.reshape(len(picks), length)


def bootstrap_median_ci(
    values: Sequence[object], *, confidence: float = CONFIDENCE, seed: Seed = DEFAULT_SEED
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the median over runs (NaN for < 2)."""
    estimate = bootstrap(values, seed=seed, confidence=confidence)
    return estimate.low, estimate.high


def geometric_mean_over(
    samples: Mapping[str, Sequence[object]],
    statistic: Statistic = np.median,
    *,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """Geometric mean over scenarios of each scenario's ``statistic``, each scenario weighted
    once however many runs it has; its interval resamples the runs of every scenario
    independently, with the scenarios fixed. Runs of one worker process are not independent:
    a figure over several rounds belongs in ``bench.results.pooling`` (intervals over rounds).

    A geometric mean needs positive values: the point (or a resample) is NaN when some
    scenario's statistic is not positive.
    """
    if not samples:
        return _estimate(math.nan, np.full(resamples, math.nan), confidence)
    parts = [
        bootstrap(
            values,
            statistic,
            resamples=resamples,
            seed=seed_for(seed, name),
            confidence=confidence,
        )
        for name, values in samples.items()
    ]
    points = np.asarray([p.point for p in parts])
    stacked = np.vstack([p.resamples for p in parts])
    with np.errstate(divide="ignore", invalid="ignore"):
        point = float(np.exp(np.log(points).mean())) if np.all(points > 0) else math.nan
        logs = np.where(stacked > 0, np.log(np.where(stacked > 0, stacked, 1.0)), math.nan)
        drawn = np.exp(logs.mean(axis=0))
    return _estimate(point, drawn, confidence)


def bootstrap_percentiles(
    values: Sequence[object],
    qs: Sequence[float] = (50.0, 95.0, 99.0),
    *,
    resamples: int = RESAMPLES,
    seed: Seed = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> dict[float, Estimate]:
    """Percentile-bootstrap ``Estimate`` of each ``q``-th percentile (0–100, linear
    interpolation), all from one set of resamples of the runs (NaN resamples for < 2)."""
    array = finite(values)
    if array.size == 0:
        return {q: _estimate(math.nan, np.full(resamples, math.nan), confidence) for q in qs}
    points = np.percentile(array, list(qs))
    if array.size < 2:
        return {
            q: _estimate(float(p), np.full(resamples, math.nan), confidence)
            for q, p in zip(qs, points, strict=True)
        }
    rng = np.random.default_rng(seed)
    drawn = np.percentile(array[rng.integers(0, array.size, (resamples, array.size))], qs, axis=1)
    return {
        q: _estimate(float(p), np.asarray(d, dtype=float), confidence)
        for q, p, d in zip(qs, points, drawn, strict=True)
    }


def bootstrap_ratio_of_sums(
    numerators: Sequence[object],
    denominators: Sequence[object],
    *,
    resamples: int = RESAMPLES,
    seed: Seed = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> Estimate:
    """Σ numerators ÷ Σ denominators (e.g. CPU seconds ÷ runs over slices of time), with a
    bootstrap interval that resamples the pairs; NaN when the denominators sum to zero."""
    pairs = [
        (a, b)
        for a, b in zip(map(number, numerators), map(number, denominators), strict=True)
        if a is not None and b is not None
    ]
    num = np.asarray([a for a, _ in pairs], dtype=float)
    den = np.asarray([b for _, b in pairs], dtype=float)
    point = float(num.sum() / den.sum()) if den.size and den.sum() > 0 else math.nan
    if num.size < 2:
        return _estimate(point, np.full(resamples, math.nan), confidence)
    picks = np.random.default_rng(seed).integers(0, num.size, (resamples, num.size))
    sums = den[picks].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        drawn = np.where(sums > 0, num[picks].sum(axis=1) / np.where(sums > 0, sums, 1), math.nan)
    return _estimate(point, drawn, confidence)


def ratio_of_estimates(a: Estimate, b: Estimate) -> Estimate:
    """``a ÷ b`` of two estimates of independent samples, resample by resample."""
    point = a.point / b.point if b.point else math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        drawn = np.asarray(a.resamples, dtype=float) / np.asarray(b.resamples, dtype=float)
    drawn = np.where(np.isfinite(drawn), drawn, math.nan)
    return _estimate(point, drawn, a.confidence)


def difference_of_estimates(a: Estimate, b: Estimate) -> Estimate:
    """``a − b`` of two estimates of independent samples, resample by resample."""
    drawn = np.asarray(a.resamples, dtype=float) - np.asarray(b.resamples, dtype=float)
    return _estimate(a.point - b.point, np.where(np.isfinite(drawn), drawn, math.nan), a.confidence)


def scaled(estimate: Estimate, factor: float) -> Estimate:
    """The estimate times a known constant (a unit change, runs/s × CPU per run)."""
    return _estimate(
        estimate.point * factor, np.asarray(estimate.resamples) * factor, estimate.confidence
    )


@dataclass(frozen=True)
class Spread:
    """A metric's statistic per scenario and its range over scenarios."""

    by_scenario: dict[str, float]
    low: float
    high: float
    lowest: str | None  # the scenario at ``low``
    highest: str | None

    @property
    def ratio(self) -> float:
        """high / low (NaN unless both are positive)."""
        return self.high / self.low if self.low > 0 and math.isfinite(self.high) else math.nan


def spread(samples: Mapping[str, Sequence[object]], statistic: Statistic = np.median) -> Spread:
    """``statistic`` of each scenario's values, and the lowest and highest of them."""
    by_scenario = {}
    for name, values in samples.items():
        array = finite(values)
        if array.size:
            by_scenario[name] = float(statistic(array))  # type: ignore[arg-type]
    return spread_of(by_scenario)


def spread_of(by_scenario: Mapping[str, object]) -> Spread:
    """The lowest and highest of per-scenario values (non-finite ones left out)."""
    kept = {
        name: n for name, n in ((k, number(v)) for k, v in by_scenario.items()) if n is not None
    }
    if not kept:
        return Spread({}, math.nan, math.nan, None, None)
    lowest = min(kept, key=kept.__getitem__)
    highest = max(kept, key=kept.__getitem__)
    return Spread(kept, kept[lowest], kept[highest], lowest, highest)


def t_interval(values: Iterable[object], confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Student's t interval of the mean of the finite values (n − 1 degrees of freedom): the
    interval of a mean over a few independent replicates, e.g. per-round values (NaN, NaN
    for fewer than two)."""
    from scipy.stats import t  # type: ignore[import-untyped]  # scipy has no stubs here

    array = finite(values)
    if array.size < 2:
        return math.nan, math.nan
    centre = float(array.mean())
    half = float(t.ppf((1 + confidence) / 2, array.size - 1)) * float(array.std(ddof=1))
    half /= math.sqrt(array.size)
    return centre - half, centre + half


def ratio_of_medians(
    values: Sequence[object],
    baseline: Sequence[object],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: Seed = DEFAULT_SEED,
) -> tuple[float, float, float]:
    """(median(values) / median(baseline), CI low, CI high), by bootstrapping both samples
    independently (one random stream, drawn for ``values`` first)."""
    rng = np.random.default_rng(seed)
    mine = bootstrap(values, resamples=resamples, seed=rng, confidence=confidence)
    base = bootstrap(baseline, resamples=resamples, seed=rng, confidence=confidence)
    if math.isnan(mine.point) or math.isnan(base.point):
        return math.nan, math.nan, math.nan
    ratio = mine.point / base.point if base.point else math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        low, high = interval(mine.resamples / base.resamples, confidence)
    return ratio, low, high


# ---------------------------------------------------------------------------------------------
# summaries


def instability_warnings(values: Iterable[object]) -> list[str]:
    """Why a sample's spread makes its median doubtful (empty: looks stable).

    Like pyperf's checks: a standard deviation above 10% of the mean, an IQR above 10% of
    the median, a maximum above twice the median, or too few values to tell.
    """
    array = finite(values)
    if array.size == 0:
        return ["no values"]
    warnings = []
    if array.size < MIN_VALUES:
        warnings.append(f"only {array.size} values")
    middle = float(np.median(array))
    average = float(array.mean())
    if middle > 0:
        q1, q3 = np.percentile(array, [25, 75])
        if (q3 - q1) / middle > MAX_RELATIVE_IQR:
            warnings.append(f"IQR is {(q3 - q1) / middle:.0%} of the median")
        if array.max() > MAX_OVER_MEDIAN * middle:
            warnings.append(f"maximum is {array.max() / middle:.1f}x the median")
    if array.size > 1 and average > 0:
        stdev = float(array.std(ddof=1))
        if stdev / average > MAX_RELATIVE_STDEV:
            warnings.append(f"standard deviation is {stdev / average:.0%} of the mean")
    return warnings


@dataclass(frozen=True)
class Summary:
    """The statistics of one sample (one engine × scenario metric)."""

    n: int
    mean: float
    stdev: float
    minimum: float
    maximum: float
    median: float
    p95: float
    p99: float
    q1: float
    q3: float
    ci_low: float
    ci_high: float
    warnings: tuple[str, ...]

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def unstable(self) -> bool:
        """True when a spread warning fired (too few values alone is not instability)."""
        return any(not w.startswith("only ") for w in self.warnings)


def summarize(values: Iterable[object], *, seed: Seed = DEFAULT_SEED) -> Summary:
    """Summary statistics of ``values`` (non-finite values are ignored)."""
    array = finite(values)
    if array.size == 0:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, ("no values",))
    q1, middle, q3, p95, p99 = (float(v) for v in np.percentile(array, [25, 50, 75, 95, 99]))
    ci_low, ci_high = bootstrap_median_ci(list(array), seed=seed)
    return Summary(
        n=int(array.size),
        mean=float(array.mean()),
        stdev=float(array.std(ddof=1)) if array.size > 1 else 0.0,
        minimum=float(array.min()),
        maximum=float(array.max()),
        median=middle,
        p95=p95,
        p99=p99,
        q1=q1,
        q3=q3,
        ci_low=ci_low,
        ci_high=ci_high,
        warnings=tuple(instability_warnings(array)),
    )


# ---------------------------------------------------------------------------------------------
# comparing two samples


@dataclass(frozen=True)
class Comparison:
    """Two samples of one benchmark judged against each other."""

    ref_median: float
    changed_median: float
    ratio: float  # changed / reference
    pvalue: float
    significant: bool


def mann_whitney_pvalue(a: Sequence[object], b: Sequence[object]) -> float:
    """Two-sided Mann–Whitney U test p-value; 1.0 when it cannot be computed."""
    from scipy.stats import mannwhitneyu

    x, y = finite(a), finite(b)
    if x.size == 0 or y.size == 0:
        return 1.0
    if np.array_equal(np.sort(x), np.sort(y)):
        return 1.0
    result = mannwhitneyu(x, y, alternative="two-sided")
    p = float(result.pvalue)
    return p if math.isfinite(p) else 1.0


def smallest_pvalue(n_ref: int, n_changed: int) -> float:
    """The smallest two-sided Mann–Whitney p-value ``n_ref`` against ``n_changed`` values can
    give (two fully separated samples, no ties): 2 / C(n_ref + n_changed, n_ref), at most 1."""
    if n_ref <= 0 or n_changed <= 0:
        return 1.0
    return min(1.0, 2 / math.comb(n_ref + n_changed, n_ref))


def compare_samples(
    ref: Sequence[object], changed: Sequence[object], *, alpha: float = ALPHA
) -> Comparison:
    """Ratio of medians and whether the difference is significant (Mann–Whitney U)."""
    ref_median, changed_median = median(ref), median(changed)
    pvalue = mann_whitney_pvalue(ref, changed)
    return Comparison(
        ref_median=ref_median,
        changed_median=changed_median,
        ratio=changed_median / ref_median if ref_median else math.nan,
        pvalue=pvalue,
        significant=pvalue < alpha,
    )
