"""Code lines of the contenders, counted when the report is generated.

A *code line* is a line of a Python file that holds a token other than a comment, and is
not part of a docstring (module, class or function). Blank lines, comments and docstrings
do not count, so the number is comparable with the article's "~400 lines".
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pandas as pd

_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}


def code_lines(source: str) -> int:
    """Number of code lines in ``source`` (see the module docstring)."""
    lines: set[int] = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type not in _SKIP:
                lines.update(range(tok.start[0], tok.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        return sum(
            1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#")
        )
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return len(lines)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                doc = body[0]
                lines.difference_update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    return len(lines)


def _py_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)


def measure_path(path: Path) -> tuple[int, int]:
    """(files, code lines) of a file or of every ``*.py`` under a directory."""
    files = _py_files(path)
    return len(files), sum(code_lines(f.read_text(encoding="utf-8")) for f in files)


_RUN_LOOP = re.compile(r"^\s+async def run\(", re.MULTILINE)


def find_core_loop(package: Path) -> Path | None:
    """The scheduler file that holds the agent's ``async def run(`` loop."""
    for name in ("agent.py", "core.py", "loop.py"):
        if (package / name).is_file() and _RUN_LOOP.search((package / name).read_text("utf-8")):
            return package / name
    for f in _py_files(package):
        if _RUN_LOOP.search(f.read_text(encoding="utf-8")):
            return f
    return None


def measure(root: Path) -> pd.DataFrame | None:
    """The code-size rows for the report, or ``None`` when nothing could be found."""
    rows = []

    def add(component: str, path: Path) -> None:
        if path.exists():
            files, lines = measure_path(path)
            if files:
                rows.append(
                    {
                        "component": component,
                        "path": path.relative_to(root).as_posix(),
                        "files": files,
                        "lines": lines,
                    }
                )

    add("scheduler", root / "scheduler")
    loop = find_core_loop(root / "scheduler") if (root / "scheduler").is_dir() else None
    if loop is not None:
        add("scheduler core loop", loop)
    add("langchain_baseline", root / "langchain_baseline")
    add("engine adapters", root / "bench" / "engines")
    return pd.DataFrame(rows) if rows else None
