"""Expensive module fixtures computed once per test session, whichever test process asks first.

pytest-xdist hands a module's tests to whichever worker is free (``--dist worksteal``), and a
module-scoped fixture runs in every worker that got one of them: a whole ``schedbench run``,
or a cluster's, computed up to three times. ``once`` computes it in the first worker that asks;
the others wait for it (a file lock in the session's shared temporary folder) and read its
result back. Results are JSON, so a fixture returns paths and ``Completed`` processes.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True)
class Completed:
    """What a test reads of a finished ``subprocess.run`` (JSON round trip)."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @classmethod
    def of(cls, done: subprocess.CompletedProcess[str]) -> Completed:
        return cls([str(a) for a in done.args], done.returncode, done.stdout, done.stderr)


def _shared_root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once(factory: pytest.TempPathFactory, key: str, build: Callable[[Path], Any]) -> Any:
    """``build(folder)`` (an empty folder of its own) once per session: its JSON result.

    A build that raises leaves nothing behind: the next process to ask builds again (and
    fails alike, with its own error)."""
    root = _shared_root(factory)
    folder = root / f"once-{key}"
    result = root / f"once-{key}.json"
    with (root / f"once-{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if result.exists():
            return _decode(json.loads(result.read_text()))
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        try:
            value = build(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        result.write_text(json.dumps(_encode(value)))
        return _decode(json.loads(result.read_text()))


def _encode(value: Any) -> Any:
    if isinstance(value, Path):
        return {"__path__": str(value)}
    if isinstance(value, subprocess.CompletedProcess):
        value = Completed.of(value)
    if isinstance(value, Completed):
        return {"__completed__": asdict(value)}
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__path__"}:
            return Path(value["__path__"])
        if set(value) == {"__completed__"}:
            return Completed(**value["__completed__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value
