"""``schedbench catalogue``: catalogue.json in the run folder, read back by the loader."""

from __future__ import annotations

import json
import re

from bench.cli import main
from bench.results.folder import read_catalogue


def test_writes_a_catalogue_the_loader_reads(tmp_path, capsys) -> None:
    assert main(["catalogue", "--out", str(tmp_path), "--engines", "scheduler"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"wrote {tmp_path / 'catalogue.json'} in ")
    assert re.search(r"\nveto a tool call by a policy +✓ \+5, public API\n", out)
    data = json.loads((tmp_path / "catalogue.json").read_text())
    assert (data["schema_version"], {c["engine"] for c in data["cells"]}) == (1, {"scheduler"})
    record, skipped = read_catalogue(tmp_path / "catalogue.json")
    assert skipped == [] and record is not None
    assert [c.customisation for c in record.cells] == [c["key"] for c in data["customisations"]]
    assert {(p.engine, p.case, p.works) for p in record.simplicity} == {
        ("scheduler", "simple", True),
        ("scheduler", "complex", True),
    }


def test_an_unknown_engine_is_one_line_and_exit_2(tmp_path, capsys) -> None:
    assert main(["catalogue", "--out", str(tmp_path), "--engines", "scheduler,nope"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "schedbench catalogue: error: unknown catalogue engine 'nope'; valid: "
        "lc-create-agent, lc-agentexecutor, scheduler, openai-agents\n"
    )
    assert not (tmp_path / "catalogue.json").exists()


def test_an_environment_that_cannot_be_built_leaves_its_engines_skipped() -> None:
    from bench.catalogue.run import run_in_environment

    said: list[str] = []
    data = run_in_environment("no-such-environment", ["peer-a", "peer-b"], said.append)
    assert [s["engine"] for s in data["skipped"]] == ["peer-a", "peer-b"]
    assert "not declared" in data["skipped"][0]["reason"]
    assert "cells" not in data and said == []
