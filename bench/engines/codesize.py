"""How much code each contender is, counted in a formatting-invariant way, when a run is made.

Three counts per piece of code, none of which moves when the code is reformatted:

- **statements** — the ``ast`` statements (``x = 1``, ``return``, ``def``, ``if`` …), not
  counting docstrings: the headline figure;
- **nodes** — the nodes of the syntax tree (names, calls, literals, operators …), not
  docstrings, so that a trailing comma or a pair of redundant parentheses changes nothing;
- **logical lines** — what ``tokenize`` ends with a NEWLINE (one per simple statement or
  compound-statement header), for comparison with the article's "~400 lines".

Counting is slow (~3 s of CPU for every target on a slow 2-core host, paid by every run), so
counts are kept in a cache file keyed by the text counted and this module's own source
(``cache_file``): the same text always counts the same, and an edited file is counted again.

Import statements are left out of all three, wherever they stand, and counted apart
(``imports``): a whole module and one function of a file (whose imports sit at the top of
the file) are then counted the same way, so the same program shape gives the same count on
every side.

A target is a file, a directory (every ``*.py`` under it), or ``path.py::name`` (one
top-level function or class of a file). ``measure`` is called when a run starts and its
rows are stored in ``meta.json`` (``code_size``), so a report always shows the code sizes of
the commit it measured — never of the working tree it is rendered in. Besides the fixed
components and each production engine's configuration (split into its ``built-in``
settings and its ``custom`` code, from the engine registry), the rows carry who owns what
(``OWNERSHIP``): a team that builds its own loop maintains all of ``scheduler/`` and its
tests; a team on a framework maintains its custom code (the framework is maintained
upstream).
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import tempfile
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import PROJECT_ROOT
from bench.engines.registry import SPECS
from bench.model.caches import cache_directory

# the fixed components of the report (more come from the engine registry's config_code)
COMPONENTS: tuple[tuple[str, str], ...] = (
    ("scheduler", "scheduler"),
    ("scheduler core loop", "scheduler/loop.py"),
    ("langchain_baseline", "langchain_baseline"),
    ("engine adapters", "bench/engines"),
)
# the code a team maintains itself on each side: (component, part, target); the framework
# side's rows come from its production engines' custom code (``ownership_targets``)
OWNERSHIP_PREFIX = "ownership: "
SELF_BUILT_OWNERSHIP: tuple[tuple[str, str], ...] = (
    ("production code", "scheduler"),
    ("tests", "tests/scheduler"),
)


@dataclass(frozen=True)
class Size:
    files: int
    statements: int  # imports and docstrings excluded, as from the other counts
    nodes: int
    logical_lines: int
    imports: int = 0  # the import statements, counted apart

    def __add__(self, other: Size) -> Size:
        return Size(
            self.files + other.files,
            self.statements + other.statements,
            self.nodes + other.nodes,
            self.logical_lines + other.logical_lines,
            self.imports + other.imports,
        )


_EMPTY = Size(0, 0, 0, 0)


def _docstring_nodes(tree: ast.AST) -> list[ast.Expr]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.append(body[0])
    return found


def _walk_code(scope: ast.AST, skip: set[int]) -> list[ast.AST]:
    """Every node under ``scope`` except the ``skip``ped subtrees and load/store markers."""
    found, stack = [], [scope]
    while stack:
        node = stack.pop()
        if id(node) in skip or isinstance(node, ast.expr_context):
            continue
        found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def count(source: str, node: ast.AST | None = None) -> Size:
    """The size of ``source`` (or of one of its top-level ``node``s)."""
    tree = ast.parse(source)
    scope = node or tree
    docstrings = _docstring_nodes(scope)
    imports = [n for n in ast.walk(scope) if isinstance(n, ast.Import | ast.ImportFrom)]
    nodes = _walk_code(scope, {id(n) for n in (*docstrings, *imports)})
    statements = sum(1 for n in nodes if isinstance(n, ast.stmt))
    if node is None:
        first, last = 1, len(source.splitlines()) + 1
    else:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(d.lineno for d in decorators)])  # type: ignore[attr-defined]
        last = node.end_lineno or node.lineno  # type: ignore[attr-defined]
    logical = sum(
        1
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.NEWLINE and first <= tok.start[0] <= last
    )
    # a docstring is a logical line of its own, and so is each import statement (an import
    # always ends its logical line: "import a; x = 1" is two statements, counted apart)
    logical -= len(docstrings) + len(imports)
    return Size(1, statements, len(nodes) - (node is None), logical, len(imports))


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)


def cache_file() -> Path | None:
    """Where counts are kept: ``codesize.json`` in the cache directory
    (``bench.model.caches``; None: no cache, every count made afresh)."""
    directory = cache_directory()
    return None if directory is None else directory / "codesize.json"


_RULES = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]  # the counting rules


class _Counts:
    """The cache of counts: read once; written back (atomically) with only the entries this
    measure used, when it added one or left one unused (an edited file's old counts would
    otherwise pile up, one entry per version ever counted)."""

    def __init__(self, path: Path | None):
        self.path = path
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path is not None else {}
        except (OSError, ValueError):
            data = {}
        self.known: dict[str, list[int]] = data if isinstance(data, dict) else {}
        self.used: dict[str, list[int]] = {}

    def count(self, source: str, name: str = "") -> Size:
        key = hashlib.sha256(f"{_RULES}\0{name}\0{source}".encode()).hexdigest()
        cached = self.known.get(key)
        if isinstance(cached, list) and len(cached) == 5:
            self.used[key] = cached
            return Size(*cached)
        size = _count_named(source, name)
        self.used[key] = list(asdict(size).values())
        return size

    def save(self) -> None:
        if self.path is None or self.used == self.known:
            return
        try:  # a cache that cannot be written only costs time
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(self.used, out)
            os.replace(tmp, self.path)
        except OSError:
            pass


def _count_named(source: str, name: str) -> Size:
    if not name:
        return count(source)
    for node in ast.parse(source).body:
        if getattr(node, "name", None) == name:
            return count(source, node)
    raise ValueError(f"no top-level function or class {name!r}")


def measure_target(target: str, root: Path = PROJECT_ROOT, counts: _Counts | None = None) -> Size:
    """The size of one target: a file, a directory, or ``file.py::name``."""
    path_text, _, name = target.partition("::")
    path = root / path_text
    counter = counts.count if counts is not None else _count_named
    if name:
        try:
            return counter(path.read_text(encoding="utf-8"), name)
        except ValueError as exc:
            raise ValueError(f"{target}: {exc}") from None
    total = _EMPTY
    for file in _files(path):
        total = total + counter(file.read_text(encoding="utf-8"), "")
    return total


def targets() -> list[tuple[str, str, str]]:
    """(component, part, target) for every measured piece: the fixed components, each
    production engine's configuration split into built-in settings and custom code, and
    the ownership rows."""
    rows = [(component, "code", target) for component, target in COMPONENTS]
    for spec in SPECS:
        rows += [(f"{spec.name} configuration", part, target) for part, target in spec.config_code]
    return rows + ownership_targets()


def ownership_targets() -> list[tuple[str, str, str]]:
    """What each side's team maintains itself: the self-built side all of ``scheduler/`` and
    its tests; a framework side, per production engine, its custom code (built-in settings
    are configuration of code maintained upstream)."""

    rows = [(f"{OWNERSHIP_PREFIX}scheduler", p, t) for p, t in SELF_BUILT_OWNERSHIP]
    for spec in SPECS:
        if spec.role != "framework" or spec.outcome_only:
            continue
        custom = [target for part, target in spec.config_code if part == "custom"]
        rows += [(f"{OWNERSHIP_PREFIX}{spec.name}", "custom code", t) for t in custom]
    return rows


def measure(root: Path = PROJECT_ROOT) -> list[dict[str, Any]]:
    """The rows stored in meta.json: one per (component, part, target) that exists."""
    rows = []
    counts = _Counts(cache_file())
    for component, part, target in targets():
        try:
            size = measure_target(target, root, counts)
        except (OSError, SyntaxError, ValueError) as exc:
            rows.append({"component": component, "part": part, "path": target, "error": str(exc)})
            continue
        rows.append({"component": component, "part": part, "path": target, **asdict(size)})
    counts.save()
    return rows
