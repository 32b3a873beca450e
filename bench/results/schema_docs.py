"""The tables of docs/measurement.md that describe the result files, rendered from the row
models and metric lists that define them, so that the docs cannot drift from the code.

Each table sits between two markers in the document (``<!-- generated: NAME -->`` and
``<!-- end: NAME -->``). ``python -m bench.results.schema_docs`` rewrites them; with
``--check`` it changes nothing and exits 1 when a table is stale
(``tests/results/test_schema_docs.py`` runs the check).
"""

from __future__ import annotations

import argparse
import re
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from bench.results.metrics import FULL_METRICS, MEDIAN_METRICS
from bench.results.rows import Row, RunMeasurement, RunRow
from bench.results.summary import FULL_STATS

DOC = Path(__file__).resolve().parents[2] / "docs" / "measurement.md"


def type_label(annotation: object) -> str:
    """How the docs write a field's JSON type: ``int``, ``float|null``, ``[str]``, ``object``."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        labels = [type_label(a) for a in args if a is not type(None)]
        return "|".join(labels) + ("|null" if type(None) in args else "")
    if origin is typing.Literal:
        return "str"
    if origin in (tuple, list):
        return f"[{type_label(args[0])}]" if args else "[]"
    if origin is dict or annotation is dict:
        return "object"
    return getattr(annotation, "__name__", str(annotation))


def _own_fields(model: type[BaseModel]) -> list[str]:
    """The fields ``model`` itself declares, in declaration order."""
    return [name for name in model.__annotations__ if name in model.model_fields]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def field_table(models: list[type[BaseModel]]) -> str:
    """A markdown table of the fields each model declares (``field | type | meaning``), the
    models' fields in the given order; the meaning is the field's description."""
    widest = models[0]  # the most derived model: it has every field of the others
    lines = ["| field | type | meaning |", "|---|---|---|"]
    for model in models:
        for name in _own_fields(model):
            info = widest.model_fields[name]
            label = type_label(info.annotation)
            lines.append(f"| `{name}` | {_cell(label)} | {_cell(info.description or '')} |")
    return "\n".join(lines)


def runs_table() -> str:
    """runs.jsonl's fields: which run it was, what was measured, where it was measured."""
    return field_table([RunRow, RunMeasurement, Row])


def summary_metrics_table() -> str:
    """summary.csv's per-metric statistic columns (``bench.results.metrics``)."""
    full = ", ".join(f"`{m}`" for m in FULL_METRICS)
    medians = ", ".join(f"`{m}_median`" for m in MEDIAN_METRICS)
    return "\n".join(
        [
            "| columns | meaning |",
            "|---|---|",
            f"| `{{metric}}_{{{','.join(FULL_STATS)}}}` for {full} | the metric's statistics; "
            "`ci_*` = 95 % bootstrap CI of the median |",
            f"| {medians} | medians per run (overhead per step: of each run's "
            "`overhead_ms / llm_calls`) |",
        ]
    )


TABLES: dict[str, Callable[[], str]] = {
    "runs.jsonl fields": runs_table,
    "summary.csv metrics": summary_metrics_table,
}


def _block(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(<!-- generated: {re.escape(name)} [^>]*-->\n\n)(.*?)(\n\n<!-- end: {re.escape(name)} -->)",
        re.S,
    )


def _escaped(replacement: str) -> str:
    """``replacement`` as ``re.sub`` writes it literally (its backslashes doubled)."""
    return replacement.replace("\\", "\\\\")


def render(text: str) -> str:
    """``text`` with every generated table rewritten; a missing marker is an error."""
    for name, make in TABLES.items():
        pattern = _block(name)
        if not pattern.search(text):
            raise ValueError(f"{DOC.name}: no '<!-- generated: {name} ... -->' block")
        text = pattern.sub(rf"\g<1>{_escaped(make())}\g<3>", text)
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="exit 1 if a table is stale")
    args = parser.parse_args(argv)
    text = DOC.read_text(encoding="utf-8")
    fresh = render(text)
    if fresh == text:
        return 0
    if args.check:
        print(f"{DOC}: generated tables are stale; run python -m bench.results.schema_docs")
        return 1
    DOC.write_text(fresh, encoding="utf-8")
    print(f"rewrote the generated tables of {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
