"""meta.json's git state: the run's own output folder does not make the tree dirty."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.runner import metadata


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "reports" / "reference").mkdir(parents=True)
    (tmp_path / "reports" / "reference" / "report.md").write_text("old\n")
    git("add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    monkeypatch.setattr(metadata, "PROJECT_ROOT", tmp_path)
    return tmp_path


def test_replacing_the_output_folder_is_not_a_dirty_tree(repo: Path) -> None:
    (repo / "reports" / "reference" / "report.md").unlink()  # make bench's rm -rf
    assert metadata.git_state(repo / "reports" / "reference")["dirty"] is False
    assert metadata.git_state()["dirty"] is True  # without the folder named, it is dirty
    assert len(metadata.git_state()["sha"]) == 40


def test_a_changed_source_file_is_dirty_whatever_the_output(repo: Path) -> None:
    (repo / "code.py").write_text("x = 2\n")
    assert metadata.git_state(repo / "reports" / "reference")["dirty"] is True
    assert metadata.git_state(Path("/elsewhere/run"))["dirty"] is True
