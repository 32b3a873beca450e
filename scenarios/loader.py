"""Load and validate scenario files, with errors that name the file, the field and the reason.

Scenario files are shared, so they are read as untrusted input: a file is at most
``MAX_FILE_BYTES`` of UTF-8; the YAML is parsed with the safe loader, nesting at most
``MAX_DEPTH`` levels, every string at most ``MAX_STRING_CHARS``, every integer at most
``MAX_INT_DIGITS`` digits; the file holds at most ``MAX_NODES`` keys and values, counted while
it is composed (a dense 1 MiB list is refused after its first ``MAX_NODES`` values, not after
all of them); and the document *as its aliases expand* holds at most ``MAX_NODES`` values and
``MAX_EXPANDED_CHARS`` characters, so a few kilobytes of nested anchors (a "billion laughs")
are refused in milliseconds instead of expanding in whatever walks the data next. A recursive
alias is refused too. Every problem is one line per file; a bad file never stops the other
files of a folder from being checked.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from pathlib import Path
from types import UnionType
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from scenarios.checks import cross_problems, did_you_mean
from scenarios.schema import CROSS_CHECKED, Scenario

BUILTIN_DIR = Path(__file__).resolve().parent

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 32
MAX_STRING_CHARS = 100_000
MAX_NODES = 50_000
MAX_EXPANDED_CHARS = 2_000_000
MAX_INT_DIGITS = 4300  # Python's own default bound for converting an int to and from text
_MAX_INT_BITS = int(MAX_INT_DIGITS * 3.3219)  # log2(10): the same bound for hex, octal, ...


class DataFileError(ValueError):
    """A data file (a scenario, a workload) that cannot be used; ``str()`` is one line per
    problem, each ``FILE: FIELD: REASON``."""

    def __init__(self, path: Path | str, problems: list[str]):
        self.path = str(path)
        self.lines = [f"{path}: {_one_line(problem)}" for problem in problems]
        super().__init__("\n".join(self.lines))


class ScenarioError(DataFileError):
    """A scenario file that cannot be used; ``str()`` is one line per problem."""

    @classmethod
    def combine(cls, errors: list[ScenarioError]) -> ScenarioError:
        """One error holding every line of several."""
        combined = cls("", [])
        combined.lines = [line for error in errors for line in error.lines]
        combined.args = ("\n".join(combined.lines),)
        return combined


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in str(text).splitlines()) if "\n" in text else text


class YAMLLimitError(ValueError):
    """A YAML document past one of the loader's limits (the message says which)."""


def _where(node: Node) -> str:
    return f"line {node.start_mark.line + 1}: "


if TYPE_CHECKING:  # the mixin's methods call a loader's
    from yaml import SafeLoader as _Loader
else:
    _Loader = object


class _Bounded(_Loader):
    """The safe loader, refusing while it composes nesting deeper than ``MAX_DEPTH`` (the
    composer recurses: deeper input would end in a RecursionError) and more than
    ``MAX_NODES`` keys and values (composing is the slow part: ~25 µs a value); and refusing
    integers past ``MAX_INT_DIGITS`` digits and values no constructor can build (a date
    ``2026-13-45``) as one line naming the place, never an exception of its own."""

    _depth = 0
    _nodes = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise YAMLLimitError(f"line {mark.line + 1}: nested deeper than {MAX_DEPTH} levels")
            if not self.check_event(AliasEvent):  # an alias adds no node: check_expansion
                self._nodes += 1
                if self._nodes > MAX_NODES:
                    mark = self.peek_event().start_mark
                    raise YAMLLimitError(
                        f"line {mark.line + 1}: more than {MAX_NODES:,} keys and values in the "
                        "file; a scenario holds its script, not a data set"
                    )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError, TypeError) as exc:
            if isinstance(exc, YAMLLimitError):
                raise
            kind = node.tag.rsplit(":", 1)[-1]
            text = f"'{node.value[:40]}'" if isinstance(node, ScalarNode) else "this value"
            raise ConstructorError(
                None,
                None,
                f"cannot read {text} as a {kind}: {exc} (quote it to make it text)",
                node.start_mark,
            ) from None

    def construct_yaml_int(self, node: Node) -> int:
        # Python refuses to read (and later to print) an int of more than 4,300 digits
        text = str(node.value)
        value = None if len(text) > MAX_INT_DIGITS else super().construct_yaml_int(node)
        if value is None or value.bit_length() > _MAX_INT_BITS:
            raise YAMLLimitError(f"{_where(node)}an integer of more than {MAX_INT_DIGITS:,} digits")
        return value


class _BoundedLoader(_Bounded, yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML's own scanner and parser: the reference, and the clearer messages."""


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)

if yaml.__with_libyaml__:
    from yaml._yaml import CParser

    class _FastBoundedLoader(_Bounded, Composer, CParser, SafeConstructor, Resolver):  # type: ignore[misc]
        """libyaml's scanner and parser, composing and constructing in Python as
        ``_BoundedLoader`` does, so the same limits hold: 32 scenario files in 66 ms instead
        of 532 ms. It reports a syntax error in libyaml's words; ``safe_yaml`` reads such a
        file again with ``_BoundedLoader`` for PyYAML's clearer ones."""

        def __init__(self, stream: str):
            CParser.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            Composer.__init__(self)

    _FastBoundedLoader.add_constructor(
        "tag:yaml.org,2002:int", _FastBoundedLoader.construct_yaml_int
    )
    _LOADERS: tuple[type, ...] = (_FastBoundedLoader, _BoundedLoader)
else:  # PyYAML built without libyaml
    _LOADERS = (_BoundedLoader,)


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_expansion(root: Node) -> None:
    """Refuse a node graph whose expansion is too big, too deep or infinite.

    Aliases make the graph a DAG (or, with a recursive alias, a cycle); each node is
    visited once, so this costs time linear in the *file*, whatever the expansion.
    """
    sizes: dict[int, tuple[int, int, int]] = {}  # id → (nodes, chars, depth) when expanded
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            kids = [sizes[id(child)] for child in _children(node)]
            chars = len(node.value) if isinstance(node, ScalarNode) else 0
            size = (
                1 + sum(k[0] for k in kids),
                chars + sum(k[1] for k in kids),
                1 + max((k[2] for k in kids), default=0),
            )
            sizes[key] = size
            if size[0] > MAX_NODES:
                raise YAMLLimitError(
                    f"{_where(node)}aliases expand to more than {MAX_NODES:,} keys and values; "
                    "write the data out or use fewer aliases"
                )
            if size[1] > MAX_EXPANDED_CHARS:
                raise YAMLLimitError(
                    f"{_where(node)}aliases expand to more than {MAX_EXPANDED_CHARS:,} "
                    "characters of text"
                )
            if size[2] > MAX_DEPTH:
                raise YAMLLimitError(
                    f"{_where(node)}aliases expand to more than {MAX_DEPTH} levels of nesting"
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YAMLLimitError(f"{_where(node)}a recursive alias (a value that contains itself)")
        if isinstance(node, ScalarNode) and len(node.value) > MAX_STRING_CHARS:
            raise YAMLLimitError(
                f"{_where(node)}a text of {len(node.value):,} characters; "
                f"at most {MAX_STRING_CHARS:,} (returns_size_kb pads a large result)"
            )
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def safe_yaml(text: str) -> Any:
    """Parse one YAML document within the loader's limits (``YAMLLimitError``, ``YAMLError``)."""
    try:
        return _load(_LOADERS[0], text)
    except yaml.YAMLError:
        if len(_LOADERS) == 1:
            raise
        return _load(_LOADERS[-1], text)  # the same error, in PyYAML's words


def _load(loader_class: type, text: str) -> Any:
    loader = loader_class(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        check_expansion(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _format_loc(loc: Iterable[object]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_problems(exc: ValidationError, root: type[BaseModel] = Scenario) -> list[str]:
    """One ``FIELD: REASON`` per error of validating ``root``: the field as the file spells
    it (``script[2].tool_calls[0].args``), an unknown field with a guess at the one meant."""
    problems = []
    for err in exc.errors():
        message = err["msg"].removeprefix("Value error, ")
        # pydantic repeats the model name for union members; keep the user's path only
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper())]
        if err["type"] == "extra_forbidden" and loc:
            message = _unknown_field(loc, root)
        where = _format_loc(loc)
        problems.append(f"{where}: {message}" if where else message)
    return problems


def _unknown_field(loc: list[Any], root: type[BaseModel]) -> str:
    fields = fields_at(loc[:-1], root)
    if not fields:
        return "unknown field"
    guess = did_you_mean(str(loc[-1]), fields)
    if guess is not None:
        return f"unknown field; did you mean '{guess}'?"
    return f"unknown field; valid fields: {', '.join(fields)}"


def fields_at(loc: Iterable[object], root: type[BaseModel] = Scenario) -> list[str]:
    """The field names of the model ``root`` at ``loc`` (a field path), or [] if none."""
    kind: Any = root
    for part in loc:
        kind = _model_or_container(kind)
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            field = kind.model_fields.get(str(part))
            if field is None:
                return []
            kind = field.annotation
        elif get_origin(kind) in (list, dict):
            kind = get_args(kind)[-1]  # the item (list) or the value (dict) type
        else:
            return []
    kind = _model_or_container(kind)
    if isinstance(kind, type) and issubclass(kind, BaseModel):
        return list(kind.model_fields)
    return []


def _model_or_container(kind: Any) -> Any:
    """The model, list or dict type inside an annotation (``X | None``, ``Annotated``)."""
    while get_origin(kind) is Annotated:
        kind = get_args(kind)[0]
    if get_origin(kind) in (Union, UnionType):
        for member in get_args(kind):
            member = _model_or_container(member)
            if get_origin(member) in (list, dict) or (
                isinstance(member, type) and issubclass(member, BaseModel)
            ):
                return member
    return kind


_FIELD_ORDER = {name: i for i, name in enumerate(Scenario.model_fields)}
_PLACE = re.compile(r"^([A-Za-z_]+)(?:\[(\d+)\])?")


def _in_field_order(problems: list[str]) -> list[str]:
    """Problems sorted by the field they name (the scenario's field order, then the index),
    the same problem once."""

    def key(problem: str) -> tuple[int, int]:
        match = _PLACE.match(problem)
        if match is None:
            return len(_FIELD_ORDER), -1
        index = int(match.group(2)) if match.group(2) else -1
        return _FIELD_ORDER.get(match.group(1), len(_FIELD_ORDER)), index

    return sorted(dict.fromkeys(problems), key=key)


def _size(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit // 1024} KiB"


def yaml_mapping(
    text: str,
    source: Path | str,
    *,
    kind: str = "scenario",
    limit: int = MAX_FILE_BYTES,
    error: type[DataFileError] = ScenarioError,
) -> dict[str, Any]:
    """The top-level mapping of a data file's YAML ``text`` (a ``kind`` file of at most
    ``limit`` characters), read with the bounded safe loader; ``error(source, [problem])``
    for text that is too long, YAML that is refused or invalid, or no mapping."""
    if len(text) > limit:
        raise error(source, [f"{len(text):,} characters; a {kind} is at most {_size(limit)}"])
    try:
        data = safe_yaml(text)
    except YAMLLimitError as exc:
        raise error(source, [f"refused YAML: {exc}"]) from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (NUL, ...)
        line = text.count("\n", 0, exc.position) + 1
        code = ord(exc.character) if isinstance(exc.character, str) else exc.character
        raise error(
            source, [f"invalid YAML: line {line}: character #x{code:04x}: {exc.reason}"]
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise error(source, [f"invalid YAML: {where}{reason}"]) from None
    if not isinstance(data, dict):
        raise error(source, [f"expected a mapping of {kind} fields at the top level"])
    return data


def parse_scenario(
    text: str, source: Path | str = "<string>", *, engines: Collection[str] | None = None
) -> Scenario:
    """Parse YAML text into a validated Scenario; raises ScenarioError listing every
    problem of the file at once. ``engines``: the engine names ``expect.engines`` may name
    (None: any). The same text is parsed once per process (a Scenario is frozen)."""
    key = (text, str(source), None if engines is None else frozenset(engines))
    parsed = _PARSED.get(key)
    if parsed is None:
        parsed = _parse_scenario(text, source, engines)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[key] = parsed
    return parsed


_PARSED: dict[tuple[str, str, frozenset[str] | None], Scenario] = {}
_PARSED_MAX = 512


def _parse_scenario(text: str, source: Path | str, engines: Collection[str] | None) -> Scenario:
    data = yaml_mapping(text, source)
    problems: list[str] = []
    try:
        scenario = Scenario.model_validate(data, context={CROSS_CHECKED: True})
        problems = cross_problems(data, engines=engines)
    except ValidationError as exc:
        problems = validation_problems(exc) + cross_problems(data, engines=engines)
    except RecursionError:  # a backstop: the limits above keep the data far shallower
        raise ScenarioError(source, ["refused: nested too deeply to validate"]) from None
    stem = Path(str(source)).stem
    name = data.get("name")
    if str(source) != "<string>" and isinstance(name, str) and name != stem:
        problems.append(f"name: '{name}' must equal the file name '{stem}'")
    if problems:
        raise ScenarioError(source, _in_field_order(problems))
    return scenario


def read_text(
    path: Path,
    *,
    kind: str = "scenario",
    limit: int = MAX_FILE_BYTES,
    error: type[DataFileError] = ScenarioError,
) -> str:
    """A data file's text: a regular file of at most ``limit`` bytes of UTF-8; else
    ``error(path, [problem])``."""
    try:
        if not path.is_file():
            raise error(path, ["not a regular file"])
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise error(path, [f"cannot read: {exc.strerror}"]) from None
    if len(data) > limit:
        raise error(path, [f"larger than {limit // 1024} KiB; a {kind} is data"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            path, [f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}"]
        ) from None


def load_scenario(path: Path | str, *, engines: Collection[str] | None = None) -> Scenario:
    """Load one scenario file; raises ScenarioError naming the file, field and reason of
    every problem (``engines``: as for ``parse_scenario``)."""
    path = Path(path)
    return parse_scenario(read_text(path), path, engines=engines)


def scenario_files(directory: Path | str | None = None) -> list[Path]:
    """The scenario files of a directory (default: the built-in scenarios), sorted by name."""
    directory = Path(directory) if directory is not None else BUILTIN_DIR
    if not directory.is_dir():
        raise ScenarioError(directory, ["not a directory"])
    return sorted(p for p in directory.glob("*.yaml") if not p.name.startswith("_"))


def load_scenarios(directory: Path | str | None = None) -> dict[str, Scenario]:
    """Every scenario of a directory by name; raises ScenarioError listing all bad files."""
    scenarios: dict[str, Scenario] = {}
    errors: list[ScenarioError] = []
    for path in scenario_files(directory):
        try:
            scenario = load_scenario(path)
        except ScenarioError as exc:
            errors.append(exc)
            continue
        scenarios[scenario.name] = scenario
    if errors:
        raise ScenarioError.combine(errors)
    return scenarios
