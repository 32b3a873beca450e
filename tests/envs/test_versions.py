"""The LangChain version matrix in the upgrade direction: the programs as each line's docs
wrote them, the measured fix sizes, the probe in each line's real environment, the table
(versions.json) and its report section."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from bench.engines.lc_versions import PROGRAMS, Edit
from bench.engines.registry import REGISTRY, VERSION_SCENARIOS, VERSION_SPECS
from bench.envs import ensure
from bench.errors import EnvironmentUnavailable
from bench.report.document import Note
from bench.report.versions_section import COST_COLUMNS, versions_section
from bench.results import fmt
from bench.results.folder import read_versions
from bench.results.rows import VersionProbe, VersionRow, line_key
from bench.results.versions import upgrade_histories, version_rows
from bench.results.versions import write_versions as write
from bench.runner.phases.version_probe import probe, statements_changed


def test_every_line_is_an_engine_of_its_own_environment_on_the_happy_paths():
    lines = [s.version_line for s in VERSION_SPECS]
    assert lines == ["0.1", "0.2", "0.3", "1"]
    for spec in VERSION_SPECS:
        assert spec.environment == f"langchain-{spec.version_line}"
        assert spec.scenarios == VERSION_SCENARIOS
        assert REGISTRY[spec.name] is spec


def test_every_program_is_a_file_and_every_fix_is_for_a_newer_line_and_parses():
    assert [p.line for p in PROGRAMS] == ["0.0", "0.1", "0.2", "0.3"]
    for program in PROGRAMS:
        assert program.path.name == "agent.py" and program.path.exists()
        compile(program.source(), str(program.path), "exec")
        for line in program.fixes:
            assert line_key(line) > line_key(program.line)
            fixed = program.source(line)
            assert fixed != program.source()
            compile(fixed, f"{program.path} fixed for {line}", "exec")


def test_a_fix_whose_text_is_not_in_the_program_names_the_file():
    program = dataclasses.replace(PROGRAMS[3], fixes={"1": (Edit("import nothing", "x"),)})
    with pytest.raises(ValueError, match=r"langchain-0\.3/agent\.py: fix for 1: 'import nothing'"):
        program.source("1")


@pytest.mark.parametrize(
    ("before", "after", "changed"),
    [
        ("import a\nx = 1\n", "import a\nx = 1\n", 0),
        ("import a\nx = 1\n", "import b\nx = 1\n", 1),  # one import rewritten
        ("import a\nx = 1\n", "import a\nimport c\nx = 1\n", 1),  # one added
        ("import a\nx = 1\n", "x = 1\n", 1),  # one removed
        ("x = (1 +\n     2)\n", "x = 1 + 2\n", 0),  # formatting is not a change
        ('def f():\n    "old doc"\n    return 1\n', 'def f():\n    "new doc"\n    return 1\n', 0),
        ("def f():\n    a = 1\n    return a\n", "def f():\n    a = 2\n    return a\n", 1),
        ("def f(x):\n    return x\n", "def f(y):\n    return x\n", 1),  # a header, not its body
        ("a = 1\nb = 2\n", "c = 1\nd = 2\ne = 3\nf = 4\n", 4),  # 2 replaced by 4
    ],
)
def test_statements_changed_counts_statements_not_lines(before, after, changed):
    assert statements_changed(before, after) == changed


def test_the_fixes_measure_as_their_edits_read():
    sizes = {
        (p.line, line): statements_changed(p.source(), p.source(line))
        for p in PROGRAMS
        for line in p.fixes
    }
    assert sizes == {
        ("0.0", "0.2"): 1,  # the chat model's import
        ("0.0", "0.3"): 1,
        ("0.0", "1"): 7,  # two imports, and the agent rebuilt: 2 + 1 + 4
        ("0.1", "1"): 2,  # AgentExecutor's import, the pydantic_v1 import
        ("0.2", "1"): 2,
        ("0.3", "1"): 1,  # AgentExecutor's import
    }


def _environment_python(line: str) -> str:
    try:
        return ensure(f"langchain-{line}").python
    except EnvironmentUnavailable as exc:
        pytest.skip(f"the LangChain {line} environment is absent: {exc}")


def _summary(found: VersionProbe) -> list[tuple]:
    """Each cell as (written for, ran, error's first line, LangChain deprecations, fix)."""
    out = []
    for cell in found.upgrades:
        fix = cell.fix
        summary = None if fix is None else (fix.ran, fix.statements, fix.packages, fix.error)
        error = cell.error.splitlines()[0] if cell.error else None
        out.append((cell.written_for, cell.ran, error, len(cell.deprecations), summary))
    return out


NO_COMMUNITY = "ModuleNotFoundError: No module named 'langchain_community'"
NO_EXECUTOR = "ImportError: cannot import name 'AgentExecutor' from 'langchain.agents'"
MATRIX = {
    # 0.0-idiom code on 0.1: initialize_agent, Chain.run and both ChatOpenAI deprecations
    "0.1": [("0.0", True, None, 4, None), ("0.1", True, None, 0, None)],
    "0.2": [
        ("0.0", False, NO_COMMUNITY, 0, (True, 1, ["langchain-openai"], None)),
        ("0.1", True, None, 0, None),
        ("0.2", True, None, 0, None),
    ],
    "0.3": [
        ("0.0", False, NO_COMMUNITY, 0, (True, 1, ["langchain-openai"], None)),
        ("0.1", True, None, 1, None),  # langchain.pydantic_v1
        ("0.2", True, None, 1, None),  # langchain_core.pydantic_v1
        ("0.3", True, None, 0, None),
    ],
    "1": [
        (
            "0.0",
            False,
            "ImportError: cannot import name 'AgentType' from 'langchain.agents'",
            0,
            (True, 7, ["langchain-classic", "langchain-core", "langchain-openai"], None),
        ),
        ("0.1", False, NO_EXECUTOR, 0, (True, 2, ["langchain-classic"], None)),
        ("0.2", False, NO_EXECUTOR, 0, (True, 2, ["langchain-classic"], None)),
        ("0.3", False, NO_EXECUTOR, 0, (True, 1, ["langchain-classic"], None)),
    ],
}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("line", list(MATRIX))
def test_older_lines_code_runs_unchanged_or_fails_with_a_measured_fix(line):
    name = f"lc-agentexecutor@{line}"
    found = VersionProbe.model_validate(probe(name, _environment_python(line)))
    assert (found.engine, found.line) == (name, line)
    pins = {"0.1": "0.1.20", "0.2": "0.2.17", "0.3": "0.3.30", "1": "1.5.2"}
    assert found.packages["langchain"] == pins[line]
    assert _summary(found) == MATRIX[line]


def _row(engine: str, scenario: str, overhead_ms: float, calls: int, **extra) -> SimpleNamespace:
    fields = {"phase": "timed", "status": "completed", "crashed": False} | extra
    return SimpleNamespace(
        engine=engine, scenario=scenario, overhead_ms=overhead_ms, llm_calls=calls, **fields
    )


def _cell(written_for: str, run_on: str, ran: bool, **extra) -> dict:
    return {"written_for": written_for, "run_on": run_on, "ran": ran} | extra


def _deprecation(message: str) -> dict:
    return {
        "category": "LangChainDeprecationWarning",
        "message": message,
        "where": "agent.py:3",
        "count": 1,
        "deprecation": True,
    }


PYDANTIC_V1 = "As of langchain-core 0.3.0, LangChain uses pydantic v2 internally."
FIXED = {
    "ran": True,
    "statements": 1,
    "edits": ["from langchain.agents import AgentExecutor → from langchain_classic.agents …"],
    "packages": ["langchain-classic"],
}


def _probes() -> dict:
    old, new = VERSION_SPECS[2], VERSION_SPECS[3]  # 0.3 and 1
    other = {
        "category": "PydanticDeprecatedSince20",
        "message": "The `dict` method is deprecated",
        "where": "langchain_core/tools/base.py:427",
        "count": 2,
        "deprecation": True,
    }
    return {
        old.name: VersionProbe.model_validate(
            {
                "engine": old.name,
                "line": "0.3",
                "packages": {"langchain": "0.3.30", "langchain-core": "0.3.86", "openai": "2.54.0"},
                "upgrades": [
                    _cell("0.2", "0.3", True, warnings=[_deprecation(PYDANTIC_V1), other]),
                    _cell("0.3", "0.3", True),
                ],
            }
        ),
        new.name: VersionProbe.model_validate(
            {
                "engine": new.name,
                "line": "1",
                "packages": {"langchain": "1.5.2", "langchain-core": "1.8.3", "openai": "3.57.0"},
                "upgrades": [
                    _cell("0.2", "1", False, error=f"{NO_EXECUTOR}\nmore", fix=FIXED),
                    _cell("0.3", "1", False, error=NO_EXECUTOR, fix=FIXED),
                ],
            }
        ),
    }


def test_the_table_joins_the_probes_and_todays_per_step_cost(tmp_path):
    old, new = VERSION_SPECS[2], VERSION_SPECS[3]
    probes = {**_probes(), VERSION_SPECS[0].name: "environment 'langchain-0.1' could not be built"}
    runs = [
        _row(old.name, "customer_returns", 30.0, 3),  # 10 ms per step
        _row(old.name, "customer_returns", 36.0, 3),  # 12
        _row(old.name, "single_tool", 8.0, 2),  # 4
        _row(old.name, "single_tool", 99.0, 1, status="failed"),  # not a completed run
        _row(old.name, "single_tool", 99.0, 1, crashed=True),
        _row(old.name, "single_tool", 99.0, 1, phase="warmup"),
        _row(new.name, "customer_returns", 15.0, 3),  # 5
    ]
    rows = version_rows([VERSION_SPECS[0], old, new], probes, runs, [])
    assert [(r.line, r.error, len(r.upgrades)) for r in rows] == [
        ("0.1", "environment 'langchain-0.1' could not be built", 0),
        ("0.3", None, 2),
        ("1", None, 2),
    ]
    assert rows[1].overhead_per_step_ms_by_scenario == {
        "customer_returns": 11.0,
        "single_tool": 4.0,
    }
    assert rows[1].overhead_per_step_ms == 7.5
    write(tmp_path / "versions.json", rows)
    assert read_versions(tmp_path) == rows
    assert read_versions(tmp_path / "nowhere") is None

    histories = upgrade_histories(rows)
    assert [(h.written_for, [c.run_on for c in h.cells]) for h in histories] == [
        ("0.2", ["0.3", "1"]),
        ("0.3", ["0.3", "1"]),
    ]
    first = histories[0]
    assert (first.first_break.run_on, first.before_break.run_on) == ("1", "0.3")
    assert len(first.before_break.deprecations) == 1  # pydantic's own is not LangChain's

    section = versions_section(rows)
    upgrades, facts, cost, cost_facts = section.blocks
    assert upgrades.columns == ("written for", "runs on 0.1", "runs on 0.3", "runs on 1")
    broken = "fails: " + NO_EXECUTOR + "; fix: 1 statement + langchain-classic"
    assert [tuple(getattr(c, "text", c) for c in r) for r in upgrades.rows] == [
        ("0.2 docs", "not measured", "runs, 1 deprecation warning", broken),
        ("0.3 docs", "not measured", "runs", broken),
    ]
    texts = ["".join(getattr(s, "text", s) for s in p.spans) for p in facts.items]
    assert texts[0] == (
        f"Code written for 0.2 runs on 0.3 with 1 deprecation warning and fails on 1 "
        f"({NO_EXECUTOR}); no warning on 0.3 named it; the fix is 1 statement + "
        f"langchain-classic: {FIXED['edits'][0]}."
    )
    assert texts[1].startswith("Code written for 0.3 runs on 0.3 with 0 deprecation warnings")
    assert (
        texts[2] == "LangChain 0.1: not measured — environment 'langchain-0.1' could not be built"
    )
    assert texts[3] == f"LangChainDeprecationWarning (0.2 code on 0.3): {PYDANTIC_V1}"
    assert cost.columns == COST_COLUMNS
    assert [tuple(r) for r in cost.rows] == [
        ("0.1", "–", "–", "–", "–"),
        ("0.3", "0.3.30 / 0.3.86 / 2.54.0", fmt.ms(7.5), "–", "–"),
        ("1", "1.5.2 / 1.8.3 / 3.57.0", fmt.ms(5.0), "–", "–"),
    ]
    assert "back-ported" in cost.caption
    assert [p.spans for p in cost_facts.items] == [
        (
            f"Today's baseline costs {fmt.ms(7.5)} per step on 0.3 and {fmt.ms(5.0)} on 1 "
            "(1.50× the time per step of the newest line).",
        )
    ]
    (note,) = versions_section([]).blocks
    assert isinstance(note, Note) and "No LangChain version matrix" in note.text


def _history(before: list[dict], error: str):
    rows = [
        VersionRow(
            line=line,
            engine=f"e{line}",
            environment=f"langchain-{line}",
            packages={},
            upgrades=[_cell("0.0", line, ran, **extra)],
        )
        for line, ran, extra in (
            ("0.1", True, {"warnings": before}),
            ("0.2", False, {"error": error}),
        )
    ]
    (history,) = upgrade_histories(rows)
    return history


def test_a_break_is_announced_only_by_a_warning_that_names_what_broke():
    community = (
        "Importing chat models from langchain is deprecated. Please import from langchain-community"
    )
    assert _history([_deprecation(community)], NO_COMMUNITY).announced is True
    assert _history([_deprecation(PYDANTIC_V1)], NO_COMMUNITY).announced is False
    assert _history([], NO_COMMUNITY).announced is False
    other = _deprecation(community) | {"category": "PydanticDeprecatedSince20"}
    assert _history([other], NO_COMMUNITY).announced is False  # not LangChain's own warning
    history = _history([], NO_COMMUNITY)
    assert (history.first_break.run_on, history.before_break.run_on) == ("0.2", "0.1")


LEGACY_ROW = (
    '{"line": "0.3", "engine": "e", "environment": "x", "packages": {"openai": "1.2"}, '
    '"runs_unchanged": false, "unchanged_error": "ImportError: x", "runs_adapted": true, '
    '"statements_changed": 5, "adapter_parts": ["shim"], "deprecation_warnings": 0, '
    '"warnings": [], "unchanged_warnings": [], "overhead_per_step_ms": 6.5, '
    '"overhead_per_step_ms_by_scenario": {"s": 6.5}, "import_ms": 800.0, '
    '"import_modules": 1500.0, "peak_rss_mb": 150.0, "error": null}'
)


def test_a_legacy_table_reads_as_the_back_port_direction_with_no_upgrade_measured(tmp_path):
    (tmp_path / "versions.json").write_text(f'{{"versions": [{LEGACY_ROW}]}}', encoding="utf-8")
    (row,) = read_versions(tmp_path)
    assert row.model_dump() == {
        "line": "0.3",
        "engine": "e",
        "environment": "x",
        "packages": {"openai": "1.2"},
        "upgrades": [],
        "overhead_per_step_ms": 6.5,
        "overhead_per_step_ms_by_scenario": {"s": 6.5},
        "import_ms": 800.0,
        "import_modules": 1500.0,
        "peak_rss_mb": 150.0,
        "error": None,
        "reused_from": None,
        "backport": {
            "runs_unchanged": False,
            "unchanged_error": "ImportError: x",
            "runs_adapted": True,
            "adapted_error": None,
            "statements_changed": 5,
            "adapter_parts": ["shim"],
            "deprecation_warnings": 0,
            "warnings": [],
            "unchanged_warnings": [],
        },
    }
    write(tmp_path / "again.json", [row])  # the writer writes the upgrade direction only
    assert "backport" not in (tmp_path / "again.json").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "rows",
    [
        f'[{LEGACY_ROW}, {{"line": "1", "engine": "f", "environment": "y", "packages": {{}}, '
        '"upgrades": []}]',
        LEGACY_ROW.replace('"error": null}', '"error": null, "surprise": 1}').join("[]"),
        '[{"line": "0.3", "engine": "e", "environment": "x", "packages": {}, '
        '"runs_unchanged": false}]',
    ],
    ids=["legacy-mixed-with-upgrade-rows", "legacy-unknown-field", "legacy-missing-field"],
)
def test_a_table_that_is_neither_format_is_refused_with_the_file_named(tmp_path, rows):
    (tmp_path / "versions.json").write_text(f'{{"versions": {rows}}}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"^versions\.json: not a version table"):
        read_versions(tmp_path)
    assert VersionRow.model_fields.keys() >= {"upgrades", "overhead_per_step_ms"}
