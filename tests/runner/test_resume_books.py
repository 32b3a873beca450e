"""A resumed run keeps its books: every segment's time summed, one "interrupted", sentences."""

from __future__ import annotations

import json
import subprocess
import sys

from bench.commands import run as run_command
from bench.results.store import RunStore
from bench.runner import orchestrator
from bench.runner.plan import RunConfig
from tests.results.folders import config, meta
from tests.runner.conftest import ROOT, SCENARIO_DIR, schedbench_env


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_interrupted_segments_add_their_time_and_say_so_once(tmp_path, monkeypatch, capsys):
    clock = _Clock()
    monkeypatch.setattr(run_command.time, "monotonic", clock)

    class Interrupted:
        def __init__(self, *args: object, **kwargs: object) -> None:
            pass

        def run(self) -> None:
            clock.now += 75.0  # the work done before Ctrl-C
            raise KeyboardInterrupt

    monkeypatch.setattr(orchestrator, "Orchestrator", Interrupted)
    store = RunStore(tmp_path / "run")
    store.create()
    store.write_meta(meta(duration_s=10.2, complete=False))
    for _ in range(2):
        code = run_command._execute(
            RunConfig.from_dict(config()), {}, store, resume=True, run_id="run"
        )
        assert code == 130
    assert json.loads((tmp_path / "run" / "meta.json").read_text())["duration_s"] == 160.2
    said = [line for line in capsys.readouterr().err.splitlines() if "--resume` continues" in line]
    assert said == [f"interrupted; `schedbench run --out {store.directory} --resume` continues"] * 2


def test_a_resume_error_names_the_stored_engines_as_typed(tmp_path):
    out = tmp_path / "run"
    store = RunStore(out)
    store.create()
    stored = config()
    stored["scenario_dir"] = str(SCENARIO_DIR)
    store.write_meta(meta(config=stored))
    done = subprocess.run(
        [sys.executable, "-m", "bench.cli", "run", "--resume", "--out", str(out),
         "--scenario-dir", str(SCENARIO_DIR), "--engines", "raw"],
        cwd=ROOT, env=schedbench_env(), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "schedbench run: error: --resume: --engines differs from the stored run "
        "(raw, scheduler); drop it, or start a new run with another --out"
    ]
