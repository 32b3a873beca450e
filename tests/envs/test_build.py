"""Engine environments: declared in one place, built once, reused while their pins hold, and
a family whose environment cannot be built is skipped with its reason while the run goes on."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from bench.envs import build
from bench.envs.build import EnvironmentSpec, EnvironmentUnavailable, ensure, environments
from tests.runner.conftest import SCENARIO_DIR

BROKEN = "not a valid requirement ==="
REAL_SPEC_DIR = build.SPEC_DIR


@pytest.fixture
def spec_dir(tmp_path, monkeypatch) -> Path:
    """A private folder of environment declarations and a private build root."""
    specs = tmp_path / "specs"
    specs.mkdir()
    monkeypatch.setattr(build, "SPEC_DIR", specs)
    monkeypatch.setenv(build.ENV_VAR, str(tmp_path / "built"))
    return specs


def declare(spec_dir: Path, name: str, requirements: str, constraints: str = "") -> None:
    (spec_dir / name).mkdir()
    (spec_dir / name / "requirements.txt").write_text(requirements, encoding="utf-8")
    (spec_dir / name / "constraints.txt").write_text(constraints, encoding="utf-8")


def test_every_declared_environment_pins_its_framework_and_is_locked():
    declared = environments()
    assert {"openai-agents", "pydantic-ai", "llamaindex", "agno"} <= set(declared)
    assert {"langchain-0.1", "langchain-0.2", "langchain-0.3", "langchain-1"} <= set(declared)
    for spec in declared.values():
        pins = spec.pins()
        assert pins, spec.name
        locked = spec.constraints.read_text(encoding="utf-8")
        for name, version in pins.items():
            assert f"\n{name}=={version} \\\n" in locked, (spec.name, name)
        for core in ("httpx", "httpx2", "tiktoken", "pydantic", "jsonschema"):
            assert f"\n{core}==" in locked, (spec.name, core)


def test_every_locked_pin_carries_the_hashes_of_its_files():
    for spec in environments().values():
        lines = spec.constraints.read_text(encoding="utf-8").splitlines()
        pins = [i for i, line in enumerate(lines) if re.match(r"^[A-Za-z0-9][^ ]*==", line)]
        assert pins, spec.name
        unhashed = [
            lines[i] for i in pins if not lines[i + 1].lstrip().startswith("--hash=sha256:")
        ]
        assert unhashed == [], spec.name


def test_locking_asks_for_hashes_and_building_checks_them(spec_dir, monkeypatch):
    declare(spec_dir, "demo", "somepkg==1.0\n", "somepkg==1.0\n")
    spec = EnvironmentSpec("demo", spec_dir / "demo")
    _, commands = build._install_commands(spec, Path("/tmp/demo-env"))
    locked, project = commands[1], commands[2]
    assert "--require-hashes" in locked and ["-c", str(spec.constraints)] == locked[-2:]
    assert project[-3:] == ["--no-deps", "-e", str(build.PROJECT_ROOT)]  # no hash: no deps
    seen = []

    def compile_(command, **_):
        seen.append(command)
        spec.constraints.write_text("somepkg==1.0 \\\n    --hash=sha256:00\n", encoding="utf-8")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(build.subprocess, "run", compile_)
    monkeypatch.setattr(build, "PROJECT_ROOT", spec_dir.parent)
    build.lock("demo")
    assert "--generate-hashes" in seen[0]


def test_run_refuses_to_build_an_environment_unless_told(spec_dir, tmp_path, capsys, monkeypatch):
    """A run never touches the network unasked: a missing environment names make envs."""
    from bench.cli import main

    out = tmp_path / "run"
    args = ["run", "--engines", "raw,agno", "--scenario-dir", str(SCENARIO_DIR), "--out", str(out)]
    monkeypatch.setattr(build, "SPEC_DIR", REAL_SPEC_DIR)  # real declarations, empty build root
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "schedbench run: error: the engine environments agno are not built for their current "
        "pins: build them first with `make envs` (python -m bench.envs build), or pass "
        "--build-envs to let the run build them (it downloads packages)\n"
    )
    assert not out.exists()
    assert not build.is_built("agno")
    with pytest.raises(build.EnvironmentNotBuilt, match="make envs"):
        ensure("agno", build=False)


def test_the_fingerprint_moves_with_the_pins(spec_dir):
    declare(spec_dir, "demo", "somepkg==1.0\n", "somepkg==1.0\n")
    spec = EnvironmentSpec("demo", spec_dir / "demo")
    before = spec.fingerprint()
    assert spec.fingerprint() == before
    spec.constraints.write_text("somepkg==1.0\nother==2\n", encoding="utf-8")
    assert spec.fingerprint() != before


def test_a_broken_environment_raises_its_reason_and_leaves_nothing_half_built(spec_dir):
    declare(spec_dir, "broken", BROKEN + "\n")
    with pytest.raises(EnvironmentUnavailable) as caught:
        ensure("broken")
    assert caught.value.name == "broken"
    assert "not a valid requirement" in caught.value.reason or "===" in caught.value.reason
    built = Path(build.envs_root())
    assert not (built / "broken").exists()
    assert (built / "broken.build.log").read_text(encoding="utf-8").startswith("$ ")


def test_an_undeclared_environment_names_the_valid_ones(spec_dir):
    declare(spec_dir, "demo", "somepkg==1.0\n")
    with pytest.raises(EnvironmentUnavailable, match=re.escape("not declared (valid: main, demo)")):
        ensure("nope")


def test_a_built_environment_is_reused():
    first = ensure("agno")
    again = ensure("agno")
    assert again.reused and again.python == first.python
    assert again.fingerprint == first.fingerprint == build.environment_spec("agno").fingerprint()


def test_a_family_whose_environment_fails_is_skipped_and_the_run_goes_on(
    spec_dir, tmp_path, monkeypatch
):
    from bench.engines import registry
    from bench.results.store import RunStore
    from bench.runner.orchestrator import Orchestrator
    from bench.runner.plan import RunConfig
    from scenarios import load_scenarios

    declare(spec_dir, "broken", BROKEN + "\n")
    elsewhere = replace(registry.REGISTRY["raw"], name="raw-elsewhere", environment="broken")
    monkeypatch.setitem(registry.REGISTRY, "raw-elsewhere", elsewhere)
    config = RunConfig(
        engines=("raw", "raw-elsewhere"),
        scenarios=("customer_returns",),
        scenario_dir=str(SCENARIO_DIR),
        repeat=2,
        warmup=0,
        rounds=1,
        throughput=False,
        footprint=False,
        ttft=False,
        load=False,
    )
    store = RunStore(tmp_path / "run")
    store.create()
    with store:
        outcome = Orchestrator(config, load_scenarios(SCENARIO_DIR), store).run()
    rows = [json.loads(line) for line in store.path("runs.jsonl").read_text().splitlines()]
    by_engine = {
        engine: [(r["status"], r["termination"]) for r in rows if r["engine"] == engine]
        for engine in ("raw", "raw-elsewhere")
    }
    assert by_engine == {
        "raw": [("completed", "stop")] * 2,
        "raw-elsewhere": [("error", "env_unavailable")] * 2,
    }
    skipped = [r for r in rows if r["engine"] == "raw-elsewhere"]
    assert all(r["error"].startswith("environment 'broken' could not be built:") for r in skipped)
    assert all(r["crashed"] for r in skipped)  # --resume retries them once the pins are fixed
    assert outcome.environments["broken"]["status"] == "error"
    assert len(outcome.messages) == 1
    assert outcome.messages[0].startswith(
        "environment broken could not be built, so raw-elsewhere is skipped (the rest of the "
        "run goes on): "
    )


RACE = """
import json
import threading
from bench.envs.build import find_uv
barrier = threading.Barrier(8)
found = []
def one():
    barrier.wait()
    try:
        found.append(str(find_uv()))
    except Exception as exc:
        found.append(repr(exc))
threads = [threading.Thread(target=one) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(sorted(set(found))))
"""


@pytest.mark.subprocess
def test_builds_side_by_side_find_uv_in_a_fresh_process():
    """``python -m bench.envs build`` builds two at a time from a fresh interpreter, where
    the first read of ``sysconfig`` races (uv's finder saw ``EXE`` as None in one thread);
    eight threads at once all find the same executable."""
    done = subprocess.run(
        [sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120, check=True
    )
    found = json.loads(done.stdout)
    assert len(found) == 1 and "Error" not in found[0], found
