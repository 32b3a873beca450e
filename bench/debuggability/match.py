"""The matching rules: how outputs and facts are normalised, and when a fact is found.

An output is either **structured** (a JSON document, or JSON lines) or **text**. Structured
output is flattened to one ``path: value`` line per leaf (list indices dropped, JSON held in
strings parsed and flattened too, durations converted to milliseconds, ``start_time`` /
``end_time`` pairs turned into a duration); text is used as printed. Both are then
normalised the same way (``normalise``) and every fact is looked for in the result, with a
rule per fact kind (``fact_found``). The rules are documented in ``docs/debuggability.md``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from bench.debuggability.truth import TERMINATION, TOKENS, Fact

LATENCY_REL_TOLERANCE = 0.5  # a duration matches within ±50 % ...
LATENCY_ABS_TOLERANCE_MS = 5.0  # ... or within ±5 ms, whichever is wider

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_QUOTES = re.compile(r"[\"'`\u2018\u2019\u201c\u201d]")
_SPACE = re.compile(r"\s+")
_PUNCT_SPACE = re.compile(r"\s*([:,{}\[\]()])\s*")
_DECIMAL = re.compile(r"(?<![\w.])(\d+)\.(\d+)(?![\w.])")
_DURATION = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?(?:e-?\d+)?)\s?(ms|milliseconds|s|sec|secs|seconds|us|µs)(?![a-z])"
)
_DURATION_KEY = re.compile(r"(duration|latency|elapsed|took|time)_?(ms|millis|s|sec|secs|seconds)$")
_UNIT_MS = {"ms": 1.0, "milliseconds": 1.0, "millis": 1.0, "us": 0.001, "µs": 0.001}


# -- normalisation -------------------------------------------------------------------------


def _unescape(text: str) -> str:
    """Undo JSON/Python string escaping, repeatedly (JSON inside JSON inside a repr)."""
    for _ in range(4):
        new = (
            text.replace("\\\\", "\x00")
            .replace("\\n", " ")
            .replace("\\r", " ")
            .replace("\\t", " ")
            .replace('\\"', '"')
            .replace("\\'", "'")
            .replace("\\/", "/")
        )
        new = _UNICODE_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), new).replace("\x00", "\\")
        if new == text:
            break
        text = new
    return text


def _number(match: re.Match[str]) -> str:
    whole, frac = match.group(1), match.group(2).rstrip("0")
    return f"{whole}.{frac}" if frac else whole


def normalise(text: str) -> str:
    """The form both outputs and facts are compared in (see docs/debuggability.md)."""
    text = _ANSI.sub("", text)
    text = _unescape(text)
    text = text.casefold()
    text = _QUOTES.sub("", text)
    text = text.replace("=", ":")
    text = _SPACE.sub(" ", text)
    text = _PUNCT_SPACE.sub(r"\1", text)
    text = _DECIMAL.sub(_number, text)
    return text.strip()


# -- structured output ---------------------------------------------------------------------


def parse_structured(text: str) -> Any | None:
    """The JSON value of ``text`` (a document or JSON lines), or None if it is not JSON."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        pass
    items = []
    for line in stripped.splitlines():
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except ValueError:
            return None
    return items


def _as_time(value: Any) -> datetime | None:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def _duration_leaf(key: str, value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    match = _DURATION_KEY.search(key.casefold())
    if match is None:
        return None
    unit = match.group(2)
    ms = value * _UNIT_MS.get(unit, 1000.0)
    return f"{ms:.4f}ms"


def flatten(value: Any, path: str = "") -> Iterator[str]:
    """``path: value`` lines of a JSON value (see the module docstring)."""
    if isinstance(value, dict):
        start, end = _as_time(value.get("start_time")), _as_time(value.get("end_time"))
        if start is not None and end is not None:
            ms = (end - start).total_seconds() * 1000
            yield f"{path}.duration_ms: {ms:.4f}ms" if path else f"duration_ms: {ms:.4f}ms"
        for key, item in value.items():
            yield from flatten(item, f"{path}.{key}" if path else str(key))
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from flatten(item, path)
        return
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and len(stripped) > 1:
            try:
                parsed = json.loads(stripped)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                yield from flatten(parsed, path)
                return
    key = path.rsplit(".", 1)[-1]
    duration = _duration_leaf(key, value)
    if duration is not None:
        yield f"{path}: {duration}"
        return
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    yield f"{path}: {text}"


def searchable(output: str) -> tuple[str, bool]:
    """(normalised text to search, whether the output was structured)."""
    parsed = parse_structured(output)
    if parsed is None:
        return normalise(output), False
    return normalise("\n".join(flatten(parsed))), True


# -- matching ------------------------------------------------------------------------------


def _needles(fact: Fact) -> list[str]:
    if fact.kind == TERMINATION:
        value = normalise(str(fact.value))
        base = [f"reason:{value}", f"termination:{value}", f"status:{value}"]
        return base + [normalise(a) for a in fact.alts]
    value = str(fact.value)
    main = f"{fact.key}:{value}" if fact.key else value
    return [normalise(main)] + [normalise(f"{fact.key}:{a}" if fact.key else a) for a in fact.alts]


def _tokens_found(text: str, n: int) -> bool:
    # a token label, then the number, or a list of counts that holds it ("tokens: 80 input,
    # 16 output" counts 16 as "output_tokens: 16" does)
    pattern = rf"token[\w.]*(?: used| count)?:?\s?(?:\d+ ?[a-z_]*,\s?)*{n}(?![\d.])"
    return re.search(pattern, text) is not None


def step_found(text: str, n: int) -> bool:
    """An explicit step label with the number ``n`` in normalised text (see the docs)."""
    # "seq:step:N" is LangChain's position inside a RunnableSequence, not an agent step
    pattern = rf"(?<![a-z])(?<!seq:)step[a-z_]*[ :#]{{0,2}}{n}(?![\d.])"
    return re.search(pattern, text) is not None


def durations_ms(text: str) -> list[float]:
    """Every ``<number><unit>`` duration in normalised text, in milliseconds."""
    out = []
    for number, unit in _DURATION.findall(text):
        try:
            value = float(number)
        except ValueError:
            continue
        out.append(value * _UNIT_MS.get(unit, 1000.0))
    return out


def latency_matches(facts: Sequence[Fact], durations: Sequence[float]) -> set[int]:
    """Indices of latency facts matched one-to-one to output durations (within tolerance)."""
    free = sorted(durations)
    used = [False] * len(free)
    found: set[int] = set()
    for i, fact in sorted(enumerate(facts), key=lambda p: float(p[1].value)):
        target = float(fact.value)
        tolerance = max(LATENCY_REL_TOLERANCE * target, LATENCY_ABS_TOLERANCE_MS)
        best, best_gap = None, math.inf
        for j, x in enumerate(free):
            gap = abs(x - target)
            if not used[j] and gap <= tolerance and gap < best_gap:
                best, best_gap = j, gap
        if best is not None:
            used[best] = True
            found.add(i)
    return found


def fact_found(fact: Fact, text: str) -> bool:
    """Whether one (non-latency) fact is in normalised ``text``."""
    if fact.kind == TOKENS:
        return _tokens_found(text, int(fact.value))
    return any(needle and needle in text for needle in _needles(fact))
