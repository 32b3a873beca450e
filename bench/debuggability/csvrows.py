"""The pieces of debuggability.csv both writers share: where the raw outputs go, a mode's
cost as CSV columns, and reading the CSV back."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from bench.debuggability.capture import ModeCost

OUTPUTS_DIR = "debug"


def cost_fields(cost: ModeCost | None) -> dict[str, Any]:
    """The CSV columns of a mode's cost (empty when it was not measured)."""
    return {
        "mode_cost_ms": "" if cost is None else round(cost.cost_ms, 3),
        "mode_off_ms": "" if cost is None else round(cost.off_ms, 3),
        "mode_on_ms": "" if cost is None else round(cost.on_ms, 3),
        "cost_scenario": "" if cost is None else cost.scenario,
        "cost_runs": "" if cost is None else cost.runs,
    }


def read_rows(path: Path | str) -> list[dict[str, str]]:
    with Path(path).open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))
