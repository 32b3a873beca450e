"""Which engine of each side a rule reads (debug modes, the catalogue, our scheduler beside)."""

from __future__ import annotations

from collections.abc import Mapping

from bench.engines.registry import REGISTRY, REPRESENTATIVE, counterpart
from bench.report.facts import Facts, Side


def debug_engine(f: Facts, side: Side | None) -> str | None:
    if side is None:
        return None
    for engine in (side.production, side.default):
        if engine and engine in f.debug_recall:
            return engine
    return None


def catalogue_engines(family: str, facts: Mapping[str, object]) -> list[str]:
    """The engines of ``family`` in a catalogue fact (``facts``), its representative first."""
    mine = [e for e in facts if e in REGISTRY and REGISTRY[e].family == family]
    lead = REPRESENTATIVE.get(family)
    return sorted(mine, key=lambda e: (e != lead, list(REGISTRY).index(e)))


def _shared_statements(f: Facts, engine: str, other: str) -> tuple[int, int, int]:
    """(statements of ``engine``, of ``other``, customisations) over the cells both do."""
    a, b = f.catalogue_statements.get(engine, {}), f.catalogue_statements.get(other, {})
    both = sorted(set(a) & set(b))
    return sum(a[k] for k in both), sum(b[k] for k in both), len(both)


def _self_built_beside(engine: str, names: Mapping[str, object]) -> str | None:
    """Among ``names``: our scheduler in ``engine``'s streaming mode, its counterpart first."""
    pair = counterpart(engine)
    if pair is not None and pair.other in names:
        return pair.other
    streams = REGISTRY[engine].streams
    return next(
        (
            n
            for n in names
            if n in REGISTRY and REGISTRY[n].role == "self-built" and REGISTRY[n].streams == streams
        ),
        None,
    )
