"""bench.results.fmt: the one formatter of each kind of number."""

from __future__ import annotations

import math

import pytest

from bench.results import fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0297, "30 µs"),
        (0.297, "297 µs"),
        (1.234, "1.23 ms"),
        (9.999, "10.00 ms"),  # the decimals follow the value, not its rounding
        (12.345, "12.3 ms"),
        (123.45, "123 ms"),
        (1234.5, "1,234 ms"),
        (-5.0, "−5.00 ms"),
        (None, "–"),
        (math.nan, "–"),
        (math.inf, "–"),
        ("12", "–"),  # text is not a number
    ],
)
def test_ms(value, text):
    assert fmt.ms(value) == text


def test_ms_digits_and_missing():
    assert [fmt.ms(v, digits=4) for v in (10.95, 123.45, 0.2974)] == [
        "10.95 ms",
        "123.5 ms",
        "297 µs",
    ]
    assert fmt.ms(None, missing="n/a") == "n/a"


def test_ms_range_shares_the_unit_when_it_can():
    assert fmt.ms_range(0.699, 0.760) == "699–760 µs"
    assert fmt.ms_range(8.12, 8.55) == "8.12–8.55 ms"
    assert fmt.ms_range(0.95, 1.02) == "950 µs–1.02 ms"
    assert fmt.ms_range(20.96, 21.41, digits=4) == "20.96–21.41 ms"
    assert fmt.ms_range(math.nan, 1.0) == "–"


def test_ratio_pct_signed_count():
    assert [fmt.ratio(v) for v in (2.345, 123.4, 1250.0, None)] == ["2.3×", "123×", "1,250×", "–"]
    assert fmt.ratio(1.5, digits=2) == "1.50×"
    assert [fmt.pct(v) for v in (0.0126, 0.42, None)] == ["1.26 %", "42 %", "–"]
    assert fmt.pct(0.05, decimals=0) == "5 %"
    assert [fmt.signed(v) for v in (5.7, -0.03, 0.0)] == ["+5.70 ms", "−30 µs", "+0 µs"]
    assert [fmt.signed(v, fmt.count) for v in (188.4, -3.0)] == ["+188", "−3"]
    assert [fmt.count(v) for v in (1613.0, None)] == ["1,613", "–"]
    assert fmt.num(70.04) == "70.0"
