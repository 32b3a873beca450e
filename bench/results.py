"""The results store: one directory per run, append-only JSON lines, crash-safe.

```
reports/<run-id>/
  meta.json          schema version, packages, Python, OS, CPU, git, config, times
  runs.jsonl         one line per run (warm-up and timed), appended and flushed as it arrives
  footprint.jsonl    one line per import probe and per worker process
  throughput.jsonl   one line per engine × latency profile × concurrency level
  ttft.jsonl         one line per run of the TTFT phase (warm-up and timed)
  summary.csv        engine × scenario × latency statistics (pandas, rebuilt from runs.jsonl)
  footprint.csv      per engine
  throughput.csv     per engine × latency profile × concurrency level
  ttft.csv           per engine: time to first token through its user-facing stream
  logs/              stderr of worker processes (kept when not empty)
```

JSON lines are written with ``sort_keys=True`` in a single ``write`` and flushed, so a crash
loses at most the line being written; a torn last line is skipped on reading and never
glued to the next one. When a row's key appears twice (a run retried by ``--resume`` after a
worker crash), the **later row wins** (see ``latest``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

SCHEMA_VERSION = 1

META = "meta.json"
RUNS = "runs.jsonl"
FOOTPRINT = "footprint.jsonl"
THROUGHPUT = "throughput.jsonl"
SUMMARY = "summary.csv"
FOOTPRINT_CSV = "footprint.csv"
THROUGHPUT_CSV = "throughput.csv"
TTFT = "ttft.jsonl"
TTFT_CSV = "ttft.csv"
LOGS = "logs"

# what identifies a row of each file (the later row with the same key wins)
RUN_KEY = ("engine", "scenario", "latency", "transport", "round", "repeat", "phase")
THROUGHPUT_KEY = ("engine", "scenario", "latency", "transport", "concurrency")
TTFT_KEY = ("engine", "scenario", "latency", "transport", "repeat", "phase")


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null (JSON has neither)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def dumps_line(row: dict[str, Any]) -> str:
    return json.dumps(_clean(row), sort_keys=True, default=str, ensure_ascii=False) + "\n"


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every complete, parseable line of ``path`` (missing file: no rows)."""
    if not path.exists():
        return []
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line torn by a crash mid-write
            if isinstance(row, dict):
                rows.append(row)
    return rows


def latest(rows: Iterable[dict[str, Any]], key: tuple[str, ...] = RUN_KEY) -> list[dict[str, Any]]:
    """One row per key, the last one written, in first-seen order."""
    by_key: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in rows:
        by_key[tuple(row.get(k) for k in key)] = row
    return list(by_key.values())


class RunStore:
    """One run's directory. Opens its JSON-lines files in append mode on first write."""

    def __init__(self, directory: Path | str):
        self.directory = Path(directory)
        self._files: dict[str, IO[str]] = {}

    # -- paths ---------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        return self.directory / name

    @property
    def logs(self) -> Path:
        return self.directory / LOGS

    def exists(self) -> bool:
        return self.path(META).exists() or self.path(RUNS).exists()

    def create(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(exist_ok=True)

    # -- meta ----------------------------------------------------------------------------

    def write_meta(self, meta: dict[str, Any]) -> None:
        """Write meta.json atomically (temp file + rename), keys sorted."""
        target = self.path(META)
        tmp = target.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(_clean(meta), sort_keys=True, indent=2, default=str) + "\n")
        os.replace(tmp, target)

    def read_meta(self) -> dict[str, Any]:
        return json.loads(self.path(META).read_text(encoding="utf-8"))

    # -- rows ----------------------------------------------------------------------------

    def _file(self, name: str) -> IO[str]:
        handle = self._files.get(name)
        if handle is None:
            path = self.path(name)
            torn = path.exists() and path.stat().st_size > 0 and not _ends_with_newline(path)
            handle = path.open("a", encoding="utf-8")
            if torn:
                handle.write("\n")  # never glue a new row onto a line torn by a crash
            self._files[name] = handle
        return handle

    def append(self, name: str, row: dict[str, Any]) -> None:
        """Append one row and flush it to the OS (survives our own crash)."""
        handle = self._file(name)
        handle.write(dumps_line(row))
        handle.flush()

    def sync(self) -> None:
        """fsync every open file (survives a machine crash); called after each batch."""
        for handle in self._files.values():
            handle.flush()
            os.fsync(handle.fileno())

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()

    def rows(self, name: str = RUNS) -> list[dict[str, Any]]:
        return read_jsonl(self.path(name))

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def timed_rows(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The latest timed rows (warm-ups and superseded rows left out)."""
    return (r for r in latest(rows) if r.get("phase") == "timed")


def finished_repeats(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str, str, int], set[int]]:
    """Batch key (engine, scenario, latency, round) → repeat indices measured (not crashed)."""
    done: dict[tuple[str, str, str, int], set[int]] = {}
    for row in timed_rows(rows):
        if row.get("crashed"):
            continue
        key = (row["engine"], row["scenario"], row["latency"], int(row["round"]))
        done.setdefault(key, set()).add(int(row["repeat"]))
    return done


def finished_ttft(
    rows: Iterable[dict[str, Any]], scenario: str, latency: str, transport: str
) -> dict[str, set[int]]:
    """Engine → repeat indices of the TTFT phase measured (not crashed) for this cell."""
    done: dict[str, set[int]] = {}
    for row in latest(rows, TTFT_KEY):
        if row.get("phase") != "timed" or row.get("crashed"):
            continue
        if (row.get("scenario"), row.get("latency"), row.get("transport")) != (
            scenario,
            latency,
            transport,
        ):
            continue
        done.setdefault(row["engine"], set()).add(int(row["repeat"]))
    return done
