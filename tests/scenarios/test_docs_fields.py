"""docs/scenarios.md documents every field of the format, and only fields that exist: each
field table of "The format, field by field" equals the fields of its model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from scenarios.schema import (
    Expect,
    ExpectOverride,
    Fault,
    Limits,
    Scenario,
    ScriptToolCall,
    ToolBehavior,
    ToolDef,
    Turn,
)

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"
_FIELD = re.compile(r"^\|\s*`([a-z_]+)")


def documented(marker: str) -> list[str]:
    """The field names in the first column of the first table after ``marker``."""
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(marker)
    lines = text[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    names = []
    for line in lines[first + 2 :]:  # past the header and the |---| row
        if not line.startswith("|"):
            break
        found = _FIELD.match(line)
        assert found is not None, f"a row without a `field` in its first column: {line[:60]}"
        names.append(found[1])
    return names


@pytest.mark.parametrize(
    ("marker", "model"),
    [
        ("### Top level", Scenario),
        ("### `tools[]`", ToolDef),
        ("### `tools[].behavior`", ToolBehavior),
        ("### `script[]`", Turn),
        ("`tool_calls[]`:", ScriptToolCall),
        ("`fault` (at least one of", Fault),
        ("### `limits`", Limits),
        ("### `expect`", Expect),
    ],
)
def test_every_field_is_documented_once_and_nothing_else(marker: str, model: type[BaseModel]):
    names = documented(marker)
    assert len(names) == len(set(names)), f"a field documented twice under {marker}"
    assert sorted(names) == sorted(model.model_fields)


def test_the_expectation_table_covers_overrides_too():
    text = GUIDE.read_text(encoding="utf-8")
    assert set(ExpectOverride.model_fields) == set(Expect.model_fields) - {"engines"} | {"reason"}
    row = next(line for line in text.splitlines() if line.startswith("| `engines` |"))
    assert "`reason`" in row
