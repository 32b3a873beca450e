"""Code sizes are formatting-invariant and ignore docstrings and comments."""

from __future__ import annotations

import ast

from bench.engines import codesize

COMPACT = '''"""Module docstring."""
import json


def f(a, b):
    """Doc."""
    # a comment
    return json.dumps({"a": a, "b": b})


class C:
    x = 1
'''

SPREAD = '''"""Module docstring,
over two lines."""

import json


def f(
    a,
    b,
):
    """A longer
    docstring."""

    # a comment

    return json.dumps(
        {
            "a": a,
            "b": b,
        }
    )


class C:
    x = (
        1
    )
'''


def test_reformatting_changes_no_count() -> None:
    compact, spread = codesize.count(COMPACT), codesize.count(SPREAD)
    assert compact == spread  # trailing commas, parentheses, blank lines, longer docstrings
    assert compact.statements == 5  # import, def, return, class, x = 1
    assert compact.logical_lines == 5


def test_docstrings_and_comments_are_not_code() -> None:
    bare = codesize.count("import json\n")
    documented = codesize.count('"""Doc."""\n# note\nimport json\n')
    assert bare == documented


def test_one_function_of_a_file(tmp_path) -> None:
    (tmp_path / "m.py").write_text(COMPACT)
    size = codesize.measure_target("m.py::f", tmp_path)
    assert (size.statements, size.logical_lines) == (2, 2)  # def and return
    # FunctionDef, arguments, arg a, arg b, Return, Call, Attribute, Name json, Dict,
    # 2 keys, 2 values
    assert size.nodes == 13
    tree = ast.parse(COMPACT)
    assert [n.name for n in tree.body if hasattr(n, "name")] == ["f", "C"]


def test_the_run_records_the_components_and_the_production_configurations() -> None:
    rows = codesize.measure()
    parts = {(r["component"], r["part"]) for r in rows}
    assert ("scheduler", "code") in parts and ("scheduler core loop", "code") in parts
    assert ("scheduler configuration", "built-in") in parts
    assert ("scheduler configuration", "custom") in parts
    assert all("error" not in r for r in rows), rows
