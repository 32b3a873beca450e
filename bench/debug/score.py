"""Score a debug output against a run's ground truth.

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
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from bench.debug.truth import (
    ERROR,
    FAILED_STEP,
    LATENCY,
    TERMINATION,
    TOKENS,
    TOOL,
    Fact,
    GroundTruth,
)

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
    pattern = rf"token[\w.]*(?: used| count)?:?\s?{n}(?![\d.])"
    return re.search(pattern, text) is not None


def _step_found(text: str, n: int) -> bool:
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
    if fact.kind == FAILED_STEP:
        return _step_found(text, int(fact.value))
    return any(needle and needle in text for needle in _needles(fact))


# -- fault localisation: the step must be named next to the error ------------------------

_WINDOW_LINES = 5  # text: the step label within 5 lines of the error


def _walk(value: Any, key: str | None, ancestors: tuple[dict[str, Any], ...]):
    """(key, scalar, enclosing objects) for every leaf; JSON held in strings is parsed."""
    if isinstance(value, dict):
        inner = (*ancestors, value)
        for k, v in value.items():
            yield from _walk(v, str(k), inner)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _walk(v, key, ancestors)
    else:
        if isinstance(value, str) and value.strip()[:1] in ("{", "["):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if isinstance(parsed, (dict, list)):
                yield from _walk(parsed, key, ancestors)
                return
        yield key, value, ancestors


def _own_labels(obj: dict[str, Any]) -> Iterator[str]:
    """``key: value`` of an object's own scalars, and of the scalars of its direct sub-objects."""
    for k, v in obj.items():
        if isinstance(v, dict):
            for k2, v2 in v.items():
                if not isinstance(v2, (dict, list)):
                    yield f"{k}.{k2}: {v2}"
        elif isinstance(v, list):
            for item in v:
                if not isinstance(item, (dict, list)):
                    yield f"{k}: {item}"
        else:
            yield f"{k}: {v}"


def step_localised(output: str, error: Fact, step: int) -> bool:
    """Is step ``step`` named *where the error is*?

    Structured output: in an object that encloses the error (its own fields, or those of
    its direct sub-objects such as ``attributes``/``metadata``). Text: within
    ``_WINDOW_LINES`` lines of a line that states the error.
    """
    parsed = parse_structured(output)
    if parsed is not None:
        for key, value, ancestors in _walk(parsed, None, ()):
            if not fact_found(error, normalise(f"{key}: {value}")):
                continue
            for obj in reversed(ancestors):
                if any(_step_found(normalise(label), step) for label in _own_labels(obj)):
                    return True
        return False
    lines = [normalise(line) for line in output.splitlines()]
    for i, line in enumerate(lines):
        if fact_found(error, line):
            window = " ".join(lines[max(0, i - _WINDOW_LINES) : i + _WINDOW_LINES + 1])
            if _step_found(window, step):
                return True
    return False


# -- the score -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Localisation:
    """For a failure run: does the output name the failing tool, its error and the step?"""

    tool: bool | None  # None when the LLM call itself failed (no tool to name)
    error: bool
    step: bool

    @property
    def localised(self) -> bool:
        return self.tool is not False and self.error and self.step


@dataclass(frozen=True)
class Score:
    facts_total: int
    facts_found: int
    bytes: int
    lines: int
    structured: bool
    found: tuple[Fact, ...] = ()
    missed: tuple[Fact, ...] = ()
    localisation: Localisation | None = None
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)  # kind -> (found, total)

    @property
    def recall(self) -> float:
        return self.facts_found / self.facts_total if self.facts_total else 0.0

    @property
    def bytes_per_fact(self) -> float | None:
        """Output bytes per recovered fact (noise); None when nothing was recovered."""
        return self.bytes / self.facts_found if self.facts_found else None

    def missed_summary(self) -> str:
        """``latency:2 tokens:6``: what was missed, by kind."""
        return " ".join(
            f"{kind}:{total - found}"
            for kind, (found, total) in self.by_kind.items()
            if found < total
        )


def count_lines(output: str) -> int:
    if not output:
        return 0
    return output.count("\n") + (0 if output.endswith("\n") else 1)


def score_output(output: str, truth: GroundTruth | Sequence[Fact]) -> Score:
    """Score one debug output against the ground truth (or a plain list of facts)."""
    facts = list(truth.facts if isinstance(truth, GroundTruth) else truth)
    failure = truth.failure if isinstance(truth, GroundTruth) else None
    text, structured = searchable(output) if output else ("", False)
    latency = [(i, f) for i, f in enumerate(facts) if f.kind == LATENCY]
    matched_latency = {
        latency[k][0] for k in latency_matches([f for _, f in latency], durations_ms(text))
    }
    step_named = None
    if failure is not None:
        step_named = bool(text) and step_localised(output, failure.error, failure.step)

    def hit(i: int, fact: Fact) -> bool:
        if fact.kind == LATENCY:
            return i in matched_latency
        if fact.kind == FAILED_STEP and step_named is not None and fact.step == failure.step:
            return step_named
        return bool(text) and fact_found(fact, text)

    hits = [hit(i, fact) for i, fact in enumerate(facts)]
    by_kind: dict[str, tuple[int, int]] = {}
    for fact, hit in zip(facts, hits, strict=True):
        found, total = by_kind.get(fact.kind, (0, 0))
        by_kind[fact.kind] = (found + hit, total + 1)
    localisation = None
    if failure is not None:
        tool_named = None
        if failure.tool is not None:
            tool_named = bool(text) and fact_found(Fact(TOOL, failure.step, failure.tool), text)
        error_named = bool(text) and fact_found(failure.error, text)
        localisation = Localisation(tool_named, error_named, bool(step_named))
    return Score(
        facts_total=len(facts),
        facts_found=sum(hits),
        bytes=len(output.encode("utf-8")),
        lines=count_lines(output),
        structured=structured,
        found=tuple(f for f, h in zip(facts, hits, strict=True) if h),
        missed=tuple(f for f, h in zip(facts, hits, strict=True) if not h),
        localisation=localisation,
        by_kind=by_kind,
    )


__all__ = [
    "ERROR",
    "Localisation",
    "Score",
    "durations_ms",
    "fact_found",
    "flatten",
    "normalise",
    "parse_structured",
    "score_output",
    "searchable",
]
