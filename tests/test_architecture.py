"""The import directions of docs/architecture.md, enforced: every import of every module,
function-level ones included, read from the source (nothing is imported)."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

from bench import PROJECT_ROOT
from bench.engines.packages import FRAMEWORK_IMPORTS

# bench's parts (its sub-packages and top-level modules) → the parts each may import; the
# root package (``bench``: PROJECT_ROOT), ``errors`` and ``model`` (the shared data, leaves)
# are open to all. Arrows point down and one way.
ALLOWED: dict[str, set[str]] = {
    "cli": {"commands", "errors", "results"},
    "commands": {
        "catalogue",
        "debuggability",
        "engines",
        "envs",
        "errors",
        "multimodel",
        "probe",
        "traffic",
        "referee",
        "report",
        "results",
        "runner",
        "workload",
    },
    "runner": {"engines", "envs", "errors", "referee", "results"},
    "workload": {"engines", "errors", "referee", "results", "runner"},
    "report": {"engines", "errors", "results"},
    "probe": {"engines", "envs", "errors", "referee", "results", "runner"},
    "catalogue": {"engines", "envs", "errors", "referee", "results", "runner"},
    "debuggability": {"engines", "errors", "referee", "results"},
    "multimodel": {"engines", "errors", "referee", "results", "runner"},
    "traffic": {"errors"},
    "engines": {"errors", "referee"},
    "results": {"engines", "errors"},  # engines: only its leaf table of packages (below)
    "envs": {"errors"},
    "referee": {"errors"},
    "model": {"errors"},
    "errors": set(),
}
OPEN = {"errors", "model"}
# where a part may import only some modules of another
ONLY: dict[tuple[str, str], set[str]] = {
    ("results", "engines"): {"bench.engines.packages"},
    ("catalogue", "runner"): {"bench.runner.channel"},  # the one worker protocol
}
FRAMEWORKS = {"scheduler", "langchain_baseline", *FRAMEWORK_IMPORTS, "anthropic"}


def _modules(package: str) -> dict[str, Path]:
    found = {}
    for path in sorted((PROJECT_ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


@cache
def imports_of(package: str) -> dict[str, set[str]]:
    """Module of ``package`` → every module name it imports (absolute, any depth)."""
    graph: dict[str, set[str]] = {}
    for name, path in _modules(package).items():
        here = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = names
    return graph


def _resolve(name: str, known: dict[str, set[str]]) -> str | None:
    while name and name not in known:
        name = name.rsplit(".", 1)[0] if "." in name else ""
    return name or None


def _part(module: str) -> str:
    """``bench.runner.phases.suite`` → ``runner``; ``bench`` itself → ``""``."""
    return module.split(".")[1] if module.count(".") else ""


def bench_edges() -> set[tuple[str, str]]:
    """(importer, imported) for every import between two modules of bench."""
    graph = imports_of("bench")
    edges = set()
    for module, names in graph.items():
        for name in names:
            target = _resolve(name, graph)
            if target and target != module and not module.startswith(target + "."):
                edges.add((module, target))
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_part_of_bench_is_in_the_table() -> None:
    parts = {_part(m) for m in imports_of("bench")} - {""}
    assert parts == set(ALLOWED)


def test_bench_imports_point_one_way() -> None:
    wrong = []
    for importer, imported in sorted(bench_edges()):
        mine, theirs = _part(importer), _part(imported)
        if not theirs or mine == theirs or (theirs in OPEN and mine not in OPEN):
            continue
        only = ONLY.get((mine, theirs))
        if theirs not in ALLOWED[mine] or (only is not None and imported not in only):
            wrong.append(f"{importer} -> {imported}")
    assert wrong == []


def test_no_import_cycle_between_modules_even_inside_functions() -> None:
    graph: dict[str, set[str]] = {}
    for importer, imported in bench_edges():
        graph.setdefault(importer, set()).add(imported)
    assert _cycles(graph) == []


def test_no_import_cycle_between_parts() -> None:
    graph: dict[str, set[str]] = {}
    for importer, imported in bench_edges():
        if _part(importer) != _part(imported) and _part(imported):
            graph.setdefault(_part(importer), set()).add(_part(imported))
    assert _cycles(graph) == []


def _foreign(package: str, forbidden: set[str]) -> list[str]:
    return sorted(
        f"{module} -> {name}"
        for module, names in imports_of(package).items()
        for name in names
        if name.split(".")[0] in forbidden
        or any(name == f or name.startswith(f + ".") for f in forbidden if "." in f)
    )


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        # the referee judges every engine alike: it knows none of them
        ("bench/referee", {"bench.engines", "bench.runner", *FRAMEWORKS}),
        ("bench/results", {"bench.report", "bench.runner", "bench.commands", "bench.referee"}),
        ("bench/report", {"bench.runner", "bench.commands", "bench.referee"}),
        ("bench/engines", {"bench.runner", "bench.results", "bench.report", "bench.commands"}),
        # a library someone lifts into a service
        ("scheduler", {"bench", "langchain_baseline", "langchain", "langchain_core", "langgraph"}),
        ("langchain_baseline", {"bench", "scheduler"}),
    ],
)
def test_what_a_package_never_imports(package: str, forbidden: set[str]) -> None:
    dotted = package.replace("/", ".")
    found = [line for line in _foreign(package, forbidden) if line.startswith(dotted)]
    assert found == []


def test_commands_never_import_the_cli() -> None:
    importers = {a for a, b in bench_edges() if b == "bench.cli"}
    assert importers == set()


def test_the_table_catches_a_wrong_arrow() -> None:
    # the checks above would see an upward import: the referee importing an engine
    mine, theirs = _part("bench.referee.core"), _part("bench.engines.raw")
    assert theirs not in ALLOWED[mine]
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
