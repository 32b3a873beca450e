"""cProfile's ``tottime`` grouped by package, for comparison with the sampler.

cProfile records, per function, its own time (``tottime``) and, per caller, the part of it
spent when called from that caller. Functions are grouped like everywhere in the probe
(``bench.probe.groups``): a Python function by its module; a C function (filename ``~``) and
a standard-library helper by its callers, its time split over them in proportion to the time
each call edge carries (recursively, for a helper called by a helper). The probe's own
functions are left out. There is no harness-subtree rule here (cProfile keeps no stacks): the
mock's ``json.loads`` counts as ``json``; compare with the sampler's ``leaf`` counts.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench.probe.counting import PROBE
from bench.probe.groups import HELPER, OTHER, group_of

FunctionKey = tuple[str, int, str]  # (filename, line, name), as cProfile keys them

_files: dict[str, str] = {}
_known: dict[str, str] = {}
_seen: set[str] = set()
_known_count = 0


def _module_files() -> dict[str, str]:
    """Real path of every loaded module's file → its name (refreshed when modules were added)."""
    global _known_count
    if len(sys.modules) != _known_count:
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None)
            if path and name not in _seen:
                _seen.add(name)
                _known.setdefault(os.path.realpath(path), name)
        _known_count = len(sys.modules)
    return _known


def module_of_file(filename: str, known: dict[str, str] | None = None) -> str | None:
    """The module a source file belongs to (None for C functions and unknown files)."""
    if filename == "~" or filename.startswith("<"):
        return None
    cached = _files.get(filename)
    if cached is not None:
        return cached
    known = known if known is not None else _module_files()
    real = os.path.realpath(filename)
    name = known.get(real)
    if name is None:
        parts = Path(real).with_suffix("").parts
        for marker in ("site-packages", "dist-packages"):
            if marker in parts:
                tail = parts[parts.index(marker) + 1 :]
                name = ".".join(p for p in tail if p != "__init__")
                break
    if name is not None:
        _files[filename] = name
    return name


def grouped_tottime(stats: dict[FunctionKey, tuple[Any, ...]]) -> dict[str, float]:
    """Seconds of ``tottime`` per group, from ``pstats.Stats(...).stats``."""
    known = _module_files()
    memo: dict[FunctionKey, dict[str, float]] = {}

    def own(key: FunctionKey) -> str:
        module = module_of_file(key[0], known)
        return HELPER if module is None else group_of(module)

    def shares(key: FunctionKey, seen: frozenset[FunctionKey]) -> dict[str, float]:
        if key in memo:
            return memo[key]
        group = own(key)
        if group != HELPER:
            result = {group: 1.0}
        else:
            callers = stats[key][4] if key in stats else {}
            weights = {c: edge[2] for c, edge in callers.items() if c not in seen}
            total = sum(weights.values())
            if not weights:
                result = {OTHER: 1.0}
            elif total <= 0:  # edges too short to time: split by call count
                weights = {c: callers[c][0] for c in weights}
                total = sum(weights.values()) or 1
            if weights:
                result = {}
                for caller, weight in weights.items():
                    for g, s in shares(caller, seen | {key}).items():
                        result[g] = result.get(g, 0.0) + s * weight / total
        memo[key] = result
        return result

    out: Counter[str] = Counter()
    for key, (_cc, _nc, tottime, _ct, _callers) in stats.items():
        for group, share in shares(key, frozenset({key})).items():
            if group != PROBE:
                out[group] += tottime * share
    return dict(out)
