"""The results cache: exact results of an earlier run, reused when nothing they depend on
changed (in the spirit of asv's results directory).

Only results that are exact are kept: what an outcome cell ended as (status, termination,
expectations met, LLM calls, tokens, tools run) and what the version matrix's programs did.
A cell with a run cut by its wall-clock deadline is not exact (how many calls fitted before
the deadline depends on the machine's speed): it is measured every time (``cacheable``).
Never a timing: a reused row has every field of ``bench.results.rows.TIMINGS`` null and says
which run it repeats (``reused_from``), so each timing the report prints was measured in its
own run.

An entry's key is a hash of everything the result depends on: the harness's and the engines'
code (``code_fingerprint``: every source file under ``bench/`` but the report, ``scheduler/``,
``langchain_baseline/`` and the scenario loader), the engine's environment (every installed
package and its version) and Python, the scenario as loaded, and the cell's settings (latency
profile, transport, runs and confirmations, seed, handler policy). A change to any of them
is a different key, so a stale entry is never read; nothing is ever invalidated by hand.
Only built-in engines are cached (``cached_engine``): a plug-in's code is not in the key.

Entries live under ``$SCHEDBENCH_CACHE_DIR`` (default ``~/.cache/schedbench``), one JSON file
each, written atomically: two runs sharing the directory at worst both measure a cell.
``schedbench run --no-cache`` neither reads nor writes it; ``SCHEDBENCH_CACHE_DIR=off`` does
the same for every run (the tests run so, but for the cache's own).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from bench import PROJECT_ROOT
from bench.engines.plugins import engine_targets
from bench.engines.registry import REGISTRY
from bench.model.caches import cache_directory
from bench.results.rows import TIMINGS

# bumped when what an entry holds (or may hold) changes: every older entry is then a miss
# (2: cells cut by their deadline are no longer kept)
FORMAT = 2
# the code a result depends on: the harness but its report (which only reads results), the
# scheduler, the LangChain baselines and the scenario loader (scenario files are keyed each)
CODE_ROOTS = ("bench", "scheduler", "langchain_baseline", "scenarios")
CODE_EXCLUDED = ("bench/report",)


@cache
def code_fingerprint(root: Path = PROJECT_ROOT) -> str:
    """A hash of every Python source file a result could depend on (``CODE_ROOTS`` less
    ``CODE_EXCLUDED``), by path and content."""
    digest = hashlib.sha256()
    for top in CODE_ROOTS:
        for path in sorted((root / top).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if any(relative.startswith(f"{excluded}/") for excluded in CODE_EXCLUDED):
                continue
            digest.update(relative.encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


def cached_engine(engine: str) -> bool:
    """Whether ``engine``'s results may be cached: a built-in engine (its code is in
    ``code_fingerprint``), not a plug-in (``SCHEDBENCH_ENGINES``), whose code could change
    unseen: a plug-in is always measured."""
    spec = REGISTRY.get(engine)
    return spec is not None and engine_targets().get(engine) == spec.target


def key_of(parts: Mapping[str, Any]) -> str:
    """The entry key of ``parts`` (JSON-able): a SHA-256 of their canonical JSON."""
    text = json.dumps({"format": FORMAT, **parts}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def without_timings(row: Mapping[str, Any], reused_from: str) -> dict[str, Any]:
    """``row`` as a reused row: every timing null, the run it repeats named, no process."""
    kept = {k: v for k, v in row.items() if k not in TIMINGS}
    return {**kept, **dict.fromkeys(sorted(TIMINGS & set(row))), "reused_from": reused_from}


class ResultsCache:
    """Exact results by key, in ``directory`` (see the module docstring); ``None``: off."""

    def __init__(self, directory: Path | None, *, provenance: str):
        self.directory = directory
        self.provenance = provenance  # what a reused row names as its source: when and which code
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()  # the outcome phase's lanes are threads

    @classmethod
    def for_run(cls, enabled: bool, git_sha: str | None) -> ResultsCache:
        """The run's cache: the default directory (or off), entries stamped with this run."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        provenance = f"{stamp} (git {git_sha[:10] if git_sha else 'unknown'})"
        return cls(cache_directory() if enabled else None, provenance=provenance)

    @property
    def enabled(self) -> bool:
        return self.directory is not None

    def _path(self, kind: str, key: str) -> Path:
        assert self.directory is not None
        return self.directory / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        """The entry ``key`` of ``kind`` (``{"provenance", "value"}``), or None (a miss, an
        unreadable entry, or the cache off)."""
        if self.directory is None:
            return None
        try:
            entry = json.loads(self._path(kind, key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entry = None
        found = isinstance(entry, dict) and entry.get("key") == key
        with self._lock:
            if found:
                self.hits += 1
            else:
                self.misses += 1
        return entry if found else None

    def put(self, kind: str, key: str, parts: Mapping[str, Any], value: Any) -> None:
        """Store ``value`` under ``key`` (with the ``parts`` it was keyed on, for a reader)."""
        if self.directory is None:
            return
        path = self._path(kind, key)
        entry = {"key": key, "parts": parts, "provenance": self.provenance, "value": value}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
            partial.write_text(json.dumps(entry, sort_keys=True), encoding="utf-8")
            os.replace(partial, path)
        except OSError:
            pass  # a cache that cannot be written only costs the next run the measurement

    def summary(self) -> dict[str, Any]:
        """What meta.json records of the cache."""
        return {
            "directory": str(self.directory) if self.directory else None,
            "hits": self.hits,
            "misses": self.misses,
        }


def environment_parts(packages: Mapping[str, Any] | None) -> dict[str, Any]:
    """The key parts of an engine's environment: its packages and versions, and Python."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "packages": dict(sorted((packages or {}).items())),
    }


# terminations that make a row no exact result: the harness's own failures, and a run cut by
# its wall-clock deadline, whose calls and tokens are how many fitted before it (measured
# twice, agno's loop_detection made 154 and 139 calls in its 10 s)
NOT_EXACT = ("harness_error", "env_unavailable", "worker_crash", "timeout")


def cacheable(rows: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a cell's rows are an exact result worth keeping: some rows, none written for a
    crashed worker, none a harness error, none cut by its deadline (``NOT_EXACT``)."""
    listed: Sequence[Mapping[str, Any]] = list(rows)
    return bool(listed) and not any(
        r.get("crashed") or r.get("termination") in NOT_EXACT for r in listed
    )


__all__ = [
    "CODE_EXCLUDED",
    "CODE_ROOTS",
    "FORMAT",
    "NOT_EXACT",
    "ResultsCache",
    "cacheable",
    "cached_engine",
    "code_fingerprint",
    "environment_parts",
    "key_of",
    "without_timings",
]
