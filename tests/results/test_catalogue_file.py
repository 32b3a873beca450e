"""catalogue.json: typed entry by entry; a bad entry or a foreign file is skipped, with why."""

from __future__ import annotations

import json
from pathlib import Path

from bench.results.folder import Skipped, load_run_folder, read_catalogue

CELL = {
    "engine": "scheduler",
    "customisation": "veto_tool",
    "works": True,
    "statements": 5,
    "internals": [],
    "note": "before_tool hook returns Veto",
}
PROGRAM = {"engine": "scheduler", "case": "simple", "statements": 9, "works": True}


def _write(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data))
    return path


def test_a_catalogue_is_typed(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "catalogue.json",
        {"schema_version": 1, "duration_s": 4, "cells": [CELL], "simplicity": [PROGRAM]},
    )
    record, skipped = read_catalogue(path)
    assert skipped == [] and record is not None
    assert record.duration_s == 4.0
    (cell,) = record.cells
    assert (cell.engine, cell.works, cell.statements, cell.internals, cell.implemented) == (
        "scheduler",
        True,
        5,
        (),
        True,
    )
    assert [(p.case, p.statements) for p in record.simplicity] == [("simple", 9)]


def test_a_bad_entry_is_skipped_and_named(tmp_path: Path) -> None:
    bad_cell = {**CELL, "statements": "five"}
    bad_program = {**PROGRAM, "case": "medium"}
    path = _write(
        tmp_path / "catalogue.json",
        {"schema_version": 1, "cells": [CELL, bad_cell], "simplicity": [bad_program, PROGRAM]},
    )
    record, skipped = read_catalogue(path)
    assert record is not None and len(record.cells) == 1 and len(record.simplicity) == 1
    assert [str(s) for s in skipped] == [
        "catalogue.json: cells[1]: statements: Input should be a valid integer",
        "catalogue.json: simplicity[0]: case: Input should be 'simple' or 'complex'",
    ]


def test_a_file_that_is_no_catalogue_is_left_out(tmp_path: Path) -> None:
    path = tmp_path / "catalogue.json"
    path.write_text("{not json")
    record, skipped = read_catalogue(path)
    assert record is None and len(skipped) == 1
    assert str(skipped[0]).startswith("catalogue.json: not valid JSON (")
    _write(path, {"schema_version": 2, "cells": []})
    assert read_catalogue(path) == (
        None,
        [
            Skipped(
                "catalogue.json",
                0,
                "not a catalogue of schema version 1 (schema_version=2): file left out",
            )
        ],
    )
    assert read_catalogue(tmp_path / "absent.json") == (None, [])
    # a version the record would refuse (a float, a string) is left out, not a crash
    for version in (1.0, "1", True):
        _write(path, {"schema_version": version, "cells": []})
        record, skipped = read_catalogue(path)
        assert record is None and "not a catalogue of schema version 1" in str(skipped[0])


def test_the_run_folder_carries_the_catalogue(tmp_path: Path) -> None:
    _write(tmp_path / "catalogue.json", {"schema_version": 1, "cells": [CELL, {"engine": 1}]})
    folder = load_run_folder(tmp_path, require_runs=False)
    assert folder.catalogue is not None and [c.customisation for c in folder.catalogue.cells] == [
        "veto_tool"
    ]
    assert len(folder.skipped) == 1 and "cells[1]" in str(folder.skipped[0])
