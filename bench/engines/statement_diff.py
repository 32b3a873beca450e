"""How many statements a change of code makes: an ``ast`` diff of two functions or programs
(the provider switch of ``bench.multimodel``, the version matrix's fixes).

Each function's body is flattened into its statements in source order (a compound
statement — ``if``, ``for``, ``with``, ``try`` — contributes its own header and then the
statements of its bodies), docstrings left out, each statement compared by its syntax tree
without positions (``ast.dump``), so formatting, comments and line breaks never count. The
two sequences are aligned with ``difflib.SequenceMatcher``; every non-equal stretch counts
the longer of its two sides (a replaced statement is one change, an inserted or deleted one
is one change). Of a compound statement only the header is compared: an ``if`` whose
condition changed is one change, a statement added in its body is another.

Targets name a function as ``path.py::name`` or a method as ``path.py::Class.method``,
relative to the repository (``bench.PROJECT_ROOT``).
"""

from __future__ import annotations

import ast
import difflib
from pathlib import Path

from bench import PROJECT_ROOT

_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
Function = ast.FunctionDef | ast.AsyncFunctionDef


def find_function(target: str, root: Path = PROJECT_ROOT) -> Function:
    """The function or method a target names (``ValueError`` when there is none)."""
    path_text, _, dotted = target.partition("::")
    if not dotted:
        raise ValueError(f"{target}: name a function as path.py::name or path.py::Class.method")
    scope: list[ast.stmt] = ast.parse((root / path_text).read_text(encoding="utf-8")).body
    *owners, name = dotted.split(".")
    for owner in owners:
        found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if found is None:
            raise ValueError(f"{target}: no class {owner!r}")
        scope = found.body
    for node in scope:
        if isinstance(node, Function) and node.name == name:
            return node
    raise ValueError(f"{target}: no function {name!r}")


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _header(node: ast.AST) -> str:
    """A statement without its nested bodies, as a position-free dump."""
    fields = {
        name: value
        for name, value in ast.iter_fields(node)
        if name not in _BODIES and name != "type_comment"
    }
    return type(node).__name__ + repr(
        {k: ast.dump(v) if isinstance(v, ast.AST) else _dump_list(v) for k, v in fields.items()}
    )


def _dump_list(value: object) -> object:
    if isinstance(value, list):
        return [ast.dump(v) if isinstance(v, ast.AST) else v for v in value]
    return value


def flat_statements(body: list[ast.stmt], *, docstring: bool = True) -> list[str]:
    """The statements of a body, flattened in source order (see the module docstring);
    ``docstring``: the body is a function's or a class's, whose docstring is left out."""
    out: list[str] = []
    for index, node in enumerate(body):
        if docstring and index == 0 and _is_docstring(node):
            continue
        out.append(_header(node))
        defines = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        for name in _BODIES:
            children = getattr(node, name, None) or []
            if name == "body" and defines:
                out.extend(flat_statements(children))
                continue
            for child in children:
                if isinstance(child, ast.ExceptHandler | ast.match_case):
                    out.append(_header(child))
                    out.extend(flat_statements(child.body, docstring=False))
                else:
                    out.extend(flat_statements([child], docstring=False))
    return out


def changed(before: list[str], after: list[str]) -> int:
    """Statements changed between two flattened bodies (see the module docstring)."""
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return sum(
        max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def statements_changed(before: str, after: str, root: Path = PROJECT_ROOT) -> int:
    """Statements changed from the function ``before`` to the function ``after`` (targets)."""
    return changed(
        flat_statements(find_function(before, root).body),
        flat_statements(find_function(after, root).body),
    )
