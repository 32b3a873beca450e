"""Hostile input, tried the way an honest tester would: every case ends in one clear line and
exit code 2 (or, for the mock, an OpenAI-style JSON error) within seconds, without a traceback.

Commands run as real child processes (``python -m bench.cli``), so exit codes, stderr and
timing are what a user sees.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# generous: only a hang (an alias bomb, a stalled read) gets anywhere near it
HANG_S = 30.0

GOOD = """\
name: {name}
description: A valid neighbour of the hostile file.
user: What is the weather in Paris?
tools:
  - name: get_weather
    description: Current weather for a city.
    parameters:
      type: object
      properties:
        city: {{type: string}}
      required: [city]
    behavior:
      returns: {{city: Paris, temperature: 14}}
script:
  - tool_calls: [{{name: get_weather, args: {{city: Paris}}}}]
  - content: It is 14 degrees in Paris.
expect:
  status: completed
  llm_calls: 2
  tool_calls: 1
"""


def good(name: str) -> str:
    """A valid scenario file's text, named ``name``."""
    return GOOD.format(name=name)


@dataclass(frozen=True)
class Done:
    """A finished command: what the user saw."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def error_lines(self) -> list[str]:
        return self.stderr.strip().splitlines()


def schedbench(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, user: int | None = None
) -> Done:
    """``schedbench ARGS`` in a child process (as ``user`` when given: see ``unprivileged``)."""
    command = [sys.executable, "-m", "bench.cli", *args]
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    if user is not None:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
        environment["HOME"] = environment["MPLCONFIGDIR"] = tempfile.mkdtemp()
        os.chown(environment["HOME"], user, user)
    started = time.monotonic()
    try:
        done = subprocess.run(
            command,
            cwd=cwd or ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=HANG_S * 4,
        )
    finally:
        if user is not None:
            shutil.rmtree(environment["HOME"], ignore_errors=True)
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def refused(done: Done, command: str, message: str) -> str:
    """Assert the usage-error shape: exit 2, one line ``schedbench COMMAND: error: ...``
    containing ``message``, no traceback, within seconds. Returns the line."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(done.error_lines) == 1, done.stderr
    line = done.error_lines[0]
    assert line.startswith(f"schedbench {command}: error: "), line
    assert message in line, line
    assert done.seconds < HANG_S
    return line


def invalid(done: Done, lines: list[str]) -> None:
    """Assert ``scenarios validate``'s shape: exactly these lines on stdout, exit 2, quickly."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.stdout.splitlines() == lines
    assert done.returncode == 2
    assert done.seconds < HANG_S


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """An empty scenario folder."""
    path = tmp_path / "scenarios"
    path.mkdir()
    return path


NOBODY = 65534


@dataclass(frozen=True)
class Unprivileged:
    """A world-readable place, a directory in it nobody may write to, and the uid to run
    commands as (None: ourselves)."""

    base: Path
    locked: Path
    user: int | None


@pytest.fixture
def unprivileged() -> Iterator[Unprivileged]:
    """Root writes through any permission bits, so as root the commands run as ``nobody``
    (``setpriv``) in a world-readable temporary directory; otherwise as ourselves."""
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot drop the rights to test this")
    base = Path(tempfile.mkdtemp(prefix="schedbench-hostile-"))
    base.chmod(0o755)
    locked = base / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        yield Unprivileged(base, locked, NOBODY if os.geteuid() == 0 else None)
    finally:
        locked.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)
