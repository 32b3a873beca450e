"""Runner tests: fake engines (tests/runner/fake_engines.py) on two small scenarios."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.engines.plugins import ENV_VAR

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCENARIO_DIR = HERE / "scenarios"
FAKES = "tests.runner.fake_engines"
EXTRA_ENGINES = ",".join(
    [
        f"raw={FAKES}:FakeRaw",  # the baseline, replaced by the minimal fake loop
        f"fake-slow={FAKES}:FakeSlow",
        f"fake-crash={FAKES}:FakeCrash",
        f"fake-hog={FAKES}:FakeHog",
        f"fake-wrong={FAKES}:FakeWrong",
        f"fake-failing={FAKES}:FakeFailing",
        "fake-broken=tests.runner.no_such_module:Nothing",  # cannot be imported
    ]
)


@pytest.fixture(autouse=True)
def fake_engines(monkeypatch):
    """Register the fakes for this process and the workers it starts."""
    monkeypatch.setenv(ENV_VAR, EXTRA_ENGINES)


def schedbench_env() -> dict[str, str]:
    env = dict(os.environ)
    env[ENV_VAR] = EXTRA_ENGINES
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def start_schedbench(*args: str, **kwargs) -> subprocess.Popen:
    """``schedbench ARGS`` in a child process (for tests that kill things mid-run)."""
    return subprocess.Popen(
        [sys.executable, "-m", "bench.cli", *args],
        cwd=ROOT,
        env={**schedbench_env(), **kwargs.pop("env", {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )
