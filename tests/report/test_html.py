"""report.html: self-contained, hostile text escaped, and it renders in a real browser."""

from __future__ import annotations

import re

import pytest

from bench.report.build import Report
from bench.report.rules import CLAIM_RULES
from tests.report.browser import CHROMIUM, page_state
from tests.report.synth import HOSTILE


def test_hostile_text_is_escaped_in_html(hostile_report: Report) -> None:
    html = hostile_report.html.read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    assert 'onerror="' not in html  # only as escaped text: onerror=&quot;
    assert "<img src=x" not in html
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=&quot;window.__pwned=true&quot;&gt;"
    # scenario name, description, final answer, error, tool name, debug mode, meta value
    assert html.count(escaped) >= 7


def test_hostile_text_is_escaped_in_markdown(hostile_report: Report) -> None:
    md = hostile_report.markdown.read_text(encoding="utf-8")
    assert "<script" not in md.lower() and "<img" not in md.lower()
    assert "&lt;script>alert(1)&lt;/script>" in md


def test_html_needs_nothing_from_outside(hostile_report: Report) -> None:
    html = hostile_report.html.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "@import" not in html and "url(" not in html
    assert html.count('src="data:image/png;base64,') == len(hostile_report.charts) // 2 == 12


def test_report_has_every_section(hostile_report: Report) -> None:
    md = hostile_report.markdown.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", md, flags=re.MULTILINE)
    assert headings == [
        "Contents",
        "Executive summary",
        "Decision matrix",
        "Claims ledger",
        "When to choose which",
        "Performance",
        "Where the time goes",
        "Load: capacity under a latency target",
        "Tokens",
        "Footprint and code size",
        "Debuggability",
        "Faults",
        "Customisation and false simplicity",
        "Switching provider",
        "LangChain versions",
        "Per-scenario results",
        "Environment",
        "Caveats",
    ]


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(hostile_report: Report) -> None:
    state = page_state(hostile_report.html)
    assert len(state["images"]) == 12
    for image in state["images"]:
        assert image["inline"], image
        assert image["width"] > 0 and image["height"] > 0, f"chart did not load: {image['alt']}"
    assert state["matrixRows"] == 8
    assert state["ledgerRows"] == len(CLAIM_RULES)
    assert set(state["ledgerVerdicts"]) <= {
        "supported",
        "partly",
        "refuted",
        "unsettled",
        "not measured",
    }
    assert len(state["ledgerVerdicts"]) == len(CLAIM_RULES)
    assert state["scripts"] == 0 and state["pwned"] is False
    assert state["external"] == []
    assert state["title"] == "schedbench: LangChain or our own agent loop?"


def test_hostile_constant_is_hostile() -> None:
    assert "<script>" in HOSTILE and "onerror" in HOSTILE
