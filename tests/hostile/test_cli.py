"""Hostile command lines: numbers past any machine, unwritable folders, paths typed once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.conftest import good, refused, schedbench

QUICK = ("--engines", "raw", "--no-throughput", "--no-footprint", "--no-ttft", "--no-load")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--repeat", "1000000000", "--repeat must be between 1 and 10,000, not 1,000,000,000"),
        ("--repeat", "0", "--repeat must be between 1 and 10,000, not 0"),
        ("--rounds", "100000000", "--rounds must be between 1 and 100, not 100,000,000"),
        ("--warmup", "1000000000", "--warmup must be between 0 and 1,000, not 1,000,000,000"),
        ("--seed", "-1", "--seed must be between 0 and 4,294,967,295, not -1"),
        (
            "--concurrency",
            "1,100000000",
            "--concurrency: every level must be between 1 and 1,000 (got '1,100000000')",
        ),
        (
            "--concurrency",
            ",".join(map(str, range(1, 13))),
            "--concurrency: at most 10 levels, not 12",
        ),
    ],
)
def test_run_numbers_are_bounded_before_a_folder_is_made(tmp_path, option, value, message):
    out = tmp_path / "out"
    refused(schedbench("run", *QUICK, option, value, "--out", str(out)), "run", message)
    assert not out.exists()


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["debug-score", "--cost-runs", "1000000000"], "--cost-runs must be between 0 and 1,000"),
        (
            ["trace", "single_tool", "--engine", "raw", "--width", "100000000"],
            "--width must be between 40 and 1,000",
        ),
        (["mock", "serve", "--max-body-mb", "0"], "--max-body-mb must be between 1 and 1,024"),
        (["mock", "serve", "--request-timeout", "0"], "--request-timeout must be between 0.1"),
    ],
)
def test_other_numbers_are_bounded(tmp_path, command, message):
    refused(schedbench(*command, cwd=tmp_path), command[0], message)


# -- unwritable folders --------------------------------------------------------------------


def test_run_into_an_unwritable_out_is_one_line(unprivileged):
    done = schedbench(
        "run", *QUICK, "--quick", "--out", str(unprivileged.locked), user=unprivileged.user
    )
    refused(done, "run", f"--out {unprivileged.locked}: cannot write there (Permission denied)")


def test_run_into_a_folder_below_an_unwritable_one_is_one_line(unprivileged):
    out = unprivileged.locked / "run"
    done = schedbench("run", *QUICK, "--quick", "--out", str(out), user=unprivileged.user)
    refused(done, "run", f"--out {out}: cannot write there (Permission denied)")


def test_new_scenario_in_an_unwritable_folder_is_one_line(unprivileged):
    done = schedbench(
        "scenarios",
        "new",
        "mine",
        "--scenario-dir",
        str(unprivileged.locked),
        user=unprivileged.user,
    )
    target = unprivileged.locked / "mine.yaml"
    refused(done, "scenarios", f"cannot write {target} (Permission denied)")


def test_run_under_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "run"
    refused(
        schedbench("run", *QUICK, "--quick", "--out", str(out)),
        "run",
        f"--out {out}: cannot write there (Not a directory)",
    )


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished run (raw engine, one scenario) to resume and report on."""
    out = tmp_path_factory.mktemp("run") / "run"
    done = schedbench(*RUN_ONE, "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


RUN_ONE = ("run", *QUICK, "--scenarios", "single_tool", "--repeat", "2", "--rounds", "1")


def _locked_copy(run: Path, unprivileged) -> Path:
    import shutil

    copy = unprivileged.base / "run"
    shutil.copytree(run, copy)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    return copy


def test_resume_into_an_unwritable_run_is_one_line(finished_run, unprivileged):
    copy = _locked_copy(finished_run, unprivileged)
    done = schedbench("run", "--out", str(copy), "--resume", user=unprivileged.user)
    refused(done, "run", f"--out {copy}: cannot write there (Permission denied)")


def test_report_into_an_unwritable_run_is_one_line(finished_run, unprivileged):
    copy = _locked_copy(finished_run, unprivileged)
    done = schedbench("report", str(copy), user=unprivileged.user)
    refused(
        done,
        "report",
        f"RUN_DIR {copy}: cannot write there (Permission denied); write the report elsewhere "
        "with --out DIR",
    )
    done = schedbench(
        "report", str(copy), "--out", str(unprivileged.locked), user=unprivileged.user
    )
    refused(done, "report", f"--out {unprivileged.locked}: cannot write there (Permission denied)")


# -- a scenario folder typed once ----------------------------------------------------------


def test_a_relative_scenario_dir_is_stored_resolved_and_reused(tmp_path):
    mine = tmp_path / "work" / "my-scenarios"
    mine.mkdir(parents=True)
    (mine / "custom_weather.yaml").write_text(good("custom_weather"))
    out = tmp_path / "run"
    done = schedbench(
        "run", *QUICK, "--scenario-dir", "my-scenarios", "--repeat", "2", "--rounds", "2",
        "--out", str(out), cwd=tmp_path / "work",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["config"]["scenario_dir"] == str(mine)
    # drop round 2 and resume from elsewhere, without typing the folder again
    rows = (out / "runs.jsonl").read_text().splitlines()
    kept = [row for row in rows if json.loads(row)["round"] == 0]
    (out / "runs.jsonl").write_text("\n".join(kept) + "\n")
    done = schedbench("run", "--out", str(out), "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "1 timed runs (1 measured before)" in done.stdout
    rows = [json.loads(row) for row in (out / "runs.jsonl").read_text().splitlines()]
    assert sorted((r["round"], r["repeat"]) for r in rows if r["phase"] == "timed") == [
        (0, 0),
        (1, 1),
    ]
    # the report, from yet another directory, still finds the scenario's description
    done = schedbench("report", str(out), cwd=ROOT_OTHER)
    assert done.returncode == 0, done.stderr
    assert "A valid neighbour of the hostile file." in (out / "report.md").read_text()


ROOT_OTHER = Path("/")
