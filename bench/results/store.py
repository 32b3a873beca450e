"""The runner's handle on its run directory: meta.json written atomically, JSON lines appended.

Crash-safe by construction (see ``bench.results.files``): one ``write`` per line, flushed at
once, fsynced after each batch; a line torn by a crash is never glued to the next one.
Reading goes through ``bench.results.folder`` (validated rows, corrupt lines counted);
``read_meta`` and ``rows`` are its shortcuts for a run being resumed.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import IO, Any

from bench.errors import BadMeta
from bench.results.files import LOGS, META, RUNS, clean, dumps_line
from bench.results.folder import check_written, read_meta, read_rows


class RunStore:
    """One run's directory: writes meta.json and appends JSON lines (opened on first use)."""

    def __init__(self, directory: Path | str):
        self.directory = Path(directory)
        self._files: dict[str, IO[str]] = {}
        self._lock = threading.Lock()  # the outcome phase's lanes append from threads

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
        tmp.write_text(json.dumps(clean(meta), sort_keys=True, indent=2, default=str) + "\n")
        os.replace(tmp, target)

    def read_meta(self) -> dict[str, Any]:
        """meta.json of a run to resume, checked: ``BadMeta`` (one line) when it is corrupt,
        missing, or has no ``config``."""
        path = self.path(META)
        meta = read_meta(path)
        if meta is None:
            raise BadMeta(f"{path}: not found")
        if "config" not in meta:
            raise BadMeta(f"{path}: config missing (the run's options are unknown)")
        return meta

    def rows(self, name: str = RUNS) -> list[Any]:
        """The valid rows of one JSON-lines file, typed (corrupt lines left out)."""
        return read_rows(self.path(name)).rows

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
        """Append one row and flush it to the OS (survives our own crash). A row its file's
        model refuses is not written (``RowRejected``: ``folder.check_written``)."""
        line = dumps_line(row)
        check_written(name, line)
        with self._lock:
            handle = self._file(name)
            handle.write(line)
            handle.flush()

    def sync(self) -> None:
        """fsync every open file (survives a machine crash); called after each batch."""
        with self._lock:
            for handle in self._files.values():
                handle.flush()
                os.fsync(handle.fileno())

    def close(self) -> None:
        for handle in self._files.values():
            handle.close()
        self._files.clear()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"
