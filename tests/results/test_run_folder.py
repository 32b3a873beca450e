"""Run folders are untrusted input: meta.json checked, every row typed, corrupt lines counted.

A corrupt meta.json is one line naming the file and the reason, exit 2, in ``compare``,
``report`` and ``run --resume``; a corrupt runs.jsonl row is skipped with its line number,
and the count reaches compare's output, the report's caveats and the console summary.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from bench.cli import main
from bench.results.folder import BadMeta, Skipped, load_run_folder, read_meta, read_rows
from bench.results.rows import ConfigRecord
from bench.runner.plan import RunConfig
from tests.results.folders import meta, run_row, write_run

REFERENCE = Path(__file__).resolve().parents[2] / "reports" / "reference"


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run")


def _write_meta(run: Path, text: str) -> Path:
    path = run / "meta.json"
    path.write_text(text, encoding="utf-8")
    return path


CORRUPT_META = [
    ('{"schema_version": 1, "run_id": ', "not valid JSON (Expecting value at line 1 column 33)"),
    ("[1, 2]", "expected a JSON object, got list"),
    ('{"run_id": "x"}', "schema_version missing (not written by schedbench run)"),
    ('{"schema_version": 2}', "schema_version 2 is newer than this schedbench reads (1); upgrade"),
    ('{"schema_version": "2.1"}', "schema_version '2.1' is newer than this schedbench reads (1)"),
    ('{"schema_version": "beta"}', "schema_version 'beta' is not one this schedbench reads (1)"),
    ('{"schema_version": 1, "complete": "yes"}', "complete: Input should be a valid boolean"),
    ('{"schema_version": 1, "config": {"rounds": "5"}}', "config.rounds: Input should be a valid"),
    (
        '{"schema_version": 1, "config": {"engines": ["raw", 3]}}',
        "config.engines[1]: Input should be a valid string",
    ),
    ('{"schema_version": 1, "resumed_at": "today"}', "resumed_at: Input should be a valid list"),
]


@pytest.mark.parametrize(("text", "reason"), CORRUPT_META)
def test_a_corrupt_meta_json_is_one_line_naming_the_file(run, text, reason):
    path = _write_meta(run, text)
    with pytest.raises(BadMeta) as caught:
        read_meta(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: {reason}")
    assert "\n" not in message


def test_meta_that_is_not_utf8(run):
    path = run / "meta.json"
    path.write_bytes(b'{"schema_version": 1, "run_id": "\xff"}')
    with pytest.raises(BadMeta, match=r"meta\.json: not UTF-8 text$"):
        read_meta(path)


def test_a_stored_config_matches_the_runners_config():
    # the file schema of meta.json's config and RunConfig name the same fields
    assert set(ConfigRecord.model_fields) == {f.name for f in dataclasses.fields(RunConfig)}


def _one_error_line(capsys: pytest.CaptureFixture[str], command: str) -> str:
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"schedbench {command}: error: ")
    assert "Traceback" not in captured.err
    return lines[0]


@pytest.mark.parametrize(("text", "reason"), CORRUPT_META[:4])
def test_compare_report_and_resume_refuse_a_corrupt_meta_json(run, tmp_path, capsys, text, reason):
    path = _write_meta(run, text)
    good = write_run(tmp_path / "good")
    expected = f"{path}: {reason}"
    assert main(["compare", str(good), str(run)]) == 2
    assert expected in _one_error_line(capsys, "compare")
    assert main(["report", str(run), "--out", str(tmp_path / "out")]) == 2
    assert expected in _one_error_line(capsys, "report")
    assert main(["report", str(good), "--baseline", str(run), "--out", str(tmp_path / "o")]) == 2
    assert f"--baseline: {expected}" in _one_error_line(capsys, "report")
    assert main(["run", "--out", str(run), "--resume"]) == 2
    assert expected in _one_error_line(capsys, "run")


def test_resume_refuses_a_meta_json_without_config(run, capsys):
    _write_meta(run, json.dumps({"schema_version": 1}))
    assert main(["run", "--out", str(run), "--resume"]) == 2
    assert "meta.json: config missing (the run's options are unknown)" in _one_error_line(
        capsys, "run"
    )


def _corrupt_rows(run: Path) -> None:
    """Three corrupt lines among the valid ones: bad JSON, a wrong type, a torn last line."""
    path = run / "runs.jsonl"
    lines = path.read_text().splitlines()
    bad_type = json.dumps({**run_row("raw", "customer_returns", 1, 0.7), "wall_ms": "fast"})
    lines[3] = "{not json"  # was a timed row of raw on customer_returns
    lines[5] = bad_type  # another one
    torn = json.dumps(run_row("scheduler", "single_tool", 6, 12.0))[:40]
    path.write_text("\n".join(lines) + "\n" + torn)


def test_corrupt_rows_are_skipped_with_their_line_numbers(run):
    _corrupt_rows(run)
    read = read_rows(run / "runs.jsonl")
    assert read.skipped == [
        Skipped("runs.jsonl", 4, "Invalid JSON: key must be a string at line 1 column 2"),
        Skipped("runs.jsonl", 6, "wall_ms: Input should be a valid number"),
        Skipped(
            "runs.jsonl",
            29,
            "torn last line, a write cut short (Invalid JSON: EOF while parsing a string at "
            "line 1 column 40)",
        ),
    ]
    assert len(read.rows) == 28 - 2  # 4 warm-ups + 24 timed rows, two of them corrupt
    folder = load_run_folder(run)
    assert folder.skipped_summary() == (
        "3 corrupt rows skipped (runs.jsonl line 4: Invalid JSON: key must be a string at line "
        "1 column 2; runs.jsonl line 6: wall_ms: Input should be a valid number; runs.jsonl "
        "line 29: torn last line, a write cut short (Invalid JSON: EOF while parsing a string "
        "at line 1 column 40))"
    )


@pytest.mark.parametrize(
    ("row", "reason"),
    [
        ("[1, 2]", "Input should be an object"),
        ('{"engine": "raw"}', "scenario: Field required"),
        (
            json.dumps(run_row("raw", "customer_returns", 0, 1.0, phase="cooldown")),
            "phase: Input should be 'timed' or 'warmup'",
        ),
        (
            json.dumps(run_row("raw", "customer_returns", 0, 1.0, llm_calls=True)),
            "llm_calls: Input should be a valid integer",
        ),
        (
            json.dumps(run_row("raw", "customer_returns", 0, 1.0, request_prompt_tokens=[1, "x"])),
            "request_prompt_tokens[1]: Input should be a valid integer",
        ),
        (
            json.dumps(run_row("raw", "customer_returns", -1, 1.0, round=0)),
            "repeat: Input should be greater than or equal to 0",
        ),
    ],
)
def test_a_row_of_the_wrong_shape_is_skipped(tmp_path, row, reason):
    path = tmp_path / "runs.jsonl"
    good = json.dumps(run_row("raw", "customer_returns", 0, 1.0))
    path.write_text(f"{good}\n{row}\n\n{good}\n")
    read = read_rows(path)
    assert read.skipped == [Skipped("runs.jsonl", 2, reason)]
    assert len(read.rows) == 2


def test_compare_counts_the_skipped_rows(run, capsys):
    _corrupt_rows(run)
    assert main(["compare", str(run), str(run)]) == 0
    out = capsys.readouterr().out.splitlines()
    warning = f"Warning: {run}: 3 corrupt rows skipped (runs.jsonl line 4: "
    assert [line for line in out if line.startswith("Warning:")] == [
        line for line in out if line.startswith(warning)
    ]
    assert len([line for line in out if line.startswith(warning)]) == 2  # both runs
    # the two corrupt rows of raw on customer_returns are left out: median of 4 values
    assert "  raw:       715 µs -> 715 µs: no change (not significant) [p=1, n=4/4]" in out


def test_the_report_counts_the_skipped_rows_in_its_caveats(run, tmp_path, capsys):
    _corrupt_rows(run)
    out = tmp_path / "out"
    assert main(["report", str(run), "--out", str(out)]) == 0
    md = (out / "report.md").read_text(encoding="utf-8")
    caveats = md[md.index("## Caveats") :]
    assert (
        "- 3 corrupt rows skipped (runs.jsonl line 4: Invalid JSON: key must be a string at "
        "line 1 column 2; runs.jsonl line 6: wall_ms: Input should be a valid number; "
        "runs.jsonl line 29: torn last line, a write cut short (Invalid JSON: EOF while "
        "parsing a string at line 1 column 40)): left out of every number in this report."
    ) in caveats


def test_the_console_summary_of_a_resumed_run_counts_the_skipped_rows(run, capsys):
    # every planned run of the stored config has a row, except the two corrupt ones, which
    # --resume measures again... unless they are warm-ups: corrupt two warm-up lines only
    path = run / "runs.jsonl"
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["phase"] == json.loads(lines[7])["phase"] == "warmup"
    lines[0], lines[7] = "{torn", '{"engine": 5}'
    path.write_text("\n".join(lines) + "\n")
    assert main(["run", "--out", str(run), "--resume"]) == 0
    captured = capsys.readouterr()
    assert (
        "warning: 2 corrupt rows skipped (runs.jsonl line 1: Invalid JSON: key must be a "
        "string at line 1 column 2; runs.jsonl line 8: engine: Input should be a valid "
        "string); left out of every table"
    ) in captured.out.splitlines()
    assert "0 timed runs (24 measured before)" in captured.out


def test_the_reference_run_reads_without_a_skipped_row():
    # the typed rows describe what the runner really writes
    folder = load_run_folder(REFERENCE)
    assert folder.skipped == ()
    assert len(folder.timed_runs) > 1000 and folder.footprint and folder.throughput
    assert folder.ttft and folder.debuggability
    assert folder.meta["schema_version"] == meta()["schema_version"]


def test_the_report_into_an_unwritable_place_is_one_line(run, tmp_path, capsys):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    assert main(["report", str(run), "--out", str(blocked)]) == 2
    line = _one_error_line(capsys, "report")
    assert line == (f"schedbench report: error: --out {blocked}: cannot write there (File exists)")


def test_a_data_file_that_cannot_be_read_is_one_line(run, capsys):
    (run / "ttft.jsonl").mkdir()  # a directory where a file belongs
    assert main(["compare", str(run), str(run)]) == 2
    assert _one_error_line(capsys, "compare") == (
        f"schedbench compare: error: {run / 'ttft.jsonl'}: cannot be read "
        "(not a regular file (a directory))"
    )


def test_the_reference_run_was_made_from_a_clean_tree_with_every_phase():
    # the README quotes reports/reference: it must be reproducible from a commit
    folder = load_run_folder(REFERENCE)
    git = folder.meta.get("git") or {}
    assert git.get("dirty") is False, f"reports/reference was made from a dirty tree: {git}"
    assert len(str(git.get("sha", ""))) == 40
    assert folder.load and folder.profile and folder.catalogue and folder.multimodel
    assert folder.versions
