"""The text a scenario tool returns: one canonical serialisation, shared by the tools every
engine runs (``bench.engines.kit.tools``) and by the mock, which recognises a successful result in the
conversation by this text (``Turn.retry``)."""

from __future__ import annotations

import json
from typing import Any

_FILLER = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
    "incididunt ut labore et dolore magna aliqua. "
)


def json_text(value: Any) -> str:
    """A result as the text an agent puts in its tool message (strings stay as they are)."""
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, ensure_ascii=False)


def pad_to_size(value: Any, size_kb: float) -> str:
    """``value`` as JSON text padded with a ``padding`` field to ``size_kb`` KiB (UTF-8)."""
    if isinstance(value, dict):
        base = dict(value)
    elif value is None:
        base = {}
    else:
        base = {"result": value}
    base["padding"] = ""
    target = int(size_kb * 1024)
    need = target - len(json.dumps(base, ensure_ascii=False).encode())
    if need > 0:
        base["padding"] = (_FILLER * (need // len(_FILLER) + 1))[:need]
    return json.dumps(base, ensure_ascii=False)


def result_text(value: Any, size_kb: float | None = None) -> str:
    """The tool's result text: padded when the behaviour asks for a size."""
    return pad_to_size(value, size_kb) if size_kb else json_text(value)
