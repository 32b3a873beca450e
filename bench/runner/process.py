"""The parent's handle on one worker child: ``python -m bench.runner.run_worker`` in its engine's
environment, its message queue (a reader thread) and its stderr log.

Every phase of a run talks to its workers through ``WorkerProcess``; a worker that dies, hangs
or breaks the protocol raises ``WorkerError``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from bench import PROJECT_ROOT
from bench.engines.registry import REGISTRY
from bench.envs import MAIN
from bench.errors import WorkerError
from bench.runner.channel import FATAL, GARBAGE, Message, read_message
from bench.runner.offline import offline_env

SPAWN_TIMEOUT_S = 180.0
TAIL_CHARS = 2000


def environment_of(engine: str) -> str:
    """The environment ``engine`` runs in (plug-in engines: the main one)."""
    known = REGISTRY.get(engine)
    return known.environment if known is not None else MAIN


def worker_env() -> dict[str, str]:
    env = offline_env(dict(os.environ))
    # the workers import the very code the parent runs (and plug-in engines next to it)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(PROJECT_ROOT), env.get("PYTHONPATH", "")) if p
    )
    return env


class WorkerProcess:
    """One ``python -m bench.runner.run_worker`` child, its message queue and its stderr log."""

    def __init__(
        self,
        engine: str,
        round_no: int,
        log_path: Path,
        *,
        scenario_dir: str | None,
        transport: str,
        base_urls: dict[str, str],
        reference: str | None,
        handler_args: list[str] | None = None,
        python: str = sys.executable,
    ):
        self.engine = engine
        self.round = round_no
        self.log_path = log_path
        # -P: the working directory is not importable (a folder of downloaded files there
        # could shadow any module); the parent's console script never has it either
        command = [python, "-P", "-m", "bench.runner.run_worker", "--engine", engine]
        command += ["--transport", transport, *(handler_args or [])]
        if scenario_dir is not None:
            command += ["--scenario-dir", scenario_dir]
        for latency, url in base_urls.items():
            command += ["--base-url", f"{latency}={url}"]
        if reference:
            command += ["--reference", reference]
        self._log: IO[str] = log_path.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            encoding="utf-8",
            bufsize=1,
            env=worker_env(),
        )
        self._messages: queue.Queue[Message | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name=f"worker-{engine}", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.strip()
            if not line:
                continue
            self._messages.put(read_message(line))
        self._messages.put(None)

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, command: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(command) + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise WorkerError(f"worker {self.pid} is gone ({self._exit_text()}): {exc}") from None

    def receive(self, timeout_s: float) -> Message:
        try:
            message = self._messages.get(timeout=timeout_s)
        except queue.Empty:
            raise WorkerError(
                f"worker {self.pid} sent nothing for {timeout_s:.0f}s (hung); killed"
            ) from None
        if message is None:
            raise WorkerError(f"worker {self.pid} died ({self._exit_text()})")
        if message["type"] == FATAL:
            raise WorkerError(f"worker {self.pid} failed: {message['error'].strip()}")
        if message["type"] == GARBAGE:
            raise WorkerError(f"worker {self.pid} broke the protocol: {message['line']!r}")
        return message

    def _exit_text(self) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return "still running"
        return f"exit code {code}"

    def stderr_tail(self, chars: int = TAIL_CHARS) -> str:
        self._log.flush()
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return text[-chars:].strip()

    def kill(self) -> None:
        if self.alive():
            self.process.kill()
        self._finish()

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not within a few seconds."""
        if self.alive():
            try:
                self.send({"op": "exit"})
                self.process.wait(timeout=10)
            except (WorkerError, subprocess.TimeoutExpired):
                self.process.kill()
        self._finish()

    def _finish(self) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        self._log.close()
        try:
            if self.log_path.stat().st_size == 0:
                self.log_path.unlink()
        except OSError:
            pass
