"""One style per engine, used by every chart, so an engine looks the same everywhere.

Colours are the Okabe-Ito colour-blind-safe set; every engine also has its own marker,
hatch and line style, so the charts still read when printed in greyscale.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineStyle:
    color: str
    marker: str
    hatch: str
    linestyle: str | tuple[int, tuple[int, ...]]


STYLES: dict[str, EngineStyle] = {
    "raw": EngineStyle("#000000", "o", "", "-"),
    "scheduler": EngineStyle("#0072B2", "s", "//", "-"),
    "scheduler-stream": EngineStyle("#56B4E9", "D", "\\\\", "--"),
    "lc-agentexecutor": EngineStyle("#D55E00", "^", "xx", "-"),
    "lc-agentexecutor-nostream": EngineStyle("#E69F00", "v", "..", "--"),
    "lc-react": EngineStyle("#CC79A7", "P", "++", "-."),
    "lc-create-agent": EngineStyle("#009E73", "X", "oo", ":"),
}

_SPARE = (
    EngineStyle("#999999", "h", "--", (0, (3, 1, 1, 1))),
    EngineStyle("#F0E442", "*", "||", (0, (5, 2))),
    EngineStyle("#882255", "p", "**", (0, (1, 2))),
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
