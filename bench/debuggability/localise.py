"""Fault localisation by content: can a reader of a debug output identify the failing call?

The first failure of a run (``truth.Failure``) is one call — a tool call, or the LLM call of
a step — among its *peers*: the other calls of the same tool, or the other LLM calls. An
output localises it when it names

(a) **the call**: the failing tool, or that it was the LLM call;
(b) **its error**;
(c) **its position**: which of its peers failed.

Nothing here knows an engine's vocabulary. Text and JSON are read the same way: a
*statement* of the error has a *record* (text: its line, the lines below it that are more
indented, and its outline ancestors, the less indented lines above; JSON: the leaf and the
own fields of the objects that enclose it) and a wider *context* (the record plus the
sibling entries or array elements around it, back to where the previous call ended). (a)
is looked for in the context, (c) by marks that only the failing call has, or by order.
The rules are documented in docs/debuggability.md ("Fault localisation").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

from bench.debuggability.match import fact_found, flatten, normalise, parse_structured, step_found
from bench.debuggability.truth import ARG, ERROR, LLM_ERROR, RESULT, TOOL, CallRef, Fact, Failure

# the words that say "this is the LLM call": LangChain's llm runs and ChatOpenAI, our
# "[LLM Reasoning]" and "chat <model>" spans, LangGraph's "model" node, the API's paths
LLM_MARKERS = re.compile(r"(?<![a-z])(llm|chat|model|completions?|openai)")
# indentation: whitespace and the box-drawing characters of printed trees
_INDENT = re.compile(r"[ \t\u2500-\u257f]*")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# the routes by which (c) holds, in the order they are reported
STEP, CALL_ID, ARGS, ORDER, ONLY = "step", "id", "args", "order", "only"
ROUTES = (STEP, CALL_ID, ARGS, ORDER, ONLY)


@dataclass(frozen=True)
class Localisation:
    """For a failure run: does the output name the failing call, its error and its position?"""

    tool: bool  # (a) the failing tool (or, for an LLM failure, the LLM call) is named
    error: bool  # (b) its error is named
    position: bool  # (c) which of its peers it was can be told
    how: tuple[str, ...] = ()  # the routes by which (c) holds (``ROUTES``)

    @property
    def localised(self) -> bool:
        return self.tool and self.error and self.position


@dataclass(frozen=True)
class Statement:
    """One place where the output states the error, with what a reader reads around it."""

    record: str  # normalised: the statement's own record
    context: str  # normalised: the record and its sibling entries
    at: Any  # its place in reading order (a layout's position)
    line: int  # 0-based line of the output it is written on (-1: not found), for excerpts


# -- the failing call and its peers --------------------------------------------------------


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9_]){re.escape(name.casefold())}(?![a-z0-9_])")


@dataclass(frozen=True)
class _Marks:
    """What tells one call apart from its peers: a step label (when no other peer is in its
    step), its ids, the arguments no other peer has."""

    step: int | None
    ids: tuple[re.Pattern[str], ...]
    args: tuple[Fact, ...]

    def on(self, record: str, context: str) -> list[str]:
        """The routes shown: the step on the record (a step label is shared by every call of
        the step), an id or an argument anywhere in the context (they are the call's own)."""
        found = []
        if self.step is not None and step_found(record, self.step):
            found.append(STEP)
        if any(i.search(context) for i in self.ids):
            found.append(CALL_ID)
        if any(fact_found(a, context) for a in self.args):
            found.append(ARGS)
        return found

    def shown(self, text: str) -> bool:
        return bool(self.on(text, text))


def _marks(call: CallRef, peers: Sequence[CallRef], failure: Failure) -> _Marks:
    """``call``'s marks among ``peers``. What the failure's own error shows (a malformed
    call's raw arguments hold a later call's ``city: Paris``) marks no other call."""
    others = [p for p in peers if p != call]
    other_ids = {i for p in others for i in p.ids}
    other_args = {(a.key, str(a.value)) for p in others for a in p.args}
    error = normalise(str(failure.error.value)) if call != failure.failing else ""
    return _Marks(
        step=call.step if all(p.step != call.step for p in others) else None,
        ids=tuple(_word(i) for i in call.ids if i not in other_ids),
        args=tuple(
            a
            for a in call.args
            if (a.key, str(a.value)) not in other_args and not (error and fact_found(a, error))
        ),
    )


class _Target:
    """The failing call as the scorer looks for it: its name, its marks, its peers' marks."""

    def __init__(self, failure: Failure, facts: Sequence[Fact]):
        self.failure = failure
        self.call, self.peers = failure.failing, failure.all_peers
        self.index = failure.index  # 1-based among the peers
        self.marks = _marks(self.call, self.peers, failure)
        self.earlier = [_marks(p, self.peers, failure) for p in self.peers[: self.index - 1]]
        self.later = [_marks(p, self.peers, failure) for p in self.peers[self.index :]]
        self.alone = len(self.peers) == 1
        self.alone_in_step = self.marks.step is not None
        tool_names = {str(f.value) for f in facts if f.kind == TOOL}
        self._tool = None if self.call.tool is None else _word(self.call.tool)
        self._tools = [_word(n) for n in {*tool_names, *(p.tool for p in self.peers if p.tool)}]
        # what ends a call: an error, or a result value that is not also an argument
        arg_values = {(f.key, str(f.value)) for f in facts if f.kind == ARG}
        self._outcomes = [
            f
            for f in facts
            if f.kind in (ERROR, LLM_ERROR)
            or (f.kind == RESULT and (f.key, str(f.value)) not in arg_values)
        ]
        self._peer_args = [a for p in self.peers for a in p.args]

    def names(self, text: str) -> bool:
        """(a): the text names the failing tool, or the LLM call."""
        if self._tool is None:
            return LLM_MARKERS.search(text) is not None
        return self._tool.search(text) is not None

    def names_any_call(self, text: str) -> bool:
        return LLM_MARKERS.search(text) is not None or any(w.search(text) for w in self._tools)

    def states_outcome(self, text: str) -> bool:
        return any(fact_found(f, text) for f in self._outcomes)

    def records_a_peer(self, text: str) -> bool:
        """An object's own fields record a call of the failing tool, not told apart as the
        failing one: they name the tool and show a peer's arguments (any, for a tool without
        arguments), and no mark of the failing call."""
        if self._tool is None or not self.names(text) or self.marks.shown(text):
            return False
        return not self._peer_args or any(fact_found(a, text) for a in self._peer_args)


# -- text ----------------------------------------------------------------------------------


class _TextLayout:
    """A text output: lines in reading order, structured by indentation."""

    def __init__(self, output: str, target: _Target):
        self.target = target
        raw = _ANSI.sub("", output).splitlines()
        kept = [(n, line) for n, line in enumerate(raw) if line.strip()]
        self.numbers = [n for n, _ in kept]
        self.lines = [normalise(line) for _, line in kept]
        self.levels = [len(_INDENT.match(line).group(0)) for _, line in kept]  # type: ignore[union-attr]

    def statements(self, error: Fact) -> list[Statement]:
        out = []
        for i, line in enumerate(self.lines):
            if fact_found(error, line):
                record, siblings = self._context(i)
                out.append(
                    Statement(
                        record=" ".join(self.lines[j] for j in sorted(record)),
                        context=" ".join(self.lines[j] for j in sorted(record | siblings)),
                        at=i,
                        line=self.numbers[i],
                    )
                )
        return out

    def sightings(self, marks: _Marks) -> Iterator[int]:
        return (i for i, line in enumerate(self.lines) if marks.shown(line))

    @staticmethod
    def before(a: int, b: int) -> bool:
        return a < b  # text is read in order

    @staticmethod
    def placed(statement: Statement) -> bool:
        return True  # every line has its place in the sequence

    def _entry(self, start: int) -> range:
        """The entry that starts at ``start``: it and the more indented lines below it."""
        end = start + 1
        while end < len(self.levels) and self.levels[end] > self.levels[start]:
            end += 1
        return range(start, end)

    def _text(self, entry: range) -> str:
        return " ".join(self.lines[k] for k in entry)

    def _context(self, i: int) -> tuple[set[int], set[int]]:
        """(the statement's record, its sibling entries)."""
        levels, target = self.levels, self.target
        level = levels[i]
        record = set(self._entry(i))
        siblings: set[int] = set()
        j = i - 1  # preceding siblings, back to the previous outcome (the previous call's end)
        while j >= 0 and levels[j] >= level:
            if levels[j] == level:
                entry = self._entry(j)
                if target.states_outcome(self._text(entry)):
                    break
                siblings.update(entry)
            j -= 1
        k = self._entry(i).stop  # following siblings, up to the next one that names a call
        while k < len(levels) and levels[k] == level:
            entry = self._entry(k)
            if target.names_any_call(self._text(entry)):
                break
            siblings.update(entry)
            k = entry.stop
        current = level  # outline ancestors: each less indented line above
        for j in range(i - 1, -1, -1):
            if levels[j] < current:
                record.add(j)
                current = levels[j]
        return record, siblings


# -- JSON ----------------------------------------------------------------------------------

Path = tuple[tuple[str, Any], ...]  # ("k", key) for an object member, ("i", n) for an element


def _parsed(value: Any) -> Any:
    """A string that holds a JSON object or array, parsed; anything else as it is."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, (dict, list)):
            return parsed
    return value


def _nodes(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every node with its path, in document order; JSON held in strings is parsed."""
    value = _parsed(value)
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, ("k", str(key))))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _nodes(item, (*path, ("i", n)))


def _own_text(obj: dict[str, Any]) -> str:
    """An object's own scalars and those of its direct sub-objects, as ``key: value``."""
    labels = []
    for key, value in obj.items():
        value = _parsed(value)
        if isinstance(value, dict):
            labels += [
                f"{key}.{k2}: {v2}"
                for k2, v2 in value.items()
                if not isinstance(_parsed(v2), (dict, list))
            ]
        elif isinstance(value, list):
            labels += [f"{key}: {item}" for item in value if not isinstance(item, (dict, list))]
        else:
            labels.append(f"{key}: {value}")
    return normalise("\n".join(labels))


def _ordered(a: Path, b: Path) -> bool:
    """Two nodes are in order unless they sit in different members of one object (an
    object's keys carry no order); a node and one it encloses are in order."""
    for step_a, step_b in zip(a, b, strict=False):
        if step_a != step_b:
            return step_a[0] == "i"
    return True


class _JsonLayout:
    """A JSON output: nodes in document order; arrays are ordered, an object's keys are not."""

    def __init__(self, doc: Any, output: str, target: _Target):
        self.target = target
        self.nodes = list(_nodes(doc))
        self.index = {path: n for n, (path, _) in enumerate(self.nodes)}
        self.value = dict(self.nodes)
        self._lines = output.splitlines()

    @cached_property
    def own(self) -> dict[Path, str]:
        """Each object's own text."""
        return {path: _own_text(v) for path, v in self.nodes if isinstance(v, dict)}

    @cached_property
    def peer_records(self) -> list[Path]:
        return [path for path, text in self.own.items() if self.target.records_a_peer(text)]

    def statements(self, error: Fact) -> list[Statement]:
        out = []
        for path, value in self.nodes:
            if not path or isinstance(value, (dict, list)):
                continue
            key = next((k for kind, k in reversed(path) if kind == "k"), None)
            leaf = normalise(f"{key}: {value}")
            if not fact_found(error, leaf):
                continue
            record = " ".join(
                [
                    leaf,
                    *(
                        self.own[path[:d]]
                        for d in range(len(path) - 1, -1, -1)
                        if path[:d] in self.own
                    ),
                ]
            )
            out.append(
                Statement(
                    record=record,
                    context=" ".join([record, *self._siblings(path)]),
                    at=path,
                    line=self._line_of(value),
                )
            )
        return out

    def sightings(self, marks: _Marks) -> Iterator[Path]:
        return (path for path, text in self.own.items() if marks.shown(text))

    def before(self, a: Path, b: Path) -> bool:
        return _ordered(a, b) and self.index[a] < self.index[b]

    def placed(self, statement: Statement) -> bool:
        """In order with some record of the tool's calls (or there is none to be in order
        with): a list of calls and a separate list of errors say nothing about which failed."""
        records = self.peer_records
        return not records or any(_ordered(statement.at, r) for r in records)

    def _siblings(self, path: Path) -> list[str]:
        """The elements of the innermost array around ``path``, with the text's stops."""
        depth = next((d for d in range(len(path) - 1, -1, -1) if path[d][0] == "i"), None)
        if depth is None:
            return []
        items, n = self.value[path[:depth]], path[depth][1]
        out = []
        for m in range(n - 1, -1, -1):
            text = normalise("\n".join(flatten(items[m])))
            if self.target.states_outcome(text):
                break
            out.append(text)
        for m in range(n + 1, len(items)):
            text = normalise("\n".join(flatten(items[m])))
            if self.target.names_any_call(text):
                break
            out.append(text)
        return out

    def _line_of(self, value: Any) -> int:
        """The first line of the output that holds this scalar as written (-1: not found)."""
        text = json.dumps(value, ensure_ascii=False)
        needle = (text[1:-1] if isinstance(value, str) else text)[:60]
        return next((n for n, line in enumerate(self._lines) if needle in line), -1)


# -- the verdict ---------------------------------------------------------------------------


class _Layout(Protocol):
    """What ``_by_order`` asks of a layout: positions it can order (a line, a JSON path)."""

    def sightings(self, marks: _Marks) -> Iterator[Any]: ...

    def before(self, a: Any, b: Any) -> bool: ...

    def placed(self, statement: Statement) -> bool: ...


def _layout(output: str, target: _Target) -> _TextLayout | _JsonLayout:
    parsed = parse_structured(output)
    if parsed is None:
        return _TextLayout(output, target)
    return _JsonLayout(parsed, output, target)


def _by_order(layout: _Layout, statement: Statement, target: _Target) -> bool:
    """The statement comes after a record of every earlier peer and before any record of a
    later one (records known by the peer's own marks), and is in order among the tool's
    records. Calls of one step may run concurrently: order does not tell them apart."""
    if not target.alone_in_step or not layout.placed(statement):
        return False
    for marks in target.earlier:
        if not any(layout.before(s, statement.at) for s in layout.sightings(marks)):
            return False
    return not any(
        layout.before(s, statement.at) for marks in target.later for s in layout.sightings(marks)
    )


def statements(output: str, failure: Failure, facts: Sequence[Fact] = ()) -> list[Statement]:
    """Every statement of the failure's error in ``output``, with its record and context."""
    target = _Target(failure, facts)
    return _layout(output, target).statements(failure.error)


def localise(
    output: str, failure: Failure, error_named: bool, facts: Sequence[Fact] = ()
) -> tuple[Localisation, Statement | None]:
    """Judge (a), (b), (c) for ``failure`` in ``output``; also the statement that decided.

    ``error_named``: (b), decided by the scorer on the whole output. ``facts``: the run's
    facts, whose tools and outcomes (errors, results) bound a statement's context.
    """
    if not output:
        return Localisation(False, False, False), None
    target = _Target(failure, facts)
    layout = _layout(output, target)
    found = layout.statements(failure.error)
    how: set[str] = set()
    ranked: list[tuple[int, int, Statement]] = []  # the excerpt shows the most telling one
    for n, statement in enumerate(found):
        attributed = target.names(statement.context)
        routes = target.marks.on(statement.record, statement.context)
        if attributed and target.alone:
            routes.append(ONLY)
        elif attributed and _by_order(layout, statement, target):
            routes.append(ORDER)
        how.update(routes)
        ranked.append((-(attributed + bool(routes)), n, statement))
    tool = any(rank <= -1 and target.names(s.context) for rank, _, s in ranked)
    best = min(ranked, key=lambda r: r[:2])[2] if ranked else None
    position = tuple(r for r in ROUTES if r in how)
    return Localisation(tool, error_named, bool(position), position), best


__all__ = ["LLM_MARKERS", "ROUTES", "Localisation", "Statement", "localise", "statements"]
