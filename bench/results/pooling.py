"""Pooled figures: one metric over every scenario of a pool, with intervals over rounds.

A **pool** is a fixed list of scenarios (the report's: every happy-path scenario of the run).
An engine's pooled figure is the geometric mean over those scenarios of a per-scenario
statistic (the median of its runs), each scenario weighted once. An engine that lacks a
scenario of the pool (did not run it, or completed no run of it) is *left out* of the pool,
with the reason (``Pool.left_out``): a pool is never shrunk to what every engine ran.

The unit of replication is the **round**: a round is one fresh worker process per engine,
shared by every scenario, so the runs of one round — and its scenarios — are not independent
(a process can be a few per cent slow throughout). So:

- per round *r*: ``v_r`` = the geometric mean over the pool's scenarios of the median of
  that round's runs (a round missing one of the scenarios is left out for that engine);
- the point is the geometric mean of the ``v_r`` (equally: the geometric mean over scenarios
  of each scenario's geometric mean of round medians, ``Pooled.spread``);
- the interval is Student's t on ``log v_r`` (n − 1 degrees of freedom): with three rounds it
  is wide, and it covers (``tests/results/test_coverage.py``: a simulation with a known
  process effect, through these functions); resampling three rounds does not;
- the resamples (for verdicts decided on every resample, ``bench.report.verdicts``) are
  draws of that same t distribution, made from random variates *shared by every engine of
  the pool* — one normal per round and resample, one χ² per resample — so that resample *i*
  of engine A ÷ resample *i* of engine B is a draw of the paired within-round ratio;
- a ratio (``Pool.ratio``) is paired: A ÷ B in each round both have, the t-interval over
  those per-round ratios, and beside it the spread of the per-scenario ratios.

With a single (complete) round there is no variation between processes to measure: the
interval then resamples the runs of each scenario (``method == "runs"``) and is too narrow
by however much processes differ; the figure says so.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from bench.results import stats
from bench.results.stats import CONFIDENCE, DEFAULT_SEED, RESAMPLES, Estimate, Spread, Statistic

Observation = tuple[str, str, Hashable, object]  # (engine, scenario, round, value)
Method = Literal["rounds", "runs"]


@dataclass(frozen=True)
class Pooled:
    """One engine's figure over a pool's scenarios."""

    engine: str
    estimate: Estimate
    scenarios: tuple[str, ...]
    by_round: dict[Hashable, float]  # round -> geometric mean over scenarios (rounds method)
    spread: Spread  # per scenario: its value (geometric mean of its round medians)
    method: Method  # "rounds": t-interval over rounds; "runs": one round, runs resampled
    left_out_rounds: tuple[Hashable, ...] = ()  # rounds that lack a scenario of the pool

    @property
    def rounds(self) -> tuple[Hashable, ...]:
        return tuple(self.by_round)


@dataclass(frozen=True)
class PooledRatio:
    """``numerator`` ÷ ``denominator`` over a pool: paired in rounds, with its spread."""

    numerator: str
    denominator: str
    estimate: Estimate
    scenarios: tuple[str, ...]
    by_round: dict[Hashable, float]  # round -> the ratio of that round's pooled values
    spread: Spread  # per scenario: the ratio of the two engines' values
    method: Method  # "rounds": paired t over rounds; "runs": independent estimates


@dataclass(frozen=True)
class Pool:
    """Every engine's pooled figure over the same scenarios, and who is left out, why."""

    scenarios: tuple[str, ...]
    figures: dict[str, Pooled]
    left_out: dict[str, str]  # engine -> why it has no figure over this pool
    draws: _RoundDraws = field(repr=False, compare=False)

    def estimates(self) -> dict[str, Estimate]:
        return {engine: figure.estimate for engine, figure in self.figures.items()}

    def ratio(self, numerator: str, denominator: str) -> PooledRatio:
        """numerator ÷ denominator, paired within rounds (KeyError naming the reason when
        one of them is not in the pool)."""
        a, b = (self._figure(e) for e in (numerator, denominator))
        by_scenario = {s: a.spread.by_scenario[s] / b.spread.by_scenario[s] for s in self.scenarios}
        spread = stats.spread_of(by_scenario)
        common = [r for r in a.by_round if r in b.by_round]
        if a.method == b.method == "rounds" and len(common) >= 2:
            logs = np.log([a.by_round[r] / b.by_round[r] for r in common])
            estimate = self.draws.estimate(logs, common)
            by_round = dict(zip(common, np.exp(logs).tolist(), strict=True))
            method: Method = "rounds"
        else:
            estimate = stats.ratio_of_estimates(a.estimate, b.estimate)
            by_round, method = {}, "runs"
        return PooledRatio(
            numerator, denominator, estimate, self.scenarios, by_round, spread, method
        )

    def _figure(self, engine: str) -> Pooled:
        if engine in self.figures:
            return self.figures[engine]
        why = self.left_out.get(engine, "it has no runs in this pool")
        raise KeyError(f"{engine} has no figure over this pool: {why}")


def pool(
    observations: Iterable[Observation],
    scenarios: Sequence[str],
    *,
    attempted: Mapping[str, Collection[str]] | None = None,
    statistic: Statistic = np.median,
    resamples: int = RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = CONFIDENCE,
) -> Pool:
    """Pool ``observations`` (engine, scenario, round, value) over ``scenarios``.

    ``attempted`` (engine -> the scenarios it has rows of, whatever their status) tells
    "did not run" from "completed no run" in the reasons, and names engines without a
    single usable value. Non-finite values are left out; the same data and seed always give
    the same pool.
    """
    wanted = tuple(dict.fromkeys(scenarios))
    cells: dict[str, dict[str, dict[Hashable, list[float]]]] = {}
    for engine, scenario, round_, value in observations:
        number = stats.number(value)
        if number is not None and scenario in wanted:
            by_round = cells.setdefault(engine, {}).setdefault(scenario, {})
            by_round.setdefault(round_, []).append(number)
    labels = sorted({r for e in cells.values() for s in e.values() for r in s}, key=_round_key)
    draws = _RoundDraws(labels, resamples, seed, confidence)
    figures: dict[str, Pooled] = {}
    left_out: dict[str, str] = {}
    for engine in dict.fromkeys([*cells, *(attempted or {})]):
        mine = cells.get(engine, {})
        reason = _missing(wanted, mine, (attempted or {}).get(engine, ()), statistic)
        if reason:
            left_out[engine] = reason
            continue
        figures[engine] = _pooled(engine, mine, wanted, draws, statistic, seed)
    return Pool(wanted, figures, left_out, draws)


def _round_key(label: Hashable) -> tuple[int, Any]:
    # rounds are integers; None (a row without a round) sorts first
    return (0, 0) if label is None else (1, label)


def _missing(
    scenarios: Sequence[str],
    mine: Mapping[str, Mapping[Hashable, Sequence[float]]],
    attempted: Collection[str],
    statistic: Statistic,
) -> str:
    """Why an engine cannot be pooled over ``scenarios`` ('' when it can)."""
    absent = [s for s in scenarios if s not in mine]
    if absent:
        not_run = [s for s in absent if s not in attempted]
        failed = [s for s in absent if s in attempted]
        parts = [f"did not run {', '.join(not_run)}"] if not_run else []
        parts += [f"completed no run of {', '.join(failed)}"] if failed else []
        return f"{'; '.join(parts)} ({len(absent)} of the {len(scenarios)} pooled scenarios)"
    for scenario in scenarios:
        for values in mine[scenario].values():
            if not float(statistic(np.asarray(values))) > 0:  # type: ignore[arg-type]
                return f"its median in {scenario} is not positive (a geometric mean needs > 0)"
    return ""


def _pooled(
    engine: str,
    mine: Mapping[str, Mapping[Hashable, Sequence[float]]],
    scenarios: tuple[str, ...],
    draws: _RoundDraws,
    statistic: Statistic,
    seed: int,
) -> Pooled:
    every = [r for r in draws.labels if all(r in mine[s] for s in scenarios)]
    dropped = tuple(r for r in draws.labels if r not in every and any(r in mine[s] for s in mine))
    if len(every) >= 2 and None not in every:
        logs = np.log(
            [[float(statistic(np.asarray(mine[s][r]))) for r in every] for s in scenarios]  # type: ignore[arg-type]
        )
        per_round = logs.mean(axis=0)
        return Pooled(
            engine,
            draws.estimate(per_round, every),
            scenarios,
            dict(zip(every, np.exp(per_round).tolist(), strict=True)),
            stats.spread_of(dict(zip(scenarios, np.exp(logs.mean(axis=1)).tolist(), strict=True))),
            "rounds",
            dropped,
        )
    samples = {s: [v for values in mine[s].values() for v in values] for s in scenarios}
    estimate = stats.geometric_mean_over(
        samples,
        statistic,
        resamples=draws.resamples,
        seed=zlib.crc32(f"{seed}/runs/{engine}".encode()),
        confidence=draws.confidence,
    )
    return Pooled(
        engine, estimate, scenarios, {}, stats.spread(samples, statistic), "runs", dropped
    )


class _RoundDraws:
    """The random variates every engine of a pool shares: the t distribution of a mean over
    rounds is drawn as mean + (Z · (x − mean)) / √(n(n − 1)) · √(df / χ²_df), with Z a
    standard normal per round and resample and χ²_df from one uniform per resample — the
    same Z and uniform for every engine, so that differences of two engines' draws over the
    same rounds are draws of the paired difference's t distribution."""

    def __init__(
        self, labels: Sequence[Hashable], resamples: int, seed: int, confidence: float
    ) -> None:
        rng = np.random.default_rng(stats.seed_for(seed, "rounds"))
        self.labels = tuple(labels)
        self.resamples = resamples
        self.confidence = confidence
        self._column = {label: i for i, label in enumerate(self.labels)}
        self._normal = rng.standard_normal((resamples, len(self.labels)))
        self._uniform = 1.0 - rng.random(resamples)  # in (0, 1]

    def estimate(self, logs: np.ndarray, rounds: Sequence[Hashable]) -> Estimate:
        """exp of the mean of ``logs`` (one per round), its t-interval, and its draws."""
        from scipy.stats import chi2  # type: ignore[import-untyped]  # scipy has no stubs here

        n = len(logs)
        centre = float(np.mean(logs))
        deviations = np.asarray(logs, dtype=float) - centre
        low, high = stats.t_interval(logs, self.confidence)
        df = n - 1
        with np.errstate(divide="ignore"):
            scale = np.sqrt(df / chi2.ppf(self._uniform, df)) / math.sqrt(n * df)
        normal = self._normal[:, [self._column[r] for r in rounds]]
        drawn = np.exp(centre + (normal @ deviations) * scale)
        drawn.setflags(write=False)
        return Estimate(math.exp(centre), math.exp(low), math.exp(high), drawn, self.confidence)


__all__ = ["Observation", "Pool", "Pooled", "PooledRatio", "pool"]
