"""A run directory on disk: its file names, the keys of its rows, and the append-only writer.

```
reports/<run-id>/
  meta.json          schema version, packages, Python, OS, CPU, git, config, times
  runs.jsonl         one line per run (warm-up and timed), appended and flushed as it arrives
  footprint.jsonl    one line per import probe and per worker process
  throughput.jsonl   one line per engine × latency profile × concurrency level
  ttft.jsonl         one line per run of the TTFT phase (warm-up and timed)
  profile.jsonl      one line per engine × scenario of the profiling probe (``schedbench probe``)
  load.jsonl         one line per engine × processes × offered rate of the load phase
  multimodel.json    the multi-model check: each engine switched to Anthropic's API
                     (``schedbench multimodel``)
  summary.csv        engine × scenario × latency statistics (rebuilt from runs.jsonl)
  footprint.csv      per engine
  throughput.csv     per engine × latency profile × concurrency level
  ttft.csv           per engine: time to first token through its user-facing stream
  load.csv           per engine × processes × offered rate: latency, throughput, CPU
  debuggability.csv  engine × debug mode × scenario (``schedbench debug-score``)
  catalogue.json     the customisation catalogue and false simplicity (``schedbench catalogue``)
  logs/              stderr of worker processes (kept when not empty)
```

JSON lines are written with ``sort_keys=True`` in a single ``write`` and flushed, so a crash
loses at most the line being written; a torn last line is skipped on reading (with its line
number, see ``bench.results.folder``) and never glued to the next one. When a row's key appears
twice (a run retried by ``--resume`` after a worker crash), the **later row wins**.
Writing: ``bench.results.store.RunStore``; reading: ``bench.results.folder``.
"""

from __future__ import annotations

import errno
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1  # the major version of every file's format; readers refuse another

META = "meta.json"
RUNS = "runs.jsonl"
FOOTPRINT = "footprint.jsonl"
THROUGHPUT = "throughput.jsonl"
TTFT = "ttft.jsonl"
PROFILE = "profile.jsonl"
LOAD = "load.jsonl"
MULTIMODEL = "multimodel.json"
MULTIMODEL_SCHEMA_VERSION = 1
VERSIONS = "versions.json"  # the LangChain version matrix (bench.results.versions)
SUMMARY = "summary.csv"
PER_ENGINE_CSV = "per_engine.csv"  # one row per engine (bench.results.per_engine)
FOOTPRINT_CSV = "footprint.csv"
THROUGHPUT_CSV = "throughput.csv"
TTFT_CSV = "ttft.csv"
LOAD_CSV = "load.csv"
DEBUG_CSV = "debuggability.csv"
CATALOGUE = "catalogue.json"
LOGS = "logs"

# what identifies a row of each file (the later row with the same key wins)
RUN_KEY = ("engine", "scenario", "latency", "transport", "round", "repeat", "phase")
THROUGHPUT_KEY = ("engine", "scenario", "latency", "transport", "concurrency")
TTFT_KEY = ("engine", "scenario", "latency", "transport", "repeat", "phase")
PROFILE_KEY = ("engine", "scenario")
LOAD_KEY = ("kind", "engine", "scenario", "latency", "transport", "processes", "rate", "stream")


MAX_FILE_BYTES = 256 * 1024 * 1024  # the largest file of a run folder a reader takes in

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_regular(path: Path | str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes (a link to one is followed).

    A run folder is untrusted: a FIFO must not block the reader, a link to ``/dev/zero`` must
    not fill its memory. ``FileNotFoundError`` when absent; any other ``OSError`` carries the
    reason in ``strerror`` ("not a regular file (a FIFO)", "larger than …")."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO opens at once
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a file")
            raise OSError(errno.EINVAL, f"not a regular file ({kind})", str(path))
        too_big = OSError(
            errno.EFBIG, f"larger than the {limit:,} bytes a run folder's file may hold", str(path)
        )
        if os.fstat(fd).st_size > limit:
            raise too_big
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # it grew while being read
                raise too_big
        return b"".join(chunks)
    finally:
        os.close(fd)


def clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def dumps_line(row: dict[str, Any]) -> str:
    return json.dumps(clean(row), sort_keys=True, default=str, ensure_ascii=False) + "\n"
