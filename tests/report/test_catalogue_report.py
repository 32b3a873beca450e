"""The catalogue's tables in the report and on the console, exactly."""

from __future__ import annotations

import json

from bench.report.catalogue import (
    catalogue_section,
    catalogue_table,
    cell_text,
    console_table,
    simplicity_table,
)
from bench.report.document import Cell, Note
from bench.results.rows import CatalogueRecord

RECORD = CatalogueRecord.model_validate_json(
    json.dumps(
        {
            "schema_version": 1,
            "customisations": [
                {"key": "veto_tool", "title": "veto a tool call"},
                {"key": "switch_model", "title": "switch the model"},
            ],
            "cells": [
                {
                    "engine": "lc-create-agent",
                    "customisation": "veto_tool",
                    "works": True,
                    "statements": 5,
                    "note": "wrap_tool_call",
                },
                {
                    "engine": "lc-create-agent",
                    "customisation": "switch_model",
                    "works": True,
                    "statements": 7,
                    "needs_internals": True,
                    "internals": ["monkeypatching"],
                    "note": "patches it",
                },
                {
                    "engine": "scheduler",
                    "customisation": "veto_tool",
                    "works": True,
                    "statements": 4,
                    "note": "before_tool",
                },
                {
                    "engine": "scheduler",
                    "customisation": "switch_model",
                    "works": False,
                    "implemented": False,
                    "note": "no such hook",
                    "failures": ["not possible with public API: no such hook"],
                },
            ],
            "simplicity": [
                {"engine": "scheduler", "case": "simple", "statements": 9, "works": True},
                {"engine": "scheduler", "case": "complex", "statements": 21, "works": True},
                {"engine": "lc-create-agent", "case": "simple", "statements": 8, "works": True},
                {"engine": "lc-create-agent", "case": "complex", "statements": 27, "works": False},
            ],
        }
    )
)


def test_the_catalogue_table() -> None:
    table = catalogue_table(RECORD)
    assert table.columns == ("customisation", "scheduler", "lc-create-agent")
    assert [tuple(c.text if isinstance(c, Cell) else c for c in row) for row in table.rows] == [
        ("veto a tool call", "✓ +4, public API", "✓ +5, public API"),
        ("switch the model", "not possible: no such hook", "✓ +7, monkeypatching"),
        (
            "all",
            "1/2 work, 1 with public API only; +4 statements in all",
            "2/2 work, 1 with public API only; +12 statements in all",
        ),
    ]


def test_a_failing_cell_and_a_missing_one() -> None:
    (failing,) = CatalogueRecord.model_validate_json(
        json.dumps(
            {
                "schema_version": 1,
                "cells": [
                    {"engine": "scheduler", "customisation": "x", "works": False, "statements": 3}
                ],
            }
        )
    ).cells
    assert cell_text(failing) == "✗ +3, public API"
    assert cell_text(None) == "not run"


def test_the_simplicity_table() -> None:
    table = simplicity_table(RECORD)
    assert table.rows == (
        ("scheduler", "9", "21", "2.3×"),
        ("lc-create-agent", "8", "27 (fails its test)", "3.4×"),
    )


def test_the_console_prints_both_tables() -> None:
    wide = "1/2 work, 1 with public API only; +4 statements in all"
    assert console_table(RECORD).splitlines() == [
        f"customisation     {'scheduler':<{len(wide)}}  lc-create-agent",
        f"veto a tool call  {'✓ +4, public API':<{len(wide)}}  ✓ +5, public API",
        f"switch the model  {'not possible: no such hook':<{len(wide)}}  ✓ +7, monkeypatching",
        f"all               {wide}  2/2 work, 1 with public API only; +12 statements in all",
        "",
        "engine           simple agent  complex agent        complex ÷ simple",
        "scheduler        9             21                   2.3×",
        "lc-create-agent  8             27 (fails its test)  3.4×",
    ]


def test_no_catalogue_is_a_note() -> None:
    (block,) = catalogue_section(None).blocks
    assert block == Note("No catalogue in this run (schedbench catalogue).")
