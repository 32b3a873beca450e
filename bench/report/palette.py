"""One style per engine, used by every chart, so an engine looks the same everywhere.

Colours are the Okabe-Ito colour-blind-safe set; every engine also has its own marker,
hatch and line style, so the charts still read when printed in greyscale.
"""

from __future__ import annotations

from bench.engines.registry import REGISTRY, EngineStyle

STYLES: dict[str, EngineStyle] = {name: spec.style for name, spec in REGISTRY.items()}

# for engines the registry does not know (an experiment, the tests' fake engines)
_SPARE = (
    EngineStyle("#BBBBBB", "1", "\\\\\\", (0, (3, 1, 1, 1))),
    EngineStyle("#F0E442", "2", "-\\", (0, (5, 2))),
    EngineStyle("#44AA99", "3", "x.", (0, (1, 2))),
)

# Fault-matrix outcomes: colour and hatch (the outcome is also printed in the cell).
OUTCOME_STYLES: dict[str, tuple[str, str]] = {
    "recovered": ("#009E73", ""),
    "completed": ("#56B4E9", ""),
    "failed": ("#F0E442", "//"),
    "aborted": ("#E69F00", ".."),
    "error": ("#D55E00", "xx"),
    "not run": ("#FFFFFF", ""),
}


def style(engine: str) -> EngineStyle:
    """The engine's style; unknown engines get a stable spare style."""
    if engine in STYLES:
        return STYLES[engine]
    return _SPARE[sum(map(ord, engine)) % len(_SPARE)]
