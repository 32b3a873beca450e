"""A run folder is untrusted input for ``schedbench report``: links and special files in it.

Outputs are never written through a symbolic link (attack 6 of issue 26): a ``report.md``
link is replaced by the report, its target untouched; a ``charts`` link is refused. Only
regular files of bounded size are read, arrays are bounded, seeds and timings checked
(attack 9).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from bench.cli import main
from bench.results.folder import load_run_folder
from tests.results.folders import run_row, write_run


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(tmp_path / "run")


def test_a_report_md_link_is_replaced_not_followed(run, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (run / "report.md").symlink_to(victim)
    (run / "report.html").symlink_to(victim)
    assert main(["report", str(run)]) == 0
    assert victim.read_text() == "precious\n"
    for name in ("report.md", "report.html"):
        assert not (run / name).is_symlink()
        assert (run / name).read_text(encoding="utf-8").startswith(("# schedbench", "<!DOCTYPE"))
    assert [p.name for p in run.iterdir() if p.name.endswith(".tmp")] == []


def test_a_charts_link_is_refused_and_its_target_gets_nothing(run, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run / "charts").symlink_to(elsewhere, target_is_directory=True)
    assert main(["report", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"schedbench report: error: cannot write the report: {run / 'charts'}: is a symbolic "
        "link; refusing to write through it"
    ]
    assert list(elsewhere.iterdir()) == []


def test_a_chart_file_link_is_replaced_not_followed(run, tmp_path, capsys):
    victim = tmp_path / "victim.png"
    victim.write_bytes(b"precious")
    (run / "charts").mkdir()
    (run / "charts" / "latency.png").symlink_to(victim)
    assert main(["report", str(run)]) == 0
    assert victim.read_bytes() == b"precious"
    assert not (run / "charts" / "latency.png").is_symlink()


# -- special files and hostile values (attack 9 of issue 26) ---------------------------------


def _in_a_thread(args: list[str]) -> int:
    """``main(args)``; a reader blocked for good (a FIFO) fails the test instead of hanging it."""
    done = threading.Event()
    result: list[int] = []

    def target() -> None:
        result.append(main(args))
        done.set()

    threading.Thread(target=target, daemon=True).start()
    assert done.wait(120), f"schedbench {' '.join(args)} is blocked"
    return result[0]


def test_a_fifo_meta_json_is_refused_not_waited_for(run, capsys):
    (run / "meta.json").unlink()
    os.mkfifo(run / "meta.json")
    assert _in_a_thread(["report", str(run)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"schedbench report: error: {run / 'meta.json'}: cannot be read "
        "(not a regular file (a FIFO))"
    ]


def test_a_jsonl_linked_to_a_device_is_refused(run, capsys):
    # /dev/zero would fill the memory of a reader that reads to the end
    (run / "load.jsonl").symlink_to("/dev/zero")
    assert main(["compare", str(run), str(run)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"schedbench compare: error: {run / 'load.jsonl'}: cannot be read "
        "(not a regular file (a character device))"
    ]


def test_versions_json_as_a_directory_is_left_out_with_its_reason(run):
    (run / "versions.json").mkdir()
    folder = load_run_folder(run)
    assert folder.versions is None
    assert [str(s) for s in folder.skipped] == [
        "versions.json: versions.json: cannot be read (not a regular file (a directory)): "
        "file left out"
    ]


def test_a_negative_seed_is_one_line_not_a_numpy_traceback(run, capsys):
    data = json.loads((run / "meta.json").read_text())
    data["config"]["seed"] = -1
    (run / "meta.json").write_text(json.dumps(data))
    assert main(["report", str(run)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"schedbench report: error: {run / 'meta.json'}: config.seed: Input should be greater "
        "than or equal to 0"
    ]


def _append(run: Path, row: dict) -> int:
    """Append a runs.jsonl line; its line number."""
    path = run / "runs.jsonl"
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    return len(path.read_text(encoding="utf-8").splitlines())


def test_an_unbounded_per_request_array_is_a_corrupt_row(run):
    row = run_row("raw", "customer_returns", 9, 0.7, request_prompt_tokens=[100] * 300_000)
    line = _append(run, row)
    assert [str(s) for s in load_run_folder(run).skipped] == [
        f"runs.jsonl line {line}: request_prompt_tokens: Tuple should have at most 10000 items "
        "after validation, not 300000"
    ]


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_timings_are_refused_with_file_line_and_reason(run, capsys, number):
    text = json.dumps(run_row("raw", "customer_returns", 9, 1.0)).replace(
        '"wall_ms": 1.0', f'"wall_ms": {number}'
    )
    path = run / "runs.jsonl"
    with path.open("a", encoding="utf-8") as f:
        f.write(text + "\n")
    line = len(path.read_text(encoding="utf-8").splitlines())
    assert main(["compare", str(run), str(run)]) == 0
    out = capsys.readouterr().out
    assert (
        f"Warning: {run}: 1 corrupt row skipped (runs.jsonl line {line}: wall_ms: Input should "
        "be a finite number)"
    ) in out
