"""A sampling profiler: where a run's time goes, with little distortion.

A real-time interval timer (``signal.setitimer(ITIMER_REAL)``, every ``interval_s``) interrupts
the main thread, and the signal handler records the frame it interrupted while sampling is
``active`` (the probe switches it on around each ``execute``). The timer runs through the
whole pass, not per run: restarted at each run, it would sample every run at the same phase
(a 0.7 ms run sampled every 0.5 ms is always sampled 0.5 ms in). Python runs the handler at
the next bytecode boundary, so samples fall wherever the interpreter is, in proportion to
time. (A sampling *thread* does not work here: it only gets the GIL when the main thread
releases it, which an event loop does in ``select`` — nearly every sample lands there.
``ITIMER_PROF`` would count CPU time only, but Linux fires it at the scheduler tick, 250 Hz.)
At zero latency in-process a run hardly waits, so wall time is CPU time. Each sample is
charged to one group (``bench.probe.groups``):

- ``harness`` when one of its frames runs a harness root (the mock LLM's handler, a tool body:
  ``bench.probe.counting.harness_roots``) — the mock's own cost, whatever it calls;
- otherwise the group of its innermost frame, a standard-library helper charged to its nearest
  non-helper caller. A sample taken while C code runs lands on the Python frame that called it.

When the main thread is waiting in the event loop's ``select``, nothing runs in it, and the
sample goes to what the run waits for. A task suspended inside a harness root is a tool sleeping
its scripted ``latency_ms``: that sample is left out of every group (``wait_samples``), as
framework overhead leaves out tool time. Else the busy thread of the loop's thread pool gets it,
by its innermost frame (``thread_samples``: LangChain runs its sync parts through
``run_in_executor``); else ``asyncio`` (``idle_samples``: at zero latency in-process, the
hand-off of a job's result from a pool thread back to the loop).

``stacks`` counts the same samples by their group and the watched groups
(``CALLBACK_STACK_GROUPS``) found anywhere on their stack: inclusive time, for claim 2.
``leaf`` counts the same samples by the innermost frame alone (no harness rule): the rule
cProfile's ``tottime`` follows, for comparing the two (docs/measurement.md, the distortion).
Sampling is statistical: a share of ``p`` from ``n`` samples has a standard error of
``sqrt(p·(1−p)/n)`` (``standard_error``).
"""

from __future__ import annotations

import asyncio
import math
import signal
import sys
import threading
from collections import Counter
from types import CodeType, FrameType
from typing import Any

from bench.engines.packages import CALLBACK_STACK_GROUPS
from bench.probe.counting import PROBE, frame_group
from bench.probe.groups import HARNESS, group_of


def standard_error(share: float, samples: int) -> float:
    """The binomial standard error of a share estimated from ``samples`` samples."""
    return math.sqrt(share * (1 - share) / samples) if samples > 0 else math.nan


def _waiting(frame: FrameType) -> bool:
    """The main thread is blocked in the event loop's selector (it has nothing to run)."""
    return frame.f_code.co_name == "select" and frame.f_globals.get("__name__") == "selectors"


_IDLE_MODULES = frozenset({"threading", "queue", "concurrent.futures.thread", "selectors"})


def _busy_thread() -> FrameType | None:
    """The innermost frame of another thread that is running Python code, if one is."""
    main = threading.main_thread().ident
    for ident, frame in sys._current_frames().items():
        if ident != main and frame.f_globals.get("__name__") not in _IDLE_MODULES:
            return frame
    return None


class Sampler:
    """``with Sampler(roots) as s:`` samples the main thread while ``s.active`` is set."""

    def __init__(
        self,
        roots: frozenset[CodeType],
        *,
        interval_s: float = 0.0005,
        mock_code: CodeType | None = None,
    ):
        self.roots = roots
        self.interval_s = interval_s
        self.mock_code = mock_code  # samples inside it are counted apart (a cross-check)
        self.groups: Counter[str] = Counter()
        self.leaf: Counter[str] = Counter()
        # (charged group, the watched groups anywhere on the stack) -> samples: inclusive time
        self.watched = frozenset(CALLBACK_STACK_GROUPS)
        self.stacks: Counter[tuple[str, tuple[str, ...]]] = Counter()
        self.in_mock = 0
        self.thread_samples = 0
        self.idle_samples = 0
        self.wait_samples = 0
        self.active = False
        self._previous: Any = None

    @property
    def samples(self) -> int:
        return sum(self.groups.values())

    def sample(self, frame: FrameType | None) -> None:
        """Charge one sample taken at ``frame`` (the main thread's innermost frame)."""
        if frame is None:
            return
        if _waiting(frame):
            if self._awaited_in_harness():
                self.wait_samples += 1  # scripted waiting: not part of any group's time
                return
            busy = _busy_thread()
            if busy is None:
                self.idle_samples += 1
                self.groups["asyncio"] += 1
                self.leaf["asyncio"] += 1
                self.stacks[("asyncio", ())] += 1
                return
            self.thread_samples += 1
            frame = busy
        leaf = frame_group(frame)
        if leaf == PROBE:
            return
        group = leaf
        on_stack: set[str] = set()
        f: FrameType | None = frame
        while f is not None:
            code = f.f_code
            if code is self.mock_code:
                self.in_mock += 1
            if code in self.roots:
                group = HARNESS
                on_stack.clear()  # the harness's time is nobody's overhead
                break
            seen = group_of(f.f_globals.get("__name__"))
            if seen in self.watched:
                on_stack.add(seen)
            f = f.f_back
        self.groups[group] += 1
        self.leaf[leaf] += 1
        self.stacks[(group, tuple(sorted(on_stack)))] += 1

    def _awaited_in_harness(self) -> bool:
        """Some task is suspended inside a harness root (a tool sleeping its scripted latency)."""
        try:
            tasks = asyncio.all_tasks()
        except RuntimeError:
            return False
        for task in tasks:
            awaited: Any = task.get_coro()
            while awaited is not None:
                frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
                if frame is not None and frame.f_code in self.roots:
                    return True
                awaited = getattr(awaited, "cr_await", None) or getattr(
                    awaited, "gi_yieldfrom", None
                )
        return False

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        if self.active:
            self.sample(frame)

    def __enter__(self) -> Sampler:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("the sampler runs in the main thread (signals)")
        self._previous = signal.signal(signal.SIGALRM, self._handler)
        signal.setitimer(signal.ITIMER_REAL, self.interval_s, self.interval_s)
        return self

    def __exit__(self, *exc: object) -> None:
        self.active = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)
