"""Counting the Python function calls of a run, by package (``sys.setprofile``).

CPython's profile hook sees a ``call`` event each time a Python frame starts *or resumes*: a
coroutine or generator that suspends three times is "called" four times (cProfile's ``ncalls``
counts the same way). The counter tells them apart — a frame whose last instruction is the
first ``RESUME`` of its code is new, any other is resumed — so that

- ``calls``    is the number of Python function invocations (a coroutine counts once),
- ``resumes``  the number of times a suspended coroutine, generator or async generator went on,
- ``c_calls``  the number of calls into C functions (builtins, methods of C types,
  ``pydantic_core``, ``_json``), charged to the Python function that made them.

Each is counted by group (``bench.probe.groups``): a function by its module, a standard-library
helper by its nearest non-helper caller. Everything that runs inside a harness root
(``HARNESS_ROOTS``: the mock LLM's request handler, a scenario tool's body) is ``harness``
whatever its module, so ``engine_calls`` — calls outside the harness — is what the engine
itself executed. The counter follows the run into the event loop's executor threads: jobs
handed to ``loop.run_in_executor`` (LangChain runs its sync parts there) are counted too, in
the thread that runs them (``thread_job``); ``executor_jobs`` says how many there were.
"""

from __future__ import annotations

import dis
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from bench.probe.groups import HARNESS, HELPER, OTHER, group_of

PROBE = "probe"


def harness_roots() -> frozenset[CodeType]:
    """The functions whose whole subtree is the harness's own cost: the mock LLM's handler
    and the scenario tools' bodies."""
    from bench.engines.kit.tools import ScenarioTool
    from bench.referee.core import MockLLM

    return frozenset(f.__code__ for f in (MockLLM.handle, ScenarioTool.acall, ScenarioTool.call))


_RESUME = dis.opmap["RESUME"]
_first_resume: dict[CodeType, int] = {}


def first_resume(code: CodeType) -> int:
    """The offset of the first ``RESUME`` of a code object (where a new frame starts): it
    follows at most a few prefix instructions (``MAKE_CELL``, ``COPY_FREE_VARS``,
    ``RETURN_GENERATOR``, ``POP_TOP``), which carry no inline caches."""
    offset = _first_resume.get(code)
    if offset is None:
        raw = code.co_code
        offset = next((i for i in range(0, len(raw), 2) if raw[i] == _RESUME), 0)
        _first_resume[code] = offset
    return offset


def frame_group(frame: FrameType | None) -> str:
    """The group charged for a frame: its module's, or its nearest non-helper caller's."""
    while frame is not None:
        group = group_of(frame.f_globals.get("__name__"))
        if group != HELPER:
            return group
        frame = frame.f_back
    return OTHER


@dataclass
class Counts:
    """What one counted run executed, by group."""

    calls: Counter[str] = field(default_factory=Counter)
    resumes: Counter[str] = field(default_factory=Counter)
    c_calls: Counter[str] = field(default_factory=Counter)
    executor_jobs: int = 0  # jobs the run handed to the event loop's thread pool

    def total(self, kind: str = "calls", *, harness: bool = True) -> int:
        counter: Counter[str] = getattr(self, kind)
        return sum(n for g, n in counter.items() if harness or g != HARNESS)

    @property
    def engine_calls(self) -> int:
        """Python calls outside the harness: what the engine executed."""
        return self.total("calls", harness=False)


class CallCounter:
    """``with CallCounter(roots) as counts:`` counts the calls made inside the block."""

    def __init__(self, roots: frozenset[CodeType] | None = None):
        self.roots = harness_roots() if roots is None else roots
        self.counts = Counts()
        self._inside = 0  # harness roots currently running (resumed counts again)
        self._groups: dict[CodeType, str] = {}

    def _group(self, frame: FrameType) -> str:
        code = frame.f_code
        group = self._groups.get(code)
        if group is None:
            group = group_of(frame.f_globals.get("__name__"))
            if group != HELPER:
                self._groups[code] = group
        if group == HELPER:
            group = frame_group(frame.f_back)
        return group

    def _thread_profile(self, frame: FrameType, event: str, arg: Any) -> None:
        """The hook of an executor thread (no harness runs there; one job at a time)."""
        if event == "call":
            group = self._group(frame)
            if frame.f_lasti == first_resume(frame.f_code):
                self.counts.calls[group] += 1
            else:
                self.counts.resumes[group] += 1
        elif event == "c_call":
            self.counts.c_calls[self._group(frame)] += 1

    def thread_job(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` counted in the thread that runs it (for ``loop.run_in_executor``)."""
        self.counts.executor_jobs += 1

        def counted(*args: Any) -> Any:
            sys.setprofile(self._thread_profile)
            try:
                return fn(*args)
            finally:
                sys.setprofile(None)

        return counted

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            code = frame.f_code
            if code in self.roots:
                self._inside += 1
            group = HARNESS if self._inside else self._group(frame)
            if group == PROBE:
                return
            if frame.f_lasti == first_resume(code):
                self.counts.calls[group] += 1
            else:
                self.counts.resumes[group] += 1
        elif event == "return":
            if frame.f_code in self.roots:
                self._inside -= 1
        elif event == "c_call":
            group = HARNESS if self._inside else self._group(frame)
            if group != PROBE:
                self.counts.c_calls[group] += 1

    def __enter__(self) -> Counts:
        self.counts = Counts()
        self._inside = 0
        sys.setprofile(self._profile)
        return self.counts

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)
