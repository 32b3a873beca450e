"""Shards of one run, measured on several hosts, merged into one run folder
(``schedbench merge``; the split: ``bench.runner.shard``).

What the merge checks before it writes anything (a ``MergeError`` names the folder and the
reason): every folder is a shard of the same split (``config.shard`` ``i/n``, the same
``shard_scenarios``), every index from 1 to n is there exactly once, the shards measured the
same code (git sha) with the same options (everything but the shard's own scenarios and
phase switches), and the output folder holds no run yet.

What it writes:

- each JSON-lines file (runs, ttft, throughput, footprint, load) is the shards' lines in
  shard order, every row tagged with its ``shard`` and ``host``; the scenarios of two
  shards never overlap, so no row replaces another. A line that is not a JSON object, or
  not a row its file's model reads (the store is strict on write), is left out and counted
  (``Merged.skipped``), as the folder reader would;
- ``versions.json`` comes from the shard that measured the version matrix;
- shards that played copies of the scenarios kept in their own folders (``schedbench decide
  --shard``) must have played the same files; they are kept once, in the merged folder's
  ``scenarios/``, and its ``config.scenario_dir`` points there;
- meta.json is shard 1's with the whole run's ``config`` (every scenario, each phase on
  if a shard ran it, no ``shard``), ``complete`` when every shard is, ``duration_s`` the
  longest shard's (the hosts ran side by side) and ``shards``: per shard its index, host,
  machine (yardstick included), git, scenarios, phases, duration and completeness.

Every per-scenario figure, and so every per-scenario ratio, comes from one host; a pooled
ratio is the geometric mean of within-host ratios (``bench.results.pooling`` pairs engines
within a round, and a round's scenarios of one host were measured in that host's process).
Absolute times mix the hosts: meta.json's ``shards`` says whose machine measured what.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import MergeError, RowRejected
from bench.results import metrics, stats
from bench.results.files import FOOTPRINT, LOAD, META, RUNS, THROUGHPUT, TTFT, VERSIONS
from bench.results.folder import read_meta
from bench.results.store import RunStore

ROW_FILES = (RUNS, TTFT, THROUGHPUT, FOOTPRINT, LOAD)
PHASES = ("footprint", "versions", "ttft", "throughput", "load")
# config fields a shard sets for itself: everything else must agree across the shards
OWN_FIELDS = frozenset({"scenarios", "shard", *PHASES, "load_budget_s"})
PLAYED = "scenarios"  # a run folder's own copies of what it played (schedbench decide)


@dataclass
class Merged:
    """What ``merge`` wrote."""

    directory: Path
    shards: int
    rows: dict[str, int] = field(default_factory=dict)  # file -> rows written
    skipped: dict[str, int] = field(default_factory=dict)  # file -> lines left out
    complete: bool = True
    hosts: tuple[str, ...] = ()
    # shard index -> the cores other processes used on its host while it ran, for the
    # shards whose host was busy (``metrics.CONTENDED`` or more): their ratios may be off
    busy: dict[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Shard:
    directory: Path
    meta: dict[str, Any]
    index: int
    count: int

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.meta["config"])

    @property
    def host(self) -> str:
        machine = self.meta.get("machine") or {}
        return str(machine.get("hostname") or f"shard {self.index}")

    @property
    def own_copies(self) -> Path | None:
        """The shard's own ``scenarios/`` when it played copies kept in its folder
        (``schedbench decide --shard``: its scenario_dir was ``<its folder>/scenarios``
        wherever that folder was when it ran), else None."""
        played = self.config.get("scenario_dir")
        if not played:
            return None
        where = Path(str(played))
        mine = self.directory / PLAYED
        if where.name == PLAYED and where.parent.name == self.directory.name and mine.is_dir():
            return mine
        return None


def _copies(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.yaml"))}


def _read_shard(directory: Path) -> _Shard:
    meta = read_meta(directory / META)
    if meta is None:
        raise MergeError(f"{directory}: no meta.json (not a run folder)")
    config = meta.get("config")
    if not isinstance(config, dict):
        raise MergeError(f"{directory}/meta.json: config missing")
    shard = config.get("shard")
    if not isinstance(shard, str) or "/" not in shard:
        raise MergeError(f"{directory}: not a shard (run it with `schedbench run --shard I/N`)")
    index, count = (int(v) for v in shard.split("/"))
    return _Shard(directory, meta, index, count)


def _check(shards: Sequence[_Shard]) -> None:
    if not shards:
        raise MergeError("no shard folders given")
    first = shards[0]
    for shard in shards:
        if shard.count != first.count:
            raise MergeError(
                f"{shard.directory}: shard {shard.index}/{shard.count}, but {first.directory} "
                f"is one of {first.count}"
            )
    seen: dict[int, Path] = {}
    for shard in shards:
        if shard.index in seen:
            raise MergeError(
                f"{shard.directory}: shard {shard.index}/{shard.count} again "
                f"(also {seen[shard.index]})"
            )
        seen[shard.index] = shard.directory
    missing = sorted(set(range(1, first.count + 1)) - set(seen))
    if missing:
        raise MergeError(
            f"shard(s) {', '.join(f'{i}/{first.count}' for i in missing)} missing: "
            "merge needs every shard of the run"
        )
    # shards that play copies in their own folders agree on the copies, not on the path
    own = OWN_FIELDS | ({"scenario_dir"} if all(s.own_copies for s in shards) else set())
    base = {k: v for k, v in first.config.items() if k not in own}
    sha = (first.meta.get("git") or {}).get("sha")
    for shard in shards[1:]:
        if "scenario_dir" in own:
            mine, theirs_dir = first.own_copies, shard.own_copies
            assert mine is not None and theirs_dir is not None
            if _copies(mine) != _copies(theirs_dir):
                raise MergeError(
                    f"{theirs_dir}: the scenarios it played differ from {mine}'s: shards must "
                    "play the same scenarios"
                )
        theirs = {k: v for k, v in shard.config.items() if k not in own}
        differ = sorted(k for k in base.keys() | theirs.keys() if base.get(k) != theirs.get(k))
        if differ:
            raise MergeError(
                f"{shard.directory}: options differ from {first.directory}'s: {', '.join(differ)}"
            )
        other = (shard.meta.get("git") or {}).get("sha")
        if other != sha:
            raise MergeError(
                f"{shard.directory}: measured code {other or 'unknown'}, "
                f"{first.directory} {sha or 'unknown'}: shards must run the same commit"
            )


def _scenario_order(shards: Sequence[_Shard]) -> list[str]:
    """The whole run's scenarios: the split's parts, each scenario once, in the order of the
    scenario files where they can be read (else part by part)."""
    parts = shards[0].config.get("shard_scenarios") or [s.config["scenarios"] for s in shards]
    names = [name for part in parts for name in part]
    try:
        from scenarios import load_scenarios

        order = {n: i for i, n in enumerate(load_scenarios(shards[0].config.get("scenario_dir")))}
    except Exception:  # the files are not here: the parts' order is still a complete list
        order = {}
    position = {n: i for i, n in enumerate(names)}
    return sorted(dict.fromkeys(names), key=lambda n: (order.get(n, len(order)), position[n]))


def _merged_meta(shards: Sequence[_Shard], scenarios: list[str]) -> dict[str, Any]:
    first = shards[0]
    config = first.config
    config.update(scenarios=scenarios, shard=None)
    for phase in PHASES:
        config[phase] = any(bool(s.config.get(phase, True)) for s in shards)
    meta = dict(first.meta)
    meta["config"] = config
    meta["complete"] = all(bool(s.meta.get("complete")) for s in shards)
    meta["duration_s"] = max(float(s.meta.get("duration_s") or 0.0) for s in shards)
    meta["started_at"] = min(str(s.meta.get("started_at") or "") for s in shards)
    meta["ended_at"] = max(str(s.meta.get("ended_at") or "") for s in shards)
    meta["shards"] = [
        {
            "index": s.index,
            "count": s.count,
            "host": s.host,
            "folder": str(s.directory),
            "machine": s.meta.get("machine"),
            "git": s.meta.get("git"),
            "scenarios": list(s.config.get("scenarios") or ()),
            "phases": [p for p in PHASES if s.config.get(p, True)],
            "duration_s": s.meta.get("duration_s"),
            "complete": s.meta.get("complete"),
            "phase_s": (s.meta.get("outcome") or {}).get("phase_s"),
        }
        for s in shards
    ]
    meta["outcome"] = _summed_outcome([s.meta.get("outcome") or {} for s in shards])
    return meta


def _summed_outcome(outcomes: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The shards' outcome counters added up (lists joined, phase seconds per phase)."""
    out: dict[str, Any] = {}
    for outcome in outcomes:
        for key, value in outcome.items():
            if isinstance(value, bool) or value is None or isinstance(value, str):
                out.setdefault(key, value)
            elif isinstance(value, int | float):  # a shard without it (None) adds nothing
                out[key] = (out.get(key) or 0) + value
            elif isinstance(value, list):
                out[key] = [*out.get(key, []), *value]
            elif isinstance(value, dict):
                total = dict(out.get(key, {}))
                for name, seconds in value.items():
                    if isinstance(seconds, int | float):
                        total[name] = round(total.get(name, 0) + seconds, 1)
                out[key] = total
    return out


def _copy_rows(shards: Sequence[_Shard], name: str, store: RunStore, merged: Merged) -> None:
    written = skipped = 0
    for shard in shards:
        path = shard.directory / name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                row = None
            if not isinstance(row, dict):
                skipped += 1
                continue
            row["shard"], row["host"] = shard.index, shard.host
            try:
                store.append(name, row)
            except RowRejected:  # a corrupt line of the shard's: left out and counted
                skipped += 1
                continue
            written += 1
    store.sync()
    if written:
        merged.rows[name] = written
    if skipped:
        merged.skipped[name] = skipped


def merge(directories: Sequence[Path | str], out: Path | str) -> Merged:
    """Merge the shard folders ``directories`` into the new run folder ``out``."""
    shards = sorted((_read_shard(Path(d)) for d in directories), key=lambda s: s.index)
    _check(shards)
    store = RunStore(out)
    if store.exists():
        raise MergeError(f"{store.directory}: already holds a run; choose another directory")
    played = shards[0].own_copies
    if played is not None:  # the copies every shard played: kept once, in the merged folder
        for shard in shards:
            shard.meta["config"]["scenario_dir"] = str(played)
    scenarios = _scenario_order(shards)
    meta = _merged_meta(shards, scenarios)
    store.create()
    if played is not None:
        shutil.copytree(played, store.directory / PLAYED)
        meta["config"]["scenario_dir"] = str((store.directory / PLAYED).resolve())
    merged = Merged(store.directory, len(shards), complete=bool(meta["complete"]))
    merged.hosts = tuple(dict.fromkeys(s.host for s in shards))
    for shard in shards:
        other = stats.number((shard.meta.get("machine") or {}).get("other_cores"))
        if other is not None and other >= metrics.CONTENDED:
            merged.busy[shard.index] = other
    with store:
        for name in ROW_FILES:
            _copy_rows(shards, name, store, merged)
    for shard in shards:
        if (shard.directory / VERSIONS).exists():
            shutil.copyfile(shard.directory / VERSIONS, store.path(VERSIONS))
            break
    store.write_meta(meta)
    return merged


__all__ = ["OWN_FIELDS", "ROW_FILES", "MergeError", "Merged", "merge"]
