"""docs/report.md states the thresholds the rules apply: every number of ``T`` its tables
give must be the value in ``T`` (rendered as the docs write it), and every constant of ``T``
is either checked here or named as not stated in the docs."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.report.rules import T

DOCS = Path(__file__).resolve().parents[2] / "docs" / "report.md"


def num(v: float) -> str:
    return format(v, ",g")


def pct(share: float) -> str:
    return f"{num(round(share * 100, 6))} %"


def stars(n: int) -> str:
    return "★" * n


def rows() -> dict[str, str]:
    """The first cell of each table row in docs/report.md → the whole row."""
    out: dict[str, str] = {}
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            out.setdefault(line.split("|")[1].strip(), line)
    return out


def expected() -> list[tuple[str, str, tuple[str, ...]]]:
    """(row of the docs, text it must contain, the ``T`` constants the text states)."""
    qps_low = T.QPS_CLAIMED * (1 - T.QPS_MARGIN)
    qps_high = T.QPS_CLAIMED * (1 + T.QPS_MARGIN)
    out: list[tuple[str, str, tuple[str, ...]]] = [
        # the decision matrix
        *[
            ("development speed, simple cases", f"≤ {num(x)}× {stars(n)},", ("SIMPLICITY_BANDS",))
            for x, n in T.SIMPLICITY_BANDS[1:]
        ],
        *[("debuggability", f"≥ {num(x)} {stars(n)},", ("DEBUG_BANDS",)) for x, n in T.DEBUG_BANDS],
        ("debuggability", f"exceed {num(T.DEBUG_NOISE_FACTOR)}×", ("DEBUG_NOISE_FACTOR",)),
        ("debuggability", f"under {pct(T.DEBUG_LOCALISED_MIN)} of", ("DEBUG_LOCALISED_MIN",)),
        *[("performance", f"≤ {pct(x)} {stars(n)},", ("SHARE_BANDS",)) for x, n in T.SHARE_BANDS],
        (
            "performance",
            "cores per 100 runs/s ("
            + ", ".join(f"≤ {num(x)}" for x, _ in T.CORES_BANDS)
            + ", above)",
            ("CORES_BANDS",),
        ),
        *[
            ("production readiness", f"≥ {pct(x)} {stars(n)},", ("PROD_BANDS",))
            for x, n in T.PROD_BANDS
        ],
        *[
            ("flexibility", f"{'' if x == 1.0 else '≥ '}{pct(x)} {stars(n)},", ("FLEX_BANDS",))
            for x, n in T.FLEX_BANDS
        ],
        ("flexibility", f"more than {num(T.FLEX_STATEMENTS_FACTOR)}×", ("FLEX_STATEMENTS_FACTOR",)),
        # the claims ledger
        (
            "performance overhead",
            f"ratio ≥ {num(T.OVERHEAD_RATIO_SUPPORTED)}; share ≥ {pct(T.OVERHEAD_SHARE_SIGNIFICANT)}",
            ("OVERHEAD_RATIO_SUPPORTED", "OVERHEAD_SHARE_SIGNIFICANT"),
        ),
        (
            "performance overhead",
            f"ratio < {num(T.OVERHEAD_RATIO_REFUTED)}; share < {pct(T.OVERHEAD_SHARE_NEGLIGIBLE)}",
            ("OVERHEAD_RATIO_REFUTED", "OVERHEAD_SHARE_NEGLIGIBLE"),
        ),
        (
            "long callback chains",
            f"| ≥ {pct(T.CALLBACK_SHARE_SUPPORTED)} | < {pct(T.CALLBACK_SHARE_REFUTED)} |",
            ("CALLBACK_SHARE_SUPPORTED", "CALLBACK_SHARE_REFUTED"),
        ),
        (
            "~200 tokens per round",
            f"| ≥ {num(T.TOKENS_PER_ROUND_MIN)} | < {num(T.TOKENS_NEGLIGIBLE)} |",
            ("TOKENS_PER_ROUND_MIN", "TOKENS_NEGLIGIBLE"),
        ),
        (
            "poor streaming",
            f"| ≥ {num(T.TTFT_RATIO_SUPPORTED)}× and "
            f"≥ {num(T.TTFT_SHARE_SIGNIFICANT * T.REFERENCE_TTFT_MS)} ms more | "
            f"< {num(T.TTFT_RATIO_REFUTED)}× or "
            f"< {num(T.TTFT_SHARE_NEGLIGIBLE * T.REFERENCE_TTFT_MS)} ms more |",
            (
                "TTFT_RATIO_SUPPORTED",
                "TTFT_SHARE_SIGNIFICANT",
                "TTFT_RATIO_REFUTED",
                "TTFT_SHARE_NEGLIGIBLE",
                "REFERENCE_TTFT_MS",
            ),
        ),
        (
            "not production-ready",
            f"| retries: ≤ {pct(T.RETRIES_MISSING)} handled; guards: gap ≥ "
            f"{num(T.GUARD_GAP_SUPPORTED)} | retries: ≥ {pct(T.RETRIES_HANDLED)}; guards: gap ≤ "
            f"{num(T.GUARD_GAP_REFUTED)} |",
            ("RETRIES_MISSING", "GUARD_GAP_SUPPORTED", "RETRIES_HANDLED", "GUARD_GAP_REFUTED"),
        ),
        (
            '"50+ modules vs ~400 lines"',
            f"| ≥ {num(T.MODULES_CLAIMED)}; ≤ {num(T.LINES_CLAIMED * T.LINES_TOLERANCE)} | "
            f"< {num(T.MODULES_CLAIMED)}; > {num(T.LINES_CLAIMED * T.LINES_REFUTED)} |",
            ("MODULES_CLAIMED", "LINES_CLAIMED", "LINES_TOLERANCE", "LINES_REFUTED"),
        ),
        (
            "> 100 QPS needs a custom loop",
            f"| with a load phase: LangChain fails at or below {num(T.QPS_CLAIMED)} runs/s and "
            f"ours sustains {num(T.QPS_CLAIMED)}; without: LangChain < {num(qps_low)} and "
            f"ours ≥ {num(T.QPS_CLAIMED)} | with a load phase: LangChain sustains "
            f"{num(T.QPS_CLAIMED)}; without: LangChain ≥ {num(qps_high)} |",
            ("QPS_CLAIMED", "QPS_MARGIN"),
        ),
        (
            "hard to debug",
            f"| recall ≤ ours − {num(T.DEBUG_RECALL_GAP_SUPPORTED)}, or "
            f"≥ {num(T.DEBUG_NOISE_SUPPORTED)}× bytes/fact, or "
            f"≥ {pct(T.DEBUG_LOCALISED_GAP_SUPPORTED)} fewer located; "
            f"≥ {num(T.DEBUG_NOISE_SUPPORTED)}× | "
            f"recall ≥ ours − {num(T.DEBUG_RECALL_GAP_REFUTED)} and "
            f"≤ {num(T.DEBUG_NOISE_REFUTED)}× and ≤ {pct(T.DEBUG_LOCALISED_GAP_REFUTED)} fewer; "
            f"≤ {num(T.DEBUG_NOISE_REFUTED)}× |",
            (
                "DEBUG_RECALL_GAP_SUPPORTED",
                "DEBUG_NOISE_SUPPORTED",
                "DEBUG_LOCALISED_GAP_SUPPORTED",
                "DEBUG_RECALL_GAP_REFUTED",
                "DEBUG_NOISE_REFUTED",
                "DEBUG_LOCALISED_GAP_REFUTED",
            ),
        ),
        (
            'inflexible ("deep customisation means patching framework source")',
            f"| ≥ {pct(T.INFLEXIBLE_SUPPORTED)} |",
            ("INFLEXIBLE_SUPPORTED",),
        ),
        (
            'over-abstraction ("one line hides ~100 lines of framework logic")',
            f"| ≥ {num(T.ABSTRACTION_SUPPORTED)} more calls per step | "
            f"≤ {num(T.ABSTRACTION_REFUTED)} more |",
            ("ABSTRACTION_SUPPORTED", "ABSTRACTION_REFUTED"),
        ),
        (
            "multi-model support (a strength the article grants)",
            f"(≤ {num(T.SWITCH_STATEMENTS)} statements) works on every scenario | it does not "
            f"work, or the smallest change that works exceeds {num(T.SWITCH_REWRITE)} statements",
            ("SWITCH_STATEMENTS", "SWITCH_REWRITE"),
        ),
    ]
    return out


# constants of T that the docs' tables do not state, and why
NOT_STATED = {"MIN_STEP_MS": "a floor for denominators, not a rule's threshold"}


@pytest.mark.parametrize(
    ("row", "text"),
    [(row, text) for row, text, _ in expected()],
    ids=[f"{'+'.join(names)}" for _, _, names in expected()],
)
def test_docs_state_the_threshold_t_applies(row: str, text: str) -> None:
    table = rows()
    assert row in table, f"docs/report.md has no table row {row!r}"
    assert text in table[row], f"docs/report.md row {row!r} should state {text!r}"


def test_every_threshold_is_checked_or_named() -> None:
    constants = {k for k in vars(T) if k.isupper()}
    checked = {name for _, _, names in expected() for name in names}
    assert constants - checked - set(NOT_STATED) == set()
    assert (checked | set(NOT_STATED)) - constants == set()


def test_the_multimodel_prose_names_the_constants() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert f"`SWITCH_STATEMENTS` = {num(T.SWITCH_STATEMENTS)}" in text
    assert f"`SWITCH_REWRITE` = {num(T.SWITCH_REWRITE)}" in text
