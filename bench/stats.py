"""Statistics of a benchmark: robust summaries, bootstrap confidence intervals, comparisons.

Everything here takes plain sequences of numbers and returns plain values, so that the
summary table, ``schedbench compare`` and the report all judge the data the same way.

- ``summarize(values)`` — n, mean, stdev, min, max, median, p95, p99, quartiles, IQR, a
  bootstrap 95% confidence interval of the median and pyperf-like instability warnings.
- ``ratio_of_medians(values, baseline)`` — median(values) / median(baseline) with a bootstrap
  95% confidence interval (both samples resampled independently).
- ``compare_samples(ref, changed)`` — ratio of medians and a two-sided Mann–Whitney U test,
  worded like pyperf: ``1.31x slower (significant)``.

Bootstraps are seeded: the same data always gives the same interval.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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


def _array(values: Iterable[float]) -> np.ndarray:
    array = np.asarray(list(values), dtype=float)
    return array[np.isfinite(array)]


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0–100, linear interpolation); NaN for no values."""
    array = _array(values)
    return float(np.percentile(array, q)) if array.size else math.nan


def bootstrap_median_ci(
    values: Iterable[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the median."""
    array = _array(values)
    if array.size == 0:
        return math.nan, math.nan
    if array.size == 1:
        return float(array[0]), float(array[0])
    medians = _bootstrap_medians(array, np.random.default_rng(seed), resamples)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return float(low), float(high)


def _bootstrap_medians(array: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    picks = rng.integers(0, array.size, size=(resamples, array.size))
    return np.median(array[picks], axis=1)


def ratio_of_medians(
    values: Iterable[float],
    baseline: Iterable[float],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float, float]:
    """(median(values) / median(baseline), CI low, CI high), by bootstrapping both samples."""
    a, b = _array(values), _array(baseline)
    if a.size == 0 or b.size == 0:
        return math.nan, math.nan, math.nan
    ratio = _safe_div(float(np.median(a)), float(np.median(b)))
    if a.size == 1 and b.size == 1:
        return ratio, ratio, ratio
    rng = np.random.default_rng(seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = _bootstrap_medians(a, rng, resamples) / _bootstrap_medians(b, rng, resamples)
    ratios = ratios[np.isfinite(ratios)]
    if ratios.size == 0:
        return ratio, math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(ratios, [tail, 100 - tail])
    return ratio, float(low), float(high)


def _safe_div(a: float, b: float) -> float:
    return a / b if b else math.nan


def instability_warnings(values: Iterable[float]) -> list[str]:
    """Why a sample's spread makes its median doubtful (empty: looks stable).

    Like pyperf's checks: a standard deviation above 10% of the mean, an IQR above 10% of
    the median, a maximum above twice the median, or too few values to tell.
    """
    array = _array(values)
    if array.size == 0:
        return ["no values"]
    warnings = []
    if array.size < MIN_VALUES:
        warnings.append(f"only {array.size} values")
    median = float(np.median(array))
    mean = float(array.mean())
    if median > 0:
        q1, q3 = np.percentile(array, [25, 75])
        if (q3 - q1) / median > MAX_RELATIVE_IQR:
            warnings.append(f"IQR is {(q3 - q1) / median:.0%} of the median")
        if array.max() > MAX_OVER_MEDIAN * median:
            warnings.append(f"maximum is {array.max() / median:.1f}x the median")
    if array.size > 1 and mean > 0:
        stdev = float(array.std(ddof=1))
        if stdev / mean > MAX_RELATIVE_STDEV:
            warnings.append(f"standard deviation is {stdev / mean:.0%} of the mean")
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


def summarize(values: Iterable[float], *, seed: int = DEFAULT_SEED) -> Summary:
    """Summary statistics of ``values`` (non-finite values are ignored)."""
    array = _array(values)
    if array.size == 0:
        nan = math.nan
        return Summary(0, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, ("no values",))
    q1, median, q3, p95, p99 = (float(v) for v in np.percentile(array, [25, 50, 75, 95, 99]))
    ci_low, ci_high = bootstrap_median_ci(array, seed=seed)
    return Summary(
        n=int(array.size),
        mean=float(array.mean()),
        stdev=float(array.std(ddof=1)) if array.size > 1 else 0.0,
        minimum=float(array.min()),
        maximum=float(array.max()),
        median=median,
        p95=p95,
        p99=p99,
        q1=q1,
        q3=q3,
        ci_low=ci_low,
        ci_high=ci_high,
        warnings=tuple(instability_warnings(array)),
    )


def format_ratio(ratio: float) -> str:
    """``1.31x slower``, ``1.25x faster`` or ``no change`` (ratio = changed / reference)."""
    if not math.isfinite(ratio) or ratio <= 0:
        return "incomparable"
    if round(ratio, 2) == 1.0 and round(1 / ratio, 2) == 1.0:
        return "no change"
    if ratio > 1:
        return f"{ratio:.2f}x slower"
    return f"{1 / ratio:.2f}x faster"


@dataclass(frozen=True)
class Comparison:
    """Two samples of one benchmark judged against each other."""

    ref_median: float
    changed_median: float
    ratio: float  # changed / reference
    pvalue: float
    significant: bool

    @property
    def verdict(self) -> str:
        """``1.31x slower (significant)`` or ``1.01x faster (not significant)``."""
        return f"{format_ratio(self.ratio)} ({'significant' if self.significant else 'not significant'})"


def mann_whitney_pvalue(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided Mann–Whitney U test p-value; 1.0 when it cannot be computed."""
    from scipy.stats import mannwhitneyu

    x, y = _array(a), _array(b)
    if x.size == 0 or y.size == 0:
        return 1.0
    if np.array_equal(np.sort(x), np.sort(y)):
        return 1.0
    result = mannwhitneyu(x, y, alternative="two-sided")
    p = float(result.pvalue)
    return p if math.isfinite(p) else 1.0


def compare_samples(
    ref: Sequence[float], changed: Sequence[float], *, alpha: float = ALPHA
) -> Comparison:
    """Ratio of medians and whether the difference is significant (Mann–Whitney U)."""
    x, y = _array(ref), _array(changed)
    ref_median = float(np.median(x)) if x.size else math.nan
    changed_median = float(np.median(y)) if y.size else math.nan
    pvalue = mann_whitney_pvalue(x, y)
    return Comparison(
        ref_median=ref_median,
        changed_median=changed_median,
        ratio=_safe_div(changed_median, ref_median),
        pvalue=pvalue,
        significant=pvalue < alpha,
    )


def geometric_mean(ratios: Iterable[float]) -> float:
    """Geometric mean of positive finite ratios (NaN if none)."""
    array = _array(ratios)
    array = array[array > 0]
    return float(np.exp(np.log(array).mean())) if array.size else math.nan
