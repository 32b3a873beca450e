"""Declared environments, and building / reusing / locking their virtualenvs (see the package)."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import PROJECT_ROOT
from bench.errors import EnvironmentUnavailable

MAIN = "main"
RECIPE = 3  # bump when the way an environment is built changes: every one is rebuilt
ENV_VAR = "SCHEDBENCH_ENVS_DIR"
SPEC_DIR = Path(__file__).resolve().parent

STAMP = "schedbench-env.json"
BUILD_TIMEOUT_S = 1200.0
_TAIL_LINES = 20

_PACKAGES = (
    "import importlib.metadata as m, json; "
    "print(json.dumps(sorted({d.metadata['Name']: d.version for d in m.distributions()}.items())))"
)


class EnvironmentNotBuilt(EnvironmentUnavailable):
    """An environment that is not built for its current pins, and building was not allowed
    (``schedbench run`` without ``--build-envs``: a run never touches the network)."""

    def __init__(self, name: str):
        super().__init__(name, f"it is not built for its current pins ({BUILD_HINT})")
        self.args = (f"environment {name!r} is not built for its current pins ({BUILD_HINT})",)


BUILD_HINT = "build it with `make envs`, or let the command build it with --build-envs"


@dataclass(frozen=True)
class EnvironmentSpec:
    """One declared environment: ``bench/envs/<name>/requirements.txt`` + ``constraints.txt``."""

    name: str
    directory: Path

    @property
    def requirements(self) -> Path:
        return self.directory / "requirements.txt"

    @property
    def constraints(self) -> Path:
        return self.directory / "constraints.txt"

    def pins(self) -> dict[str, str]:
        """The framework's own pins (``name==version`` lines of requirements.txt)."""
        pins: dict[str, str] = {}
        for line in self.requirements.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            name, sep, version = line.partition("==")
            if sep:
                pins[name.split("[", 1)[0].strip()] = version.strip()
        return pins

    def fingerprint(self) -> str:
        """What the built environment depends on; a change to any part rebuilds it."""
        digest = hashlib.sha256()
        parts = [
            f"recipe {RECIPE}",
            f"python {platform.python_version()} {sys.implementation.name}",
            json.dumps(core_dependencies()),
        ]
        for path in (self.requirements, self.constraints):
            parts.append(path.read_text(encoding="utf-8") if path.exists() else "")
        for part in parts:
            digest.update(part.encode("utf-8") + b"\0")
        return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Environment:
    """A built (or reused) environment: the interpreter its workers run."""

    name: str
    python: str
    fingerprint: str = ""
    reused: bool = True
    build_s: float = 0.0
    tool: str = ""

    def meta(self) -> dict[str, Any]:
        """What meta.json records of it: how it was built and every package in it."""
        return {
            "python": self.python,
            "fingerprint": self.fingerprint,
            "reused": self.reused,
            "build_s": round(self.build_s, 1),
            "tool": self.tool,
            "packages": installed_packages(self.python),
        }


def core_dependencies() -> list[str]:
    """The project's core dependencies (pyproject ``[project] dependencies``)."""
    with (PROJECT_ROOT / "pyproject.toml").open("rb") as fh:
        return list(tomllib.load(fh)["project"]["dependencies"])


def environments() -> dict[str, EnvironmentSpec]:
    """Every declared environment, by name (each folder here with a requirements.txt)."""
    return {
        path.parent.name: EnvironmentSpec(path.parent.name, path.parent)
        for path in sorted(SPEC_DIR.glob("*/requirements.txt"))
    }


def environment_spec(name: str) -> EnvironmentSpec:
    declared = environments()
    if name not in declared:
        valid = ", ".join([MAIN, *declared])
        raise EnvironmentUnavailable(name, f"it is not declared (valid: {valid})")
    return declared[name]


def envs_root() -> Path:
    """Where environments are built: ``$SCHEDBENCH_ENVS_DIR``, else ``<project>/.envs``."""
    return Path(os.environ.get(ENV_VAR) or PROJECT_ROOT / ".envs")


def base_python() -> str:
    """The interpreter environments are made from: the one under the main virtualenv."""
    return getattr(sys, "_base_executable", None) or sys.executable


_FIND_UV_LOCK = threading.Lock()


@functools.cache
def _find_uv() -> str | None:
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def find_uv() -> str | None:
    """The uv executable (the ``uv`` package's, else on PATH), or None. Found once, under a
    lock: ``find_uv_bin`` reads ``sysconfig``, whose first read is not thread-safe (two
    builds at once saw ``EXE`` as None and failed)."""
    with _FIND_UV_LOCK:
        return _find_uv()


def installed_packages(python: str) -> dict[str, str]:
    """Every distribution installed for ``python``: name → version."""
    done = subprocess.run(
        [python, "-c", _PACKAGES], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        return {}
    return dict(json.loads(done.stdout))


def _python_in(target: Path) -> Path:
    return target / "bin" / "python"


def _read_stamp(target: Path) -> dict[str, Any]:
    try:
        return json.loads((target / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[None]:
    """One builder per environment at a time (two runs, or a run and the tests)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _uv_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("VIRTUAL_ENV", None)  # --python names the target; never the caller's venv
    env["UV_PYTHON_DOWNLOADS"] = "never"
    env["UV_NO_PROGRESS"] = "1"
    return env


def _install_commands(spec: EnvironmentSpec, target: Path) -> tuple[str, list[list[str]]]:
    """The tool's name and the commands that create ``target`` and install into it: the
    framework and the project's core dependencies from the lock, every file checked against
    its hash (``--require-hashes``), then the project itself (a local folder has no hash)
    without dependencies."""
    python = str(_python_in(target))
    locked = ["--require-hashes", "-r", str(spec.requirements)]
    locked += ["-r", str(PROJECT_ROOT / "pyproject.toml"), "-c", str(spec.constraints)]
    project = ["--no-deps", "-e", str(PROJECT_ROOT)]
    uv = find_uv()
    if uv is not None:
        version = subprocess.run([uv, "--version"], capture_output=True, text=True).stdout
        install = [uv, "pip", "install", "--quiet", "--python", python]
        return version.strip() or "uv", [
            [uv, "venv", "--quiet", "--python", base_python(), str(target)],
            # compiled on install, as pip does: a first import must not pay for it
            [*install, "--compile-bytecode", *locked],
            [*install, *project],
        ]
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    return "venv + pip", [
        [base_python(), "-m", "venv", str(target)],
        # the lock holds the requirements and the core dependencies, each with its hashes
        [*pip, "--require-hashes", "-r", str(spec.constraints)],
        [*pip, *project],
    ]


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-_TAIL_LINES:])


def is_built(name: str) -> bool:
    """Whether ``name`` is built for its current pins (``ensure`` would reuse it)."""
    if name == MAIN:
        return True
    spec = environment_spec(name)
    target = envs_root() / name
    return (
        spec.constraints.exists()
        and _read_stamp(target).get("fingerprint") == spec.fingerprint()
        and _python_in(target).exists()
    )


def ensure(name: str, *, build: bool = True) -> Environment:
    """The environment ``name``, built on first use and reused while its fingerprint holds.

    Raises ``EnvironmentUnavailable`` (with the installer's last lines) when it cannot be
    built; its log is kept in ``<envs root>/<name>.build.log``. With ``build=False`` an
    environment that would need building raises ``EnvironmentNotBuilt`` instead."""
    if name == MAIN:
        return Environment(MAIN, sys.executable, tool="the harness's interpreter")
    spec = environment_spec(name)
    if not spec.constraints.exists():
        raise EnvironmentUnavailable(
            name, f"{spec.constraints} is missing (lock it: python -m bench.envs lock {name})"
        )
    root = envs_root()
    target = root / name
    fingerprint = spec.fingerprint()
    with _exclusive(root / f"{name}.lock"):
        stamp = _read_stamp(target)
        if stamp.get("fingerprint") == fingerprint and _python_in(target).exists():
            return Environment(
                name, str(_python_in(target)), fingerprint, True, 0.0, stamp.get("tool", "")
            )
        if not build:
            raise EnvironmentNotBuilt(name)
        return _build(spec, target, fingerprint)


def _build(spec: EnvironmentSpec, target: Path, fingerprint: str) -> Environment:
    if target.exists():
        shutil.rmtree(target)
    tool, commands = _install_commands(spec, target)
    log_path = target.parent / f"{spec.name}.build.log"
    started = time.perf_counter()
    with log_path.open("w", encoding="utf-8") as log:
        for command in commands:
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            try:
                done = subprocess.run(
                    command,
                    capture_output=True,
                    text=True,
                    timeout=BUILD_TIMEOUT_S,
                    env=_uv_env(),
                    cwd=PROJECT_ROOT,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                log.write(f"{exc}\n")
                shutil.rmtree(target, ignore_errors=True)
                raise EnvironmentUnavailable(spec.name, f"{tool}: {exc}") from None
            log.write(done.stdout + done.stderr)
            if done.returncode != 0:
                shutil.rmtree(target, ignore_errors=True)
                reason = _tail(done.stderr or done.stdout) or f"exit code {done.returncode}"
                raise EnvironmentUnavailable(spec.name, f"{tool} failed:\n{reason}")
    build_s = time.perf_counter() - started
    stamp = {"fingerprint": fingerprint, "tool": tool, "build_s": round(build_s, 1)}
    (target / STAMP).write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")
    return Environment(spec.name, str(_python_in(target)), fingerprint, False, build_s, tool)


def lock(name: str) -> Path:
    """(Re)write ``bench/envs/<name>/constraints.txt``: the requirements plus the project's
    core dependencies, resolved by ``uv pip compile`` for this Python, preferring the versions
    already locked there (or, the first time, the main environment's constraints.txt), each
    with the hashes of its files (installs check them: ``--require-hashes``)."""
    spec = environment_spec(name)
    uv = find_uv()
    if uv is None:
        raise EnvironmentUnavailable(name, "locking needs uv (pip install uv)")
    if not spec.constraints.exists():
        shutil.copyfile(PROJECT_ROOT / "constraints.txt", spec.constraints)
    command = [
        uv,
        "pip",
        "compile",
        "--quiet",
        "--no-header",
        "--generate-hashes",
        "--python-version",
        ".".join(platform.python_version_tuple()[:2]),
        "pyproject.toml",
        str(spec.requirements.relative_to(PROJECT_ROOT)),
        "-o",
        str(spec.constraints.relative_to(PROJECT_ROOT)),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=PROJECT_ROOT, env=_uv_env(), check=False
    )
    if done.returncode != 0:
        raise EnvironmentUnavailable(name, f"uv pip compile failed:\n{_tail(done.stderr)}")
    body = spec.constraints.read_text(encoding="utf-8")
    header = (
        f"# The {name} environment, locked: python -m bench.envs lock {name}\n"
        "# (its requirements.txt plus the project's core dependencies; do not edit by hand)\n"
    )
    spec.constraints.write_text(header + body, encoding="utf-8")
    return spec.constraints
