"""A run folder is untrusted input for ``schedbench report``: links and special files in it.

Outputs are never written through a symbolic link (attack 6 of issue 26): a ``report.md``
link is replaced by the report, its target untouched; a ``charts`` link is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.cli import main
from tests.results.folders import write_run


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
