"""The one reader of a run directory: meta.json checked, every row typed, corrupt lines counted.

``load_run_folder(path)`` reads everything ``schedbench run`` (and ``debug-score``) wrote:

- ``meta.json``: must be a JSON object of a known ``schema_version`` major; anything else
  is a ``BadMeta`` whose message is one line naming the file and the reason. An absent
  meta.json is allowed (an empty ``meta`` plus a note): rows alone are still a run.
- ``runs.jsonl``, ``ttft.jsonl``, ``throughput.jsonl``, ``footprint.jsonl``, ``load.jsonl``:
  one typed row per valid line (``bench.results.rows``). A line that is not JSON, not an
  object, or has a field of the wrong type (a torn last line included) is skipped and
  recorded as a ``Skipped`` (file, line number, reason): consumers print them and count them.
- ``debuggability.csv`` (when the run was scored): typed the same way, per CSV line.
- ``profile.jsonl`` (when the profiling probe ran: ``schedbench probe``): typed likewise.
- ``catalogue.json`` (when ``schedbench catalogue`` ran): one JSON document, its cells and
  programs typed one by one (a bad one is skipped and recorded like a bad line; a file that
  is not a catalogue of a known schema version is skipped whole, with the reason).
- ``versions.json`` (when the run measured LangChain lines): the version table (a legacy one,
  the back-port direction, is read as such: ``read_versions``); a file that is not one is
  left out as a ``Skipped`` (line 0) with the reason.
- ``multimodel.json`` (when the multi-model check ran: ``schedbench multimodel``): one typed
  document; a corrupt one is left out as a ``Skipped`` (line 0) with the reason.

Then the later row of each key wins (``latest``): a run retried by ``--resume`` replaces
its crashed row.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from bench.errors import BadMeta, NotARunFolder, RowRejected, RunFolderError
from bench.results.files import (
    CATALOGUE,
    DEBUG_CSV,
    FOOTPRINT,
    LOAD,
    LOAD_KEY,
    META,
    MULTIMODEL,
    MULTIMODEL_SCHEMA_VERSION,
    PROFILE,
    PROFILE_KEY,
    RUN_KEY,
    RUNS,
    SCHEMA_VERSION,
    THROUGHPUT,
    THROUGHPUT_KEY,
    TTFT,
    TTFT_KEY,
    VERSIONS,
    read_regular,
)
from bench.results.rows import (
    CatalogueCellRow,
    CatalogueCustomisation,
    CatalogueRecord,
    CatalogueSkipped,
    DebugRow,
    FootprintRow,
    LegacyVersionRow,
    LoadRow,
    Meta,
    MultiModelFile,
    ProfileRow,
    R,
    RunRow,
    SimplicityRow,
    ThroughputRow,
    TtftRow,
    VersionRow,
    latest,
    timed,
)

DEFAULT_SEED = 0  # the bootstrap seed of a run whose config does not say (RunConfig.seed)

MODELS: dict[str, type[BaseModel]] = {
    RUNS: RunRow,
    TTFT: TtftRow,
    THROUGHPUT: ThroughputRow,
    FOOTPRINT: FootprintRow,
    LOAD: LoadRow,
    DEBUG_CSV: DebugRow,
    PROFILE: ProfileRow,
}


@dataclass(frozen=True)
class Skipped:
    """A line left out because it is not a valid row."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        if not self.line:  # a JSON document's entry, not a line
            return f"{self.file}: {self.reason}"
        return f"{self.file} line {self.line}: {self.reason}"


@dataclass(frozen=True)
class Rows:
    """The valid rows of one file (in file order) and the lines skipped."""

    rows: list[Any]
    skipped: list[Skipped]


def error_text(exc: ValidationError) -> str:
    """The first error of a validation, as ``field.path[2]: reason`` on one line."""
    first = exc.errors(include_url=False)[0]
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    message = " ".join(str(first["msg"]).split())
    return f"{where.lstrip('.')}: {message}" if where else message


def read_rows(path: Path, model: type[BaseModel] | None = None) -> Rows:
    """Every valid line of a JSON-lines file as ``model`` (by default, the file's own)."""
    model = model or MODELS[path.name]
    rows: list[Any] = []
    skipped: list[Skipped] = []
    if not path.exists():
        return Rows(rows, skipped)
    try:
        lines = read_regular(path).split(b"\n")
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot be read ({exc.strerror})") from None
    torn = lines[-1].strip() != b""  # the file does not end with a newline
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(model.model_validate_json(line))
        except ValidationError as exc:
            reason = error_text(exc)
            if torn and number == len(lines):
                reason = f"torn last line, a write cut short ({reason})"
            skipped.append(Skipped(path.name, number, reason))
    return Rows(rows, skipped)


def check_written(name: str, line: str) -> None:
    """Refuse a line about to be appended to ``name`` that its model would not read as
    written: a wrong type, or a field the model does not know (a typo such as ``wal_ms``
    would otherwise be kept as an extra while ``wall_ms`` reads None). Reading stays open to
    fields a newer writer adds; writing is strict. A file without a model is not checked."""
    model = MODELS.get(name)
    if model is None:
        return
    try:
        parsed = model.model_validate_json(line)
    except ValidationError as exc:
        raise RowRejected(f"a {name} row: {error_text(exc)}") from None
    unknown = sorted(parsed.model_extra or ())
    if unknown:
        raise RowRejected(
            f"a {name} row: field(s) {', '.join(unknown)} unknown to {model.__name__}"
        )


def read_csv_rows(path: Path, model: type[BaseModel]) -> Rows:
    """Every valid row of a CSV file as ``model`` (line numbers count the header as 1)."""
    rows: list[Any] = []
    skipped: list[Skipped] = []
    try:
        with io.StringIO(read_regular(path).decode("utf-8"), newline="") as fh:
            reader = csv.DictReader(fh)
            for record in reader:
                try:
                    rows.append(model.model_validate(record))
                except ValidationError as exc:
                    skipped.append(Skipped(path.name, reader.line_num, error_text(exc)))
    except UnicodeDecodeError:
        skipped.append(Skipped(path.name, 0, "not UTF-8 text: file left out"))
    except csv.Error as exc:
        skipped.append(Skipped(path.name, 0, f"not CSV ({exc}): file left out"))
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot be read ({exc.strerror})") from None
    return Rows(rows, skipped)


def _typed(items: Any, model: type[R], where: str, skipped: list[Skipped]) -> tuple[R, ...]:
    out = []
    for i, item in enumerate(items if isinstance(items, list) else ()):
        try:
            out.append(model.model_validate_json(json.dumps(item)))  # JSON rules: arrays
        except ValidationError as exc:
            skipped.append(Skipped(CATALOGUE, 0, f"{where}[{i}]: {error_text(exc)}"))
    return tuple(out)


def _seconds(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else None


def read_catalogue(path: Path) -> tuple[CatalogueRecord | None, list[Skipped]]:
    """catalogue.json typed (None when absent or unreadable as a catalogue; see the module
    docstring), and what was skipped."""
    skipped: list[Skipped] = []
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return None, skipped
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        return None, [Skipped(CATALOGUE, 0, f"not valid JSON ({exc}): file left out")]
    version = data.get("schema_version") if isinstance(data, dict) else None
    # the record's schema_version is a strict int: "1" or 1.0 would fail its validation
    if not isinstance(data, dict) or type(version) is not int or version != 1:
        reason = f"not a catalogue of schema version 1 (schema_version={version!r}): file left out"
        return None, [Skipped(CATALOGUE, 0, reason)]
    record = CatalogueRecord(
        schema_version=version,
        started_at=data.get("started_at") if isinstance(data.get("started_at"), str) else None,
        duration_s=_seconds(data.get("duration_s")),
        customisations=_typed(
            data.get("customisations"), CatalogueCustomisation, "customisations", skipped
        ),
        cells=_typed(data.get("cells"), CatalogueCellRow, "cells", skipped),
        simplicity=_typed(data.get("simplicity"), SimplicityRow, "simplicity", skipped),
        skipped=_typed(data.get("skipped"), CatalogueSkipped, "skipped", skipped),
    )
    return record, skipped


def read_multimodel(path: Path) -> tuple[MultiModelFile | None, list[Skipped]]:
    """multimodel.json typed, or None (absent; or corrupt: then one ``Skipped`` says why)."""
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        document = MultiModelFile.model_validate_json(text)
    except ValidationError as exc:
        return None, [Skipped(path.name, 0, f"{error_text(exc)}: file left out")]
    if document.schema_version != MULTIMODEL_SCHEMA_VERSION:
        reason = (
            f"schema_version {document.schema_version} is not the one this schedbench reads "
            f"({MULTIMODEL_SCHEMA_VERSION}): file left out"
        )
        return None, [Skipped(path.name, 0, reason)]
    return document, []


def schema_major(version: object) -> int | None:
    """The major version of a ``schema_version`` (1, or "1.2" → 1); None if not one."""
    if isinstance(version, bool):
        return None
    if isinstance(version, int):
        return version
    head = str(version).split(".", 1)[0]
    return int(head) if head.isdigit() else None


def read_meta(path: Path) -> dict[str, Any] | None:
    """meta.json as a dict, checked (``BadMeta`` with one line); None when it is absent."""
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BadMeta(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except UnicodeDecodeError:
        raise BadMeta(f"{path}: not UTF-8 text") from None
    except ValueError as exc:
        where = (
            f" at line {exc.lineno} column {exc.colno}"
            if isinstance(exc, json.JSONDecodeError)
            else ""
        )
        raise BadMeta(f"{path}: not valid JSON ({getattr(exc, 'msg', exc)}{where})") from None
    if not isinstance(data, dict):
        raise BadMeta(f"{path}: expected a JSON object, got {type(data).__name__}")
    if "schema_version" not in data:
        raise BadMeta(f"{path}: schema_version missing (not written by schedbench run)")
    try:
        Meta.model_validate(data)
    except ValidationError as exc:
        raise BadMeta(f"{path}: {error_text(exc)}") from None
    major = schema_major(data["schema_version"])
    if major != SCHEMA_VERSION:
        newer = major is not None and major > SCHEMA_VERSION
        raise BadMeta(
            f"{path}: schema_version {data['schema_version']!r} is "
            + (
                f"newer than this schedbench reads ({SCHEMA_VERSION}); upgrade schedbench"
                if newer
                else f"not one this schedbench reads ({SCHEMA_VERSION})"
            )
        )
    return data


def finished_repeats(rows: Iterable[RunRow]) -> dict[tuple[str, str, str, int], set[int]]:
    """Batch key (engine, scenario, latency, round) → repeat indices measured (not crashed)."""
    done: dict[tuple[str, str, str, int], set[int]] = {}
    for row in timed(rows):
        if not row.crashed:
            done.setdefault((row.engine, row.scenario, row.latency, row.round), set()).add(
                row.repeat
            )
    return done


def finished_ttft(
    rows: Iterable[TtftRow], scenario: str, latency: str, transport: str
) -> dict[str, set[int]]:
    """Engine → repeat indices of the TTFT phase measured (not crashed) for this cell."""
    done: dict[str, set[int]] = {}
    for row in timed(rows, TTFT_KEY):
        if not row.crashed and (row.scenario, row.latency, row.transport) == (
            scenario,
            latency,
            transport,
        ):
            done.setdefault(row.engine, set()).add(row.repeat)
    return done


def read_versions(directory: Path | str) -> list[VersionRow] | None:
    """The version table of a run folder (None: the run measured no LangChain line).

    A legacy table (rows with ``runs_unchanged`` and no ``upgrades``: today's baseline
    back-ported to older lines, written before the upgrade direction) reads as rows with no
    upgrade measured and its columns under ``backport``; a table mixing both is refused.
    Raises ``ValueError`` naming the file and the reason when versions.json is not a
    version table (the run-folder loader turns that into a ``Skipped``)."""
    path = Path(directory) / VERSIONS
    if not path.exists():
        return None
    try:
        data = json.loads(read_regular(path).decode("utf-8"))
        rows = data["versions"] if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise ValueError("no list under 'versions'")
        legacy = [_is_legacy(row) for row in rows]
        if any(legacy) and not all(legacy):
            raise ValueError("legacy (back-port) rows mixed with upgrade rows")
        if rows and all(legacy):
            return [LegacyVersionRow.model_validate(row).as_row() for row in rows]
        return [VersionRow.model_validate(row) for row in rows]
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot be read ({exc.strerror})") from None
    except (ValueError, UnicodeDecodeError, ValidationError) as exc:
        raise ValueError(f"{path.name}: not a version table ({exc})".splitlines()[0]) from None


def _is_legacy(row: Any) -> bool:
    return isinstance(row, dict) and "runs_unchanged" in row and "upgrades" not in row


def run_seed(meta: dict[str, Any]) -> int:
    """The run's bootstrap seed (``--seed``), so that every reader draws the same intervals."""
    seed = (meta.get("config") or {}).get("seed")
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else DEFAULT_SEED


@dataclass(frozen=True)
class RunFolder:
    """Everything a run directory holds, typed; see the module docstring."""

    directory: Path
    meta: dict[str, Any]  # {} when meta.json is absent
    runs: list[RunRow]  # the latest row of each run key, warm-ups included
    ttft: list[TtftRow]  # likewise for the TTFT phase
    throughput: list[ThroughputRow]  # the latest row of each level
    footprint: list[FootprintRow]
    load: list[LoadRow]  # the latest row of each load level (and mock probe)
    debuggability: list[DebugRow] | None  # None: the run was not scored
    skipped: tuple[Skipped, ...]  # corrupt lines of every file
    notes: tuple[str, ...]  # what is absent (meta.json), for the caveats
    # the profiling probe's rows, the later row of each (engine, scenario); [] when not run
    profile: list[ProfileRow] = field(default_factory=list)
    # the customisation catalogue and false simplicity (catalogue.json); None when not run
    catalogue: CatalogueRecord | None = None
    multimodel: MultiModelFile | None = None  # the multi-model check; None when not run
    versions: list[VersionRow] | None = None  # the LangChain version matrix; None when not run

    @property
    def timed_runs(self) -> list[RunRow]:
        return [r for r in self.runs if r.phase == "timed"]

    @property
    def timed_ttft(self) -> list[TtftRow]:
        return [r for r in self.ttft if r.phase == "timed"]

    @property
    def config(self) -> dict[str, Any]:
        return self.meta.get("config") or {}

    @property
    def seed(self) -> int:
        return run_seed(self.meta)

    @property
    def engine_order(self) -> tuple[str, ...]:
        return tuple(str(e) for e in self.config.get("engines") or ())

    @property
    def scenario_order(self) -> tuple[str, ...]:
        return tuple(str(s) for s in self.config.get("scenarios") or ())

    def skipped_summary(self, limit: int = 5) -> str | None:
        """``3 corrupt rows skipped (runs.jsonl line 7: …; …)``, or None when none were."""
        if not self.skipped:
            return None
        shown = "; ".join(str(s) for s in self.skipped[:limit])
        more = f"; and {len(self.skipped) - limit} more" if len(self.skipped) > limit else ""
        count = len(self.skipped)
        return f"{count} corrupt row{'s' * (count != 1)} skipped ({shown}{more})"


def load_run_folder(directory: Path | str, *, require_runs: bool = True) -> RunFolder:
    """Read a run directory (``NotARunFolder``, ``BadMeta``: one line, see the module doc);
    ``require_runs=False`` reads one whose runs.jsonl is not written yet."""
    directory = Path(directory)
    if not directory.is_dir():
        raise NotARunFolder(f"{directory}: not a directory")
    if require_runs and not (directory / RUNS).exists():
        raise NotARunFolder(f"{directory}: no {RUNS} (not a schedbench run directory)")
    notes: list[str] = []
    meta = read_meta(directory / META)
    if meta is None:
        meta = {}
        notes.append(f"{META} not found: environment unknown.")
    names = (RUNS, TTFT, THROUGHPUT, FOOTPRINT, PROFILE, LOAD)
    parts = {name: read_rows(directory / name) for name in names}
    debug = None
    if (directory / DEBUG_CSV).exists():
        debug = read_csv_rows(directory / DEBUG_CSV, DebugRow)
    catalogue, catalogue_skipped = read_catalogue(directory / CATALOGUE)
    skipped = [s for part in (*parts.values(), *([debug] if debug else [])) for s in part.skipped]
    skipped += catalogue_skipped
    multimodel, bad = read_multimodel(directory / MULTIMODEL)
    skipped += bad
    try:
        versions = read_versions(directory)
    except ValueError as exc:
        versions = None
        skipped.append(Skipped(VERSIONS, 0, f"{exc}: file left out"))
    return RunFolder(
        directory=directory,
        meta=meta,
        runs=latest(parts[RUNS].rows, RUN_KEY),
        ttft=latest(parts[TTFT].rows, TTFT_KEY),
        throughput=latest(parts[THROUGHPUT].rows, THROUGHPUT_KEY),
        footprint=parts[FOOTPRINT].rows,
        load=latest(parts[LOAD].rows, LOAD_KEY),
        debuggability=debug.rows if debug else None,
        skipped=tuple(skipped),
        notes=tuple(notes),
        profile=latest(parts[PROFILE].rows, PROFILE_KEY),
        catalogue=catalogue,
        multimodel=multimodel,
        versions=versions,
    )
