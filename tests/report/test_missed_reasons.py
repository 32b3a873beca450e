"""Every ✗ of the report carries its reason, and an engine with no completed run is named.

The reasons are the runs' ``expect_failures`` (``metrics.failure_reason``, the console's own
helper); an engine that failed every run of the performance scenarios is listed as such in
the performance section instead of vanishing from its tables.
"""

from __future__ import annotations

from pathlib import Path

from bench.report import sections
from bench.report.document import Bullets, Paragraph, Section
from bench.report.from_folder import load_run_dir
from bench.results.store import RunStore
from tests.results.folders import meta, run_row

LACKS = "final answer lacks 'A123'"


def _folder(directory: Path) -> Path:
    """customer_returns: raw as expected; scheduler misses on 2 of 3 runs; lc-create-agent
    fails all 3 with an error."""
    with RunStore(directory) as store:
        store.create()
        store.write_meta(meta())
        for repeat in range(3):
            store.append("runs.jsonl", run_row("raw", "customer_returns", repeat, 0.7))
            missed = [LACKS] if repeat else []
            row = run_row("scheduler", "customer_returns", repeat, 0.8, expect_ok=not missed,
                          expect_failures=missed)  # fmt: skip
            store.append("runs.jsonl", row)
            row = run_row("lc-create-agent", "customer_returns", repeat, 0.9, status="error",
                          final_answer=None, error="ConnectError: refused", expect_ok=False,
                          expect_failures=["status error, expected completed"])  # fmt: skip
            store.append("runs.jsonl", row)
    return directory


def _text(block: object) -> str:
    if isinstance(block, Paragraph):
        return "".join(getattr(span, "text", str(span)) for span in block.spans)
    if isinstance(block, Bullets):
        return "\n".join(_text(item) for item in block.items)
    return ""


def _texts(section: Section) -> list[str]:
    return [_text(b) for b in section.blocks if _text(b)]


def test_every_cross_of_the_scenario_tables_carries_its_reason(tmp_path):
    data = load_run_dir(_folder(tmp_path / "run"))
    section = sections.per_scenario(data)
    notes = [
        "✗ scheduler on customer_returns: final answer lacks 'A123' (2 of 3 runs)\n"
        "✗ lc-create-agent on customer_returns: status error, expected completed (3 of 3 runs)"
    ]
    overview_notes = [t for t in _texts(section) if t.startswith("✗")]
    assert overview_notes == notes
    (sub,) = section.subsections
    assert [t for t in _texts(sub) if t.startswith("✗")] == notes


def test_an_engine_with_no_completed_run_is_listed_with_its_reason(tmp_path):
    data = load_run_dir(_folder(tmp_path / "run"))
    section = sections.performance(data, {})
    assert [t for t in _texts(section) if t.startswith("No completed run")] == [
        "No completed run: lc-create-agent (status error, expected completed (3 of 3 runs))."
    ]
