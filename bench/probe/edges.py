"""The stack between the caller's entry and the two edges of a run: the HTTP send, a tool body.

The caller's entry is the engine's ``execute`` (``bench.engines.common.RecordingEngine``): the
call that wraps what a user writes (``agent.run``, ``executor.ainvoke``, ``graph.ainvoke``).
When a request reaches the recording transport (``RecordingAsyncTransport.handle_async_request``)
or a scenario tool's body starts (``ScenarioTool.acall``), ``bench.engines.kit.runlog.EDGE_HOOK`` calls
``EdgeProbe.hit``, which walks the **logical** stack from there back to ``execute``:

- inside one asyncio task, the frames of the awaiting coroutines (and async generators) are on
  the thread's stack, so ``frame.f_back`` leads from the edge to the task's own coroutine (or,
  for a task running an ``anext()`` awaitable, to the event loop's ``Handle._run``);
- where a framework starts a new task (``asyncio.gather`` of tools, LangGraph's task runner),
  the walk continues at the point where that task was **created**: while the probe runs, the
  loop's task factory records the logical stack of every ``create_task`` call (its creator's
  frames, then the creator's own creation stack). asyncio's machinery between the creator and
  the new task (``gather``, ``ensure_future``, ``create_task``) is left out: it is how a task
  starts, not a call the framework makes.

``depth`` counts the frames strictly between ``execute`` and the edge's function (the function
itself excluded); ``modules`` and ``classes`` are the distinct modules and classes
(``module.Class`` from each function's ``__qualname__``) of those frames. A frame in another
thread has no link to its creator: such an edge is recorded with ``depth`` None and the reason.
Nothing here runs unless the probe installs it; ``uninstall`` restores the hook and the factory.
"""

from __future__ import annotations

import asyncio
import sys
import weakref
from collections import Counter
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from bench.engines.kit import runlog
from bench.probe.groups import class_of, group_of

Frame = tuple[CodeType, str]  # a frame's code and its module name
# where the event loop calls into a task's step: the bottom of every task's frames (a task
# whose "coroutine" is an async generator's ``anext()`` awaitable has no frame of its own)
_HANDLE_RUN = asyncio.events.Handle._run.__code__


def _frame(f: FrameType) -> Frame:
    return f.f_code, f.f_globals.get("__name__", "?")


def _current_task() -> asyncio.Task | None:
    try:
        return asyncio.current_task()
    except RuntimeError:  # no running loop in this thread
        return None


@dataclass(frozen=True)
class EdgeStack:
    """One edge hit: the frames from the edge's function outwards to the caller's entry."""

    edge: str  # "send" or "tool"
    frames: tuple[Frame, ...]  # [0] is the edge's function; the last is execute (if found)
    anchored: bool  # the engine's execute was found on the logical stack
    reason: str | None = None  # why not

    @property
    def between(self) -> tuple[Frame, ...]:
        """The frames strictly between execute and the edge's function."""
        return self.frames[1:-1] if self.anchored else ()

    @property
    def depth(self) -> int | None:
        return len(self.between) if self.anchored else None

    @property
    def modules(self) -> list[str]:
        return sorted({module for _, module in self.between})

    @property
    def classes(self) -> list[str]:
        out = set()
        for code, module in self.between:
            owner = class_of(code.co_qualname)
            if owner is not None:
                out.add(f"{module}.{owner}")
        return sorted(out)

    def frames_by_group(self) -> dict[str, int]:
        return dict(Counter(group_of(module) for _, module in self.between))

    def text(self) -> list[str]:
        """``module:qualname`` of each frame, from the caller's entry inwards to the edge."""
        return [f"{module}:{code.co_qualname}" for code, module in reversed(self.frames)]


@dataclass
class EdgeProbe:
    """Records the logical stack at every edge hit while installed (see the module doc)."""

    anchors: frozenset[CodeType]  # the code of the engine's execute (every class of its MRO)
    hits: list[EdgeStack] = field(default_factory=list)
    _created: weakref.WeakKeyDictionary = field(default_factory=weakref.WeakKeyDictionary)
    _previous_factory: Any = None
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def for_engine(cls, engine: Any) -> EdgeProbe:
        codes = {
            klass.__dict__["execute"].__code__
            for klass in type(engine).__mro__
            if "execute" in klass.__dict__ and hasattr(klass.__dict__["execute"], "__code__")
        }
        return cls(anchors=frozenset(codes))

    # -- installing ----------------------------------------------------------------------

    def install(self, loop: asyncio.AbstractEventLoop) -> None:
        if runlog.EDGE_HOOK is not None:
            raise RuntimeError("an edge probe is already installed")
        self._loop = loop
        self._previous_factory = loop.get_task_factory()
        loop.set_task_factory(self._task_factory)
        runlog.EDGE_HOOK = self.hit

    def uninstall(self) -> None:
        runlog.EDGE_HOOK = None
        if self._loop is not None:
            self._loop.set_task_factory(self._previous_factory)
            self._loop = None

    def __enter__(self) -> EdgeProbe:
        self.install(asyncio.get_event_loop())
        return self

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    # -- the walk ------------------------------------------------------------------------

    def _task_factory(self, loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> Any:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        chain = self._logical(sys._getframe(1))
        # drop asyncio's own task-starting frames (create_task, ensure_future, gather)
        start = 0
        while start < len(chain) and group_of(chain[start][1]) == "asyncio":
            start += 1
        self._created[task] = chain[start:]
        return task

    def _logical(self, frame: FrameType | None) -> list[Frame]:
        """The logical stack from ``frame`` outwards: this task's frames up to its coroutine,
        then the stack its task was created from (recorded by the factory)."""
        frames: list[Frame] = []
        task = _current_task()
        root = None
        if task is not None:
            coro = task.get_coro()
            root = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        while frame is not None and frame.f_code is not _HANDLE_RUN:
            frames.append(_frame(frame))
            if frame is root:
                break
            frame = frame.f_back
        if task is not None:
            frames.extend(self._created.get(task, ()))
        return frames

    def hit(self, edge: str) -> None:
        """Called by the edge itself (``bench.engines.kit.runlog.EDGE_HOOK``)."""
        frames = self._logical(sys._getframe(1))
        outermost = max(
            (i for i, (code, _) in enumerate(frames) if code in self.anchors), default=None
        )
        if outermost is None:
            reason = (
                "no asyncio task (a thread?): the stack ends before execute"
                if _current_task() is None
                else "execute not on the logical stack"
            )
            self.hits.append(EdgeStack(edge, tuple(frames), anchored=False, reason=reason))
            return
        self.hits.append(EdgeStack(edge, tuple(frames[: outermost + 1]), anchored=True))
