"""Helpers for tests that compare run folders."""

from __future__ import annotations

from pathlib import Path

from bench.results.folder import load_run_folder


def outcomes(folder: Path) -> dict[tuple[str, str], set[tuple[object, ...]]]:
    """Per (engine, scenario) cell, the set of (status, expectations met, LLM calls, tool
    calls) its runs ended with: what two runs of the same cells must agree on."""
    cells: dict[tuple[str, str], set[tuple[object, ...]]] = {}
    for row in load_run_folder(folder).runs:
        cells.setdefault((row.engine, row.scenario), set()).add(
            (row.status, row.expect_ok, row.llm_calls, row.tool_calls)
        )
    return cells
