"""Progress of a run on stderr: a rich progress bar on a terminal, periodic lines otherwise.

Work is counted in *estimated seconds* (each run weighs its expected duration), so the ETA
stays honest when slow scenarios (timeouts, delays) and fast ones are mixed; the number of
runs left is shown alongside.
"""

from __future__ import annotations

import sys
import time
from typing import IO, TYPE_CHECKING, Protocol


def format_duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds < 0:
        return "--:--"
    seconds = round(seconds)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class Progress(Protocol):
    def phase(self, name: str, total_units: float, total_runs: int, unit: str = "runs") -> None: ...
    def describe(self, text: str) -> None: ...
    def advance(self, units: float, runs: int = 1) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


class _Tracker:
    """Units and runs done in the current phase, and an ETA from the rate so far."""

    def __init__(self) -> None:
        self.name = ""
        self.text = ""
        self.total_units = 0.0
        self.done_units = 0.0
        self.total_runs = 0
        self.done_runs = 0
        self.unit = "runs"
        self.started = time.monotonic()

    def reset(self, name: str, total_units: float, total_runs: int) -> None:
        self.name, self.text = name, ""
        self.total_units, self.done_units = max(total_units, 1e-9), 0.0
        self.total_runs, self.done_runs = total_runs, 0
        self.started = time.monotonic()

    @property
    def fraction(self) -> float:
        return min(self.done_units / self.total_units, 1.0)

    @property
    def eta_s(self) -> float | None:
        elapsed = time.monotonic() - self.started
        if self.done_units <= 0 or elapsed < 1:
            return None
        return elapsed * (self.total_units - self.done_units) / self.done_units

    @property
    def runs_left(self) -> int:
        return max(self.total_runs - self.done_runs, 0)


class LineProgress:
    """Plain lines every ``every_s`` seconds (and at each phase), for logs and CI."""

    def __init__(self, stream: IO[str] | None = None, every_s: float = 10.0):
        self.stream = stream or sys.stderr
        self.every_s = every_s
        self.tracker = _Tracker()
        self._last = 0.0

    def _print(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def phase(self, name: str, total_units: float, total_runs: int, unit: str = "runs") -> None:
        self.tracker.reset(name, total_units, total_runs)
        self.tracker.unit = unit
        self._print(
            f"[{name}] {total_runs} {unit} planned, ~{format_duration(total_units)} estimated"
        )
        self._last = time.monotonic()

    def describe(self, text: str) -> None:
        self.tracker.text = text

    def advance(self, units: float, runs: int = 1) -> None:
        t = self.tracker
        t.done_units += units
        t.done_runs += runs
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self._print(
                f"[{t.name}] {t.fraction:4.0%} {t.text}: {t.runs_left} {t.unit} left, "
                f"ETA {format_duration(t.eta_s)}"
            )

    def message(self, text: str) -> None:
        self._print(text)

    def close(self) -> None:
        pass


if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import TaskID


class RichProgress:
    """A rich progress bar: what is running, runs left, elapsed and ETA."""

    def __init__(self, console: Console | None = None):
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = console or Console(stderr=True)
        self.tracker = _Tracker()
        self._progress = Progress(
            TextColumn("[bold]{task.fields[phase]}[/bold]"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TextColumn("{task.fields[runs_left]} {task.fields[unit]} left"),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("{task.description}"),
            console=self.console,
            transient=False,
            refresh_per_second=4,
        )
        self._task: TaskID | None = None
        self._progress.start()

    def _refresh(self) -> None:
        t = self.tracker
        if self._task is None:
            return
        self._progress.update(
            self._task,
            completed=t.done_units,
            total=t.total_units,
            description=t.text,
            runs_left=t.runs_left,
            eta=format_duration(t.eta_s),
        )

    def phase(self, name: str, total_units: float, total_runs: int, unit: str = "runs") -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self.tracker.total_units)
        self.tracker.reset(name, total_units, total_runs)
        self._task = self._progress.add_task(
            "",
            total=self.tracker.total_units,
            phase=name,
            runs_left=total_runs,
            unit=unit,
            eta="--:--",
        )

    def describe(self, text: str) -> None:
        self.tracker.text = text
        self._refresh()

    def advance(self, units: float, runs: int = 1) -> None:
        self.tracker.done_units += units
        self.tracker.done_runs += runs
        self._refresh()

    def message(self, text: str) -> None:
        self._progress.console.print(text, markup=False, highlight=False)

    def close(self) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=self.tracker.total_units)
        self._progress.stop()


class NullProgress:
    def phase(self, name: str, total_units: float, total_runs: int, unit: str = "runs") -> None: ...
    def describe(self, text: str) -> None: ...
    def advance(self, units: float, runs: int = 1) -> None: ...
    def message(self, text: str) -> None: ...
    def close(self) -> None: ...


def make_progress(stream: IO[str] | None = None, every_s: float = 10.0) -> Progress:
    """Rich on a terminal, periodic lines otherwise."""
    stream = stream or sys.stderr
    if stream.isatty():
        return RichProgress()
    return LineProgress(stream, every_s)
