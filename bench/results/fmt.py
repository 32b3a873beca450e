"""The formatting of numbers: one function per kind, used by the console, compare and the report.

- ``ms(12.345)`` → ``12.3 ms``; ``ms(0.297)`` → ``297 µs``; ``ms(1234.5)`` → ``1,234 ms``:
  ``digits`` significant digits (3 by default), whole microseconds below a millisecond,
  seconds from ``seconds_from`` on (``ms(1500, seconds_from=1000)`` → ``1.50 s``);
  ``ms_range(low, high)`` → ``8.12–8.55 ms``.
- ``ratio(2.345)`` → ``2.3×`` (``digits`` decimals, none from 100×); ``change(1.31)`` →
  ``1.31× slower`` (a changed / reference ratio in words).
- ``pct(0.0126)`` → ``1.26 %``; ``pct(0.42)`` → ``42 %`` (two decimals under 10 %, unless
  ``decimals`` says).
- ``signed(v, magnitude)`` → ``+5.70 ms`` / ``−3``: a sign (a true minus) and the magnitude
  formatted by ``magnitude`` (``ms`` by default, ``count`` for tokens).
- ``num(v, "{:,.1f}")`` and ``count(v)`` for everything else.

A missing value (None, NaN, ±inf, NA) prints as ``missing`` (``–`` by default).
"""

from __future__ import annotations

from collections.abc import Callable

from bench.results.stats import number

MISSING = "–"
MINUS = "−"


def ms(
    value: object,
    *,
    digits: int = 3,
    seconds_from: float | None = None,
    missing: str = MISSING,
) -> str:
    """A duration given in milliseconds, in ms or (below 1 ms) in whole µs; from
    ``seconds_from`` ms on (prose, e.g. a break-even latency) in seconds."""
    v = number(value)
    if v is None:
        return missing
    if v < 0:
        return MINUS + ms(-v, digits=digits, seconds_from=seconds_from)
    if v < 1:
        return f"{v * 1000:.0f} µs"
    unit = "ms"
    if seconds_from is not None and v >= seconds_from:
        v, unit = v / 1000, "s"
    decimals = max(0, digits - len(str(int(v))))
    return f"{v:,.{decimals}f} {unit}"


def ms_range(low: object, high: object, *, digits: int = 3, missing: str = MISSING) -> str:
    """``297–310 µs``, ``8.12–8.55 ms``, ``950 µs–1.02 ms``: an interval in one unit if it can."""
    lo, hi = number(low), number(high)
    if lo is None or hi is None:
        return missing
    first, second = ms(lo, digits=digits), ms(hi, digits=digits)
    unit = first.rsplit(" ", 1)[1]
    if second.endswith(" " + unit):
        return f"{first.rsplit(' ', 1)[0]}–{second}"
    return f"{first}–{second}"


def ratio(value: object, *, digits: int = 1, missing: str = MISSING) -> str:
    """A multiple: ``2.3×``; from 100× on without decimals (``1,250×``)."""
    v = number(value)
    if v is None:
        return missing
    return f"{v:.{digits}f}×" if abs(v) < 100 else f"{v:,.0f}×"


def change(value: object) -> str:
    """``1.31× slower``, ``1.25× faster`` or ``no change`` (value = changed / reference)."""
    v = number(value)
    if v is None or v <= 0:
        return "incomparable"
    if round(v, 2) == 1.0 and round(1 / v, 2) == 1.0:
        return "no change"
    if v > 1:
        return f"{ratio(v, digits=2)} slower"
    return f"{ratio(1 / v, digits=2)} faster"


def pct(value: object, *, decimals: int | None = None, missing: str = MISSING) -> str:
    """A share (0..1) as a percentage: ``1.26 %`` under 10 %, ``42 %`` above (or ``decimals``)."""
    v = number(value)
    if v is None:
        return missing
    if decimals is None:
        decimals = 2 if v < 0.1 else 0
    return f"{v * 100:.{decimals}f} %"


def num(value: object, spec: str = "{:,.1f}", *, missing: str = MISSING) -> str:
    """Any other number, by a format ``spec``."""
    v = number(value)
    return missing if v is None else spec.format(v)


def count(value: object, *, missing: str = MISSING) -> str:
    """A count or a token number: ``1,613``."""
    return num(value, "{:,.0f}", missing=missing)


def signed(value: object, magnitude: Callable[[float], str] = ms, *, missing: str = MISSING) -> str:
    """``+5.70 ms``, ``−3``: the sign of ``value`` and ``magnitude`` of its absolute value."""
    v = number(value)
    if v is None:
        return missing
    return ("+" if v >= 0 else MINUS) + magnitude(abs(v))
