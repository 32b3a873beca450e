"""One protocol for every worker process of the harness: newline-delimited JSON messages on
the worker's stdout, each an object with a ``type``.

Worker side: ``Channel.claim()`` takes the process's stdout for the messages and points fd 1
at stderr, so that nothing an engine, a framework or a user's program prints can corrupt the
stream; ``send(type, **fields)`` writes one message and flushes it; ``fatal()`` sends the
current exception's traceback.

Parent side: ``read_message(line)`` turns one line into its message (a line that is not one
is a ``garbage`` message: the parent says the worker broke the protocol); ``last_message``
finds the answer in a finished one-shot worker's output.

The workers and their messages (besides ``fatal``, which every worker may send):

- ``bench.runner.run_worker`` (the suite, throughput, TTFT and load phases): ``ready``,
  ``run``, ``batch_done``, ``throughput``, ``load_ready``, ``load``; it reads commands on
  stdin, one JSON object a line;
- ``bench.probe.probe_worker``: ``row`` per profiled variant, then ``done``;
- ``bench.catalogue.catalogue_worker``: one ``catalogue`` (or ``plain``) message;
- ``bench.runner.phases.version_probe --program``: one ``program`` message.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from typing import IO, Any

GARBAGE = "garbage"  # a line that is not a message (what the parent makes of it)
FATAL = "fatal"


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

    def send(self, type: str, **fields: Any) -> None:
        """One message, flushed at once (the parent reads it as it comes)."""
        self.out.write(json.dumps({"type": type, **fields}, default=str) + "\n")
        self.out.flush()

    def fatal(self, limit_chars: int = 4000) -> None:
        """The exception being handled, as the worker's last word."""
        self.send(FATAL, error=traceback.format_exc()[-limit_chars:])


def read_message(line: str) -> dict[str, Any]:
    """One line of a worker's stdout as its message (``garbage`` when it is not one)."""
    try:
        message = json.loads(line)
    except ValueError:
        message = None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return {"type": GARBAGE, "line": line[:500]}
    return message


def last_message(output: str, type: str) -> dict[str, Any] | None:
    """The last message of ``type`` in a finished worker's whole stdout (None: none)."""
    found = None
    for line in output.splitlines():
        if line.strip():
            message = read_message(line)
            if message["type"] == type:
                found = message
    return found
