"""Does a cell lean on a framework's internals? A static reading of its source, to check the table.

``findings(target)`` reads one top-level function or class (``file.py::name``, as
``bench.codesize`` reads it) and reports, with the line of each:

- **private API** — a ``_private`` name imported (or imported from a ``_private`` module) and
  used by the cell, or an attribute ``x._name`` read anywhere but on the cell's own ``self``;
- **subclassing internals** — a class of the cell that subclasses a framework class other
  than the documented extension bases (``DOCUMENTED_BASES``), or that overrides a
  ``_private`` method of its framework base;
- **monkeypatching** — an assignment to an attribute of anything but the cell's own
  ``self`` (``obj.attr = ...``, ``obj.attr += ...``), or a ``setattr`` call.

The table (``bench.catalogue.table``) declares each cell's kinds; a test checks that the
declaration and these findings agree, so a cell cannot quietly reach into a framework.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bench.codesize import PROJECT_ROOT

Kind = Literal["private API", "subclassing internals", "monkeypatching"]
KINDS: tuple[Kind, ...] = ("private API", "subclassing internals", "monkeypatching")

# the top-level packages of the frameworks whose internals a cell might reach into
FRAMEWORKS = frozenset(
    {
        "langchain",
        "langchain_classic",
        "langchain_core",
        "langchain_openai",
        "langgraph",
        "langsmith",
        "openai",
        "scheduler",
        "agents",
        "pydantic_ai",
        "llama_index",
        "agno",
        "strands",
        "autogen_agentchat",
        "autogen_core",
        "autogen_ext",
        "agent_framework",
    }
)
# classes their docs tell users to subclass
DOCUMENTED_BASES = frozenset(
    {
        "AgentMiddleware",  # LangChain 1.x custom middleware
        "BaseCallbackHandler",  # LangChain callbacks
        "AsyncCallbackHandler",
        "BaseTool",  # a custom LangChain tool
        "Model",  # OpenAI Agents SDK: a custom model
        "RunHooks",  # OpenAI Agents SDK: run lifecycle hooks
        "TracingProcessor",  # OpenAI Agents SDK: a custom trace processor
    }
)


@dataclass(frozen=True)
class Finding:
    kind: Kind
    line: int
    what: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.kind}: {self.what}"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports(tree: ast.Module) -> dict[str, tuple[str, str]]:
    """Module-level bound name -> (module, imported name)."""
    bound: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                bound[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                bound[alias.asname or alias.name.split(".")[0]] = (alias.name, "")
    return bound


def _is_framework(module: str) -> bool:
    return module.split(".")[0] in FRAMEWORKS


def _own_attributes(node: ast.AST) -> set[str]:
    """Names the cell's own classes define (methods, and attributes set on ``self``)."""
    names: set[str] = set()
    for cls in (n for n in ast.walk(node) if isinstance(n, ast.ClassDef)):
        for item in ast.walk(cls):
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                names.add(item.name)
            elif (
                isinstance(item, ast.Attribute)
                and isinstance(item.ctx, ast.Store)
                and isinstance(item.value, ast.Name)
                and item.value.id == "self"
            ):
                names.add(item.attr)
    return names


def _base_name(base: ast.expr) -> str | None:
    if isinstance(base, ast.Name):
        return base.id
    if isinstance(base, ast.Attribute):
        return base.attr
    return None


def scan(source: str, name: str) -> list[Finding]:
    """The findings of the top-level function or class ``name`` of ``source``."""
    tree = ast.parse(source)
    node = next((n for n in tree.body if getattr(n, "name", None) == name), None)
    if node is None:
        raise ValueError(f"no top-level function or class {name!r}")
    imports = _imports(tree)
    own = _own_attributes(node)
    found: list[Finding] = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in imports:
            module, imported = imports[n.id]
            if _private(imported) or any(_private(part) for part in module.split(".")):
                found.append(Finding("private API", n.lineno, f"uses {module}.{imported}"))
        elif isinstance(n, ast.Attribute) and _private(n.attr):
            on_self = isinstance(n.value, ast.Name) and n.value.id == "self" and n.attr in own
            if not on_self:
                found.append(Finding("private API", n.lineno, f"reads .{n.attr}"))
        if isinstance(n, ast.ClassDef):
            for base in n.bases:
                base_name = _base_name(base)
                origin = imports.get(base_name or "", ("", ""))[0]
                if base_name and _is_framework(origin) and base_name not in DOCUMENTED_BASES:
                    found.append(
                        Finding("subclassing internals", n.lineno, f"subclasses {base_name}")
                    )
                if base_name and _is_framework(origin):
                    for item in n.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _private(
                            item.name
                        ):
                            found.append(
                                Finding(
                                    "subclassing internals",
                                    item.lineno,
                                    f"overrides {base_name}.{item.name}",
                                )
                            )
        targets: list[ast.expr] = []
        if isinstance(n, ast.Assign):
            targets = list(n.targets)
        elif isinstance(n, ast.AugAssign | ast.AnnAssign):
            targets = [n.target]
        for target in targets:
            for t in ast.walk(target):
                on_self = isinstance(t, ast.Attribute) and _base_name(t.value) == "self"
                if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store) and not on_self:
                    found.append(
                        Finding("monkeypatching", t.lineno, f"assigns .{t.attr} of an object")
                    )
        if (
            isinstance(n, ast.Call)
            and (_base_name(n.func) or "") in ("setattr", "__setattr__")
            and not (isinstance(n.func, ast.Attribute) and _base_name(n.func.value) == "super")
        ):
            found.append(Finding("monkeypatching", n.lineno, "calls setattr"))
    return sorted(set(found), key=lambda f: (f.line, f.kind, f.what))


def findings(target: str, root: Path = PROJECT_ROOT) -> list[Finding]:
    """The findings of ``file.py::name`` (see the module docstring)."""
    path, _, name = target.partition("::")
    if not name:
        raise ValueError(f"{target}: expected file.py::name")
    return scan((root / path).read_text(encoding="utf-8"), name)


def kinds(target: str, root: Path = PROJECT_ROOT) -> tuple[Kind, ...]:
    """The kinds found in ``target``, in ``KINDS`` order."""
    present = {f.kind for f in findings(target, root)}
    return tuple(k for k in KINDS if k in present)
