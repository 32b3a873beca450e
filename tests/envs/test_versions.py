"""The LangChain version matrix: the probe in each line's environment, the table
(versions.json) and its report section."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.engines.codesize import measure_target
from bench.engines.registry import REGISTRY, VERSION_SCENARIOS, VERSION_SPECS
from bench.envs import ensure
from bench.report.document import Note
from bench.report.versions_section import COLUMNS, versions_section
from bench.results import fmt
from bench.results.folder import read_versions
from bench.results.rows import VersionProbe, WarningSeen
from bench.results.versions import version_rows
from bench.results.versions import write_versions as write
from bench.runner.phases.version_probe import probe


def test_every_line_is_an_engine_of_its_own_environment_on_the_happy_paths():
    lines = [s.version_line for s in VERSION_SPECS]
    assert lines == ["0.1", "0.2", "0.3", "1"]
    for spec in VERSION_SPECS:
        assert spec.environment == f"langchain-{spec.version_line}"
        assert spec.scenarios == VERSION_SCENARIOS
        assert REGISTRY[spec.name] is spec


@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("line", "unchanged", "first_error"),
    [("0.3", False, "ModuleNotFoundError: No module named 'langchain_classic'"), ("1", True, None)],
)
def test_the_probe_says_whether_todays_code_runs_unchanged(line, unchanged, first_error):
    name = f"lc-agentexecutor@{line}"
    found = VersionProbe.model_validate(probe(name, ensure(f"langchain-{line}").python))
    assert (found.engine, found.unchanged, found.adapted) == (name, unchanged, True)
    assert found.unchanged_error == first_error
    assert found.adapted_error is None
    pins = {"0.3": "0.3.30", "1": "1.5.2"}
    assert found.packages["langchain"] == pins[line]


def _row(engine: str, scenario: str, overhead_ms: float, calls: int, **extra) -> SimpleNamespace:
    fields = {"phase": "timed", "status": "completed", "crashed": False} | extra
    return SimpleNamespace(
        engine=engine, scenario=scenario, overhead_ms=overhead_ms, llm_calls=calls, **fields
    )


def test_the_table_joins_the_probe_the_adapter_size_and_the_run(tmp_path):
    old, new = VERSION_SPECS[2], VERSION_SPECS[3]  # 0.3 and 1
    probes = {
        old.name: VersionProbe(
            engine=old.name,
            unchanged=False,
            unchanged_error="ModuleNotFoundError: No module named 'langchain_classic'",
            adapted=True,
            packages={"langchain": "0.3.30", "langchain-core": "0.3.86", "openai": "2.54.0"},
            warnings=[
                WarningSeen(
                    category="LangChainDeprecationWarning",
                    message="old",
                    where="x.py:1",
                    count=2,
                    deprecation=True,
                ),
                WarningSeen(
                    category="UserWarning", message="hm", where="y.py:2", count=1, deprecation=False
                ),
            ],
        ),
        new.name: "environment 'langchain-1' could not be built: no network",
    }
    runs = [
        _row(old.name, "customer_returns", 30.0, 3),  # 10 ms per step
        _row(old.name, "customer_returns", 36.0, 3),  # 12
        _row(old.name, "single_tool", 8.0, 2),  # 4
        _row(old.name, "single_tool", 99.0, 1, status="failed"),  # not a completed run
        _row(old.name, "single_tool", 99.0, 1, crashed=True),
        _row(old.name, "single_tool", 99.0, 1, phase="warmup"),
    ]
    statements = {t: measure_target(t).statements for t in old.adapter_code}
    rows = version_rows([old, new], probes, runs, [], statements)
    assert [r.model_dump(include={"line", "runs_unchanged", "error"}) for r in rows] == [
        {"line": "0.3", "runs_unchanged": False, "error": None},
        {
            "line": "1",
            "runs_unchanged": None,
            "error": "environment 'langchain-1' could not be built: no network",
        },
    ]
    first = rows[0]
    assert first.statements_changed == sum(statements.values()) > 0
    assert first.adapter_parts == ["agent_executor_from_langchain_agents"]
    assert first.deprecation_warnings == 1
    assert first.overhead_per_step_ms_by_scenario == {"customer_returns": 11.0, "single_tool": 4.0}
    assert first.overhead_per_step_ms == 7.5
    write(tmp_path / "versions.json", rows)
    assert read_versions(tmp_path) == rows
    assert read_versions(tmp_path / "nowhere") is None

    section = versions_section(rows)
    table = section.blocks[0]
    assert table.columns == COLUMNS
    assert [tuple(getattr(c, "text", c) for c in r) for r in table.rows] == [
        (
            "0.3",
            "0.3.30 / 0.3.86 / 2.54.0",
            "no (ModuleNotFoundError: No module named 'langchain_classic')",
            str(first.statements_changed),
            "1",
            fmt.ms(7.5),
            "–",
            "–",
        ),
        ("1", "–", "not measured", "0", "–", "–", "–", "–"),
    ]
    (note,) = versions_section([]).blocks
    assert isinstance(note, Note) and "No LangChain version matrix" in note.text
