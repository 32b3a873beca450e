"""Fault localisation by content: can a reader of a debug output identify the failing call?

The first failure of a run (``truth.Failure``) is one call — a tool call, or the LLM call of
a step — among its *peers* (the other calls of the same tool, or the other LLM calls). An
output localises it when it names

(a) **the call**: the failing tool, or that it was the LLM call;
(b) **its error**;
(c) **its position**: which of its peers failed.

Nothing here knows an engine's vocabulary. Both text and JSON are read as records with a
context (``Statement``): a statement of the error, plus what surrounds it the way a reader
sees it — in text, the line, its outline ancestors (the less indented lines above it) and
its sibling entries up to the nearest one that names another call; in JSON, the enclosing
objects' own fields and the sibling elements of the innermost enclosing array, with the
same stop. (a) and (c) must be found in the context of a statement of the error. The rules
are documented in docs/debuggability.md ("Fault localisation").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from bench.debug.match import fact_found, flatten, normalise, parse_structured, step_found
from bench.debug.truth import ARG, ERROR, LLM_ERROR, RESULT, TOOL, Fact, Failure

# the words that say "this is the LLM call": LangChain's llm runs and ChatOpenAI, our
# "[LLM Reasoning]" and "chat <model>" spans, LangGraph's "model" node, the API's paths
LLM_MARKERS = re.compile(r"(?<![a-z])(llm|chat|model|completions?|openai)")
# indentation: whitespace and the box-drawing characters of printed trees
_INDENT = re.compile(r"[ \t\u2500-\u257f]*")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# the routes by which (c) holds, in the order they are reported
STEP, CALL_ID, ARGS, ORDER, ONLY = "step", "id", "args", "order", "only"
ROUTES = (STEP, CALL_ID, ARGS, ORDER, ONLY)

Path = tuple[tuple[str, Any], ...]  # ("k", key) for an object member, ("i", n) for an element


@dataclass(frozen=True)
class Localisation:
    """For a failure run: does the output name the failing call, its error and its position?"""

    tool: bool  # (a) the failing tool (or, for an LLM failure, the LLM call) is named
    error: bool  # (b) its error is named
    position: bool  # (c) which of its peers it was can be told
    how: tuple[str, ...] = ()  # the routes by which (c) holds: step, id, args, order, only

    @property
    def localised(self) -> bool:
        return self.tool and self.error and self.position


@dataclass(frozen=True)
class Statement:
    """One place where the output states the error, with what a reader reads around it."""

    context: str  # normalised text of the statement and its context
    record: str  # the part of the context that is the statement's own record (no siblings)
    ordered: bool  # the statement is placed in order among the records of the tool's calls
    excerpt_line: int  # 0-based line of the output where the statement is (for excerpts)


# -- what the failing call looks like ----------------------------------------------------


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z0-9_]){re.escape(name.casefold())}(?![a-z0-9_])")


@dataclass(frozen=True)
class _Target:
    """The failing call and the marks that tell it apart from its peers."""

    failure: Failure
    names: Callable[[str], bool]  # the context names the failing call
    names_any_call: Callable[[str], bool]  # the text names some call of the run
    states_outcome: Callable[[str], bool]  # the text states a result or an error of a call
    step_mark: bool  # its step label identifies it (no peer in the same step)
    call_id: str | None  # its id, when no peer shares it
    args: tuple[Fact, ...]  # its arguments that no peer has

    @classmethod
    def of(cls, failure: Failure, facts: Sequence[Fact] = ()) -> _Target:
        call, peers = failure.failing, failure.all_peers
        others = [p for p in peers if p != call]
        tool_word = None if call.tool is None else _word(call.tool)
        tool_names = {str(f.value) for f in facts if f.kind == TOOL}
        words = [_word(n) for n in {*tool_names, *(p.tool for p in peers if p.tool)}]
        # what ends a call: its error, or a result value that is not also an argument
        arg_values = {(f.key, str(f.value)) for f in facts if f.kind == ARG}
        outcomes = [
            f
            for f in facts
            if f.kind in (ERROR, LLM_ERROR)
            or (f.kind == RESULT and (f.key, str(f.value)) not in arg_values)
        ]

        def names(text: str) -> bool:
            if tool_word is None:
                return LLM_MARKERS.search(text) is not None
            return tool_word.search(text) is not None

        def names_any_call(text: str) -> bool:
            return LLM_MARKERS.search(text) is not None or any(w.search(text) for w in words)

        def states_outcome(text: str) -> bool:
            return any(fact_found(f, text) for f in outcomes)

        other_args = {(a.key, str(a.value)) for p in others for a in p.args}
        return cls(
            failure=failure,
            names=names,
            names_any_call=names_any_call,
            states_outcome=states_outcome,
            step_mark=all(p.step != call.step for p in others),
            call_id=call.call_id
            if call.call_id and all(p.call_id != call.call_id for p in others)
            else None,
            args=tuple(a for a in call.args if (a.key, str(a.value)) not in other_args),
        )

    def routes(self, statement: Statement) -> list[str]:
        """The marks of the failing call that a statement shows (order aside). A step label
        is shared by every call of the step, so it counts only on the statement's own record;
        an id or an argument is the call's own, wherever it is printed in the context."""
        found = []
        if self.step_mark and step_found(statement.record, self.failure.failing.step):
            found.append(STEP)
        if self.call_id and _word(self.call_id).search(statement.context):
            found.append(CALL_ID)
        if any(fact_found(a, statement.context) for a in self.args):
            found.append(ARGS)
        return found

    @property
    def alone(self) -> bool:
        """The failing call has no peer: naming it identifies it."""
        return len(self.failure.all_peers) == 1

    @property
    def order_applies(self) -> bool:
        """Order alone identifies the call only when it is the first of its peers and alone
        in its step (calls of one step may run concurrently)."""
        return self.failure.index == 1 and self.step_mark

    def own_mark(self, text: str) -> bool:
        """``text`` shows the failing call's id or one of its distinguishing arguments."""
        if self.call_id and _word(self.call_id).search(text):
            return True
        return any(fact_found(a, text) for a in self.args)


# -- text ----------------------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(_INDENT.match(line).group(0))  # type: ignore[union-attr]


def text_statements(output: str, error: Fact, target: _Target) -> list[Statement]:
    """The statements of ``error`` in a text output, with their outline contexts."""
    raw = _ANSI.sub("", output).splitlines()
    kept = [(n, line) for n, line in enumerate(raw) if line.strip()]
    lines = [normalise(line) for _, line in kept]
    levels = [_indent(line) for _, line in kept]
    out = []
    for i, line in enumerate(lines):
        if not fact_found(error, line):
            continue
        record, siblings = _text_context(lines, levels, i, target)
        context = " ".join(lines[j] for j in sorted(record | siblings))
        own = " ".join(lines[j] for j in sorted(record))
        out.append(Statement(context, own, True, kept[i][0]))  # text is read in order
    return out


def _entry_end(levels: list[int], start: int) -> int:
    """One past the last line of the entry that starts at ``start`` (its deeper lines)."""
    end = start + 1
    while end < len(levels) and levels[end] > levels[start]:
        end += 1
    return end


def _text_context(
    lines: list[str], levels: list[int], i: int, target: _Target
) -> tuple[set[int], set[int]]:
    """(the statement's record: its line, details and outline ancestors; its sibling entries)."""
    level = levels[i]
    record = set(range(i, _entry_end(levels, i)))  # the statement and its own details
    picked: set[int] = set()
    # preceding sibling entries, back to the previous outcome (where the previous call ended)
    j = i - 1
    while j >= 0 and levels[j] >= level:
        if levels[j] == level:
            entry = range(j, _entry_end(levels, j))
            if target.states_outcome(" ".join(lines[k] for k in entry)):
                break
            picked.update(entry)
        j -= 1
    # following sibling entries, up to the next one that names a call
    k = _entry_end(levels, i)
    while k < len(lines) and levels[k] == level:
        entry = range(k, _entry_end(levels, k))
        if target.names_any_call(" ".join(lines[m] for m in entry)):
            break
        picked.update(entry)
        k = entry.stop
    # outline ancestors: each less indented line above
    current = level
    for j in range(i - 1, -1, -1):
        if levels[j] < current:
            record.add(j)
            current = levels[j]
    return record, picked


# -- JSON ----------------------------------------------------------------------------------


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
    """Every node (objects, arrays, scalars) with its path; JSON held in strings is parsed."""
    value = _parsed(value)
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _nodes(item, (*path, ("k", str(key))))
    elif isinstance(value, list):
        for n, item in enumerate(value):
            yield from _nodes(item, (*path, ("i", n)))


def _at(root: Any, path: Path) -> Any:
    node = _parsed(root)
    for _, key in path:
        node = _parsed(node[key])
    return node


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


def _flat_text(value: Any) -> str:
    return normalise("\n".join(flatten(value)))


def _ordered(a: Path, b: Path) -> bool:
    """Two nodes are ordered unless they sit in different members of one object (an object's
    keys carry no order), or one encloses the other (the same record)."""
    for step_a, step_b in zip(a, b, strict=False):
        if step_a != step_b:
            return step_a[0] == "i"
    return True


def json_statements(
    doc: Any, error: Fact, target: _Target, lines_of: Callable[[Any], int]
) -> list[Statement]:
    """The statements of ``error`` in a JSON document, with their contexts."""
    nodes = list(_nodes(doc))
    records = _call_records(nodes, target)
    out = []
    for path, value in nodes:
        if isinstance(value, (dict, list)) or not path:
            continue
        key = next((k for kind, k in reversed(path) if kind == "k"), None)
        if not fact_found(error, normalise(f"{key}: {value}")):
            continue
        parts = [normalise(f"{key}: {value}")]
        for depth in range(len(path) - 1, -1, -1):  # enclosing objects, innermost first
            node = _at(doc, path[:depth])
            if isinstance(node, dict):
                parts.append(_own_text(node))
        own = " ".join(parts)
        context = " ".join([own, *_json_siblings(doc, path, target)])
        # placed in the sequence: before or after some record of another call in an array
        ordered = not records or any(_ordered(path, other) for other in records)
        out.append(Statement(context, own, ordered, lines_of(value)))
    return out


def _json_siblings(doc: Any, path: Path, target: _Target) -> list[str]:
    """The sibling elements of the innermost array around ``path``, with the text's stops."""
    depth = next((d for d in range(len(path) - 1, -1, -1) if path[d][0] == "i"), None)
    if depth is None:
        return []
    items = _at(doc, path[:depth])
    n = path[depth][1]
    parts = []
    for m in range(n - 1, -1, -1):
        text = _flat_text(items[m])
        if target.states_outcome(text):
            break
        parts.append(text)
    for m in range(n + 1, len(items)):
        text = _flat_text(items[m])
        if target.names_any_call(text):
            break
        parts.append(text)
    return parts


def _call_records(nodes: list[tuple[Path, Any]], target: _Target) -> list[Path]:
    """Objects that may record another call of the failing tool: they name it and show one of
    its peers' arguments (or name it, for a tool without arguments) in their own fields, and
    not a mark of the failing call itself (its id, an argument only it has)."""
    call = target.failure.failing
    if call.tool is None or target.alone:
        return []
    args = [a for peer in target.failure.all_peers for a in peer.args]
    out = []
    for path, value in nodes:
        if not isinstance(value, dict):
            continue
        text = _own_text(value)
        if not target.names(text) or target.own_mark(text):
            continue
        if not args or any(fact_found(a, text) for a in args):
            out.append(path)
    return out


# -- the verdict ---------------------------------------------------------------------------


def statements(output: str, failure: Failure, facts: Sequence[Fact] = ()) -> list[Statement]:
    """Every statement of the failure's error in ``output``, with its context."""
    return _statements(output, _Target.of(failure, facts))


def _statements(output: str, target: _Target) -> list[Statement]:
    error = target.failure.error
    parsed = parse_structured(output)
    if parsed is None:
        return text_statements(output, error, target)
    return json_statements(parsed, error, target, _line_finder(output))


def _line_finder(output: str) -> Callable[[Any], int]:
    """The 0-based line of the output where a JSON scalar is written (first match)."""
    lines = output.splitlines()

    def find(value: Any) -> int:
        needle = json.dumps(value, ensure_ascii=False)[1:-1] if isinstance(value, str) else None
        needle = (needle or str(value))[:60]
        for n, line in enumerate(lines):
            if needle in line:
                return n
        return 0

    return find


def localise(
    output: str, failure: Failure, error_named: bool, facts: Sequence[Fact] = ()
) -> tuple[Localisation, Statement | None]:
    """Judge (a), (b), (c) for ``failure`` in ``output``; also the statement that decided.

    ``error_named``: (b), decided by the scorer on the whole output. ``facts``: the run's
    facts, whose tools and outcomes (results, errors) bound a statement's context.
    """
    if not output:
        return Localisation(False, False, False), None
    target = _Target.of(failure, facts)
    found = _statements(output, target)
    tool = False
    how: set[str] = set()
    best: Statement | None = None
    for statement in found:
        attributed = target.names(statement.context)
        tool = tool or attributed
        routes = target.routes(statement)
        if attributed and target.alone:
            routes.append(ONLY)
        elif attributed and statement.ordered and target.order_applies:
            routes.append(ORDER)
        if routes and (best is None or not how):
            best = statement
        how.update(routes)
    if best is None and found:
        best = next((s for s in found if target.names(s.context)), found[0])
    ordered_how = tuple(r for r in ROUTES if r in how)
    return Localisation(tool, error_named, bool(ordered_how), ordered_how), best


__all__ = [
    "LLM_MARKERS",
    "ROUTES",
    "Localisation",
    "Statement",
    "localise",
    "statements",
]
