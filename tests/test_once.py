"""``tests.once``: a module fixture's build runs once per session and reads back as built."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.once import Completed, once


def test_the_second_ask_reads_the_first_build(tmp_path_factory) -> None:
    built: list[Path] = []

    def build(folder: Path) -> dict:
        built.append(folder)
        (folder / "out").write_text("x")
        done = subprocess.run([sys.executable, "-c", "print('hi')"], capture_output=True, text=True)
        return {"out": folder / "out", "done": done, "pair": (1, "a")}

    first = once(tmp_path_factory, "test-once", build)
    second = once(tmp_path_factory, "test-once", build)
    assert len(built) == 1 and first == second
    assert first["out"].read_text() == "x"
    assert first["done"] == Completed([sys.executable, "-c", "print('hi')"], 0, "hi\n", "")
    assert first["pair"] == [1, "a"]  # JSON: a tuple reads back as a list


def test_a_failed_build_leaves_nothing_and_is_tried_again(tmp_path_factory) -> None:
    def broken(folder: Path) -> None:
        (folder / "half").write_text("written before the failure")
        raise AssertionError("the run failed")

    with pytest.raises(AssertionError, match="the run failed"):
        once(tmp_path_factory, "test-once-broken", broken)
    assert once(tmp_path_factory, "test-once-broken", lambda folder: sorted(folder.iterdir())) == []
