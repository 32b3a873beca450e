"""One protocol for every worker process of the harness: newline-delimited JSON messages on
the worker's stdout, each an object with a ``type``, each type declared here once
(``Message``: a TypedDict per type, what the worker sends and what the parent reads).

Worker side: ``Channel.claim()`` takes the process's stdout for the messages and points fd 1
at stderr, so that nothing an engine, a framework or a user's program prints can corrupt the
stream; ``send(message)`` writes one message and flushes it; ``fatal()`` sends the current
exception's traceback.

Parent side: ``read_message(line)`` checks one line against the declared messages (a line
that is not one of them, or lacks one of its fields, is a ``garbage`` message: the parent
says the worker broke the protocol); ``last_message`` finds the answer in a finished
one-shot worker's output.

The workers and their messages (besides ``fatal``, which every worker may send):

- ``bench.runner.run_worker`` (the suite, throughput, TTFT and load phases): ``ready``,
  ``run``, ``batch_done``, ``throughput``, ``load_ready``, ``load``; it reads commands on
  stdin, one JSON object a line;
- ``bench.probe.probe_worker``: ``row`` per profiled variant, then ``done``;
- ``bench.catalogue.catalogue_worker``: one ``catalogue`` (or ``plain``) message;
- ``bench.runner.phases.version_probe --program``: one ``program`` message.
"""

from __future__ import annotations

import functools
import json
import os
import sys
import threading
import traceback
from typing import IO, Annotated, Any, Final, Literal, overload

from pydantic import Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic reads it on Python < 3.12

GARBAGE: Final = "garbage"  # a line that is not a message (what the parent makes of it)
FATAL: Final = "fatal"


class Fatal(TypedDict):
    """Any worker: the exception it died of."""

    type: Literal["fatal"]
    error: str


class Garbage(TypedDict):
    """Never sent: what the parent makes of a line that is not a message."""

    type: Literal["garbage"]
    line: str


class Ready(TypedDict):
    """Run worker: started, its engine prepared; what starting cost (the footprint row)."""

    type: Literal["ready"]
    footprint: dict[str, Any]


class RunDone(TypedDict):
    """Run worker: one run of a batch (``phase`` warmup or timed), its row's fields."""

    type: Literal["run"]
    phase: str
    index: int
    row: dict[str, Any]


class BatchDone(TypedDict):
    """Run worker: every run of the batch was sent."""

    type: Literal["batch_done"]


class ThroughputDone(TypedDict):
    """Run worker: one closed-loop throughput level's row."""

    type: Literal["throughput"]
    row: dict[str, Any]


class LoadReady(TypedDict):
    """Run worker: its load-phase agent is prepared and warm."""

    type: Literal["load_ready"]


class LoadDone(TypedDict):
    """Run worker: its part of one open-loop load level."""

    type: Literal["load"]
    row: dict[str, Any]


class ProbeRow(TypedDict):
    """Probe worker: one profiled scenario or variant."""

    type: Literal["row"]
    row: dict[str, Any]


class ProbeDone(TypedDict):
    """Probe worker: every row was sent."""

    type: Literal["done"]


class CatalogueDone(TypedDict):
    """Catalogue worker: its engines' cells and programs."""

    type: Literal["catalogue"]
    data: dict[str, Any]


class PlainDone(TypedDict):
    """Catalogue worker (``--plain``): what each check finds wrong with the plain agent."""

    type: Literal["plain"]
    failures: dict[str, list[str]]


class ProgramDone(TypedDict):
    """Version probe (``--program``): one program's run on its line."""

    type: Literal["program"]
    result: dict[str, Any]


Message = (
    Fatal
    | Garbage
    | Ready
    | RunDone
    | BatchDone
    | ThroughputDone
    | LoadReady
    | LoadDone
    | ProbeRow
    | ProbeDone
    | CatalogueDone
    | PlainDone
    | ProgramDone
)


_ADAPTER_LOCK = threading.Lock()


@functools.cache
def _adapter() -> TypeAdapter[Message]:
    return TypeAdapter(Annotated[Message, Field(discriminator="type")])


def _messages() -> TypeAdapter[Message]:
    """The parent's checker, built once on first read (a worker only sends, and never builds
    it); under a lock, since several workers' reader threads may read their first line at once."""
    with _ADAPTER_LOCK:
        return _adapter()


class Channel:
    """The worker's end: messages out on a private copy of its stdout."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out

    @classmethod
    def claim(cls) -> Channel:
        """Take fd 1 for the messages; fd 1 itself then goes to stderr."""
        sys.stdout.flush()
        out = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
        return cls(out)

    def send(self, message: Message) -> None:
        """One message, flushed at once (the parent reads it as it comes)."""
        self.out.write(json.dumps(message, default=str) + "\n")
        self.out.flush()

    def fatal(self, limit_chars: int = 4000) -> None:
        """The exception being handled, as the worker's last word."""
        self.send({"type": "fatal", "error": traceback.format_exc()[-limit_chars:]})


def read_message(line: str) -> Message:
    """One line of a worker's stdout as its message (``garbage`` when it is not one)."""
    try:
        return _messages().validate_json(line)
    except ValidationError:
        return {"type": "garbage", "line": line[:500]}


@overload
def last_message(output: str, type: Literal["catalogue"]) -> CatalogueDone | None: ...
@overload
def last_message(output: str, type: Literal["plain"]) -> PlainDone | None: ...
@overload
def last_message(output: str, type: Literal["program"]) -> ProgramDone | None: ...
@overload
def last_message(output: str, type: str) -> Message | None: ...
def last_message(output: str, type: str) -> Message | None:
    """The last message of ``type`` in a finished worker's whole stdout (None: none)."""
    found = None
    for line in output.splitlines():
        if line.strip():
            message = read_message(line)
            if message["type"] == type:
                found = message
    return found
