"""Code sizes are formatting-invariant, ignore docstrings and comments, leave imports out
everywhere, and count each side's configuration and owned code the same way."""

from __future__ import annotations

import ast
import dataclasses

from bench.engines import codesize
from bench.model.caches import ENV_VARIABLE

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
    assert compact.statements == 4  # def, return, class, x = 1 (the import counted apart)
    assert compact.logical_lines == 4
    assert compact.imports == 1


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


# one program shape, written three ways: its imports at the top of its own module, at the
# top of a module it shares (counted as one function of it), or inside the function
OWN_MODULE = """import json
from collections import Counter


def guard(calls):
    made = Counter(json.dumps(c) for c in calls)
    return max(made.values()) > 2
"""
SHARED_MODULE = """import json
from collections import Counter

LIMIT = 2


def guard(calls):
    made = Counter(json.dumps(c) for c in calls)
    return max(made.values()) > 2
"""
LOCAL_IMPORTS = """def guard(calls):
    import json
    from collections import Counter

    made = Counter(json.dumps(c) for c in calls)
    return max(made.values()) > 2
"""


def test_the_same_program_shape_counts_the_same_on_every_side(tmp_path) -> None:
    """A framework side counted by whole modules, a self-built side by functions of a file:
    the imports must not make the difference (they did: 2 statements more for the module)."""
    (tmp_path / "own.py").write_text(OWN_MODULE)
    (tmp_path / "shared.py").write_text(SHARED_MODULE)
    (tmp_path / "local.py").write_text(LOCAL_IMPORTS)
    whole = codesize.measure_target("own.py", tmp_path)
    function = codesize.measure_target("shared.py::guard", tmp_path)
    local = codesize.measure_target("local.py", tmp_path)
    code = (whole.statements, whole.nodes, whole.logical_lines)
    assert code == (function.statements, function.nodes, function.logical_lines)
    assert code == (local.statements, local.nodes, local.logical_lines)
    assert code[0] == 3  # def, made = ..., return
    assert (whole.imports, function.imports, local.imports) == (2, 0, 2)


def test_every_settings_call_and_our_own_guards_are_counted() -> None:
    """Our side's AgentConfig(...) call is configuration like LangChain's create_agent(...)
    and middleware calls, and the guards we wrote (breaker, token counting) are code we
    maintain, not built in."""
    from bench.engines.registry import spec

    for engine in ("scheduler", "scheduler-stream"):
        config = spec(engine).config_code
        assert ("custom", "scheduler/breaker.py") in config
        assert ("custom", "scheduler/tokens.py") in config
        calls = set()
        for part, target in config:
            path, _, name = target.partition("::")
            tree = ast.parse((codesize.PROJECT_ROOT / path).read_text(encoding="utf-8"))
            scope = next((n for n in tree.body if getattr(n, "name", None) == name), tree)
            calls |= {
                (part, n.func.id)
                for n in ast.walk(scope)
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            }
        assert ("built-in", "AgentConfig") in calls


def test_the_run_records_who_owns_what() -> None:
    rows = {(r["component"], r["part"], r["path"]): r for r in codesize.measure()}
    ours = rows[("ownership: scheduler", "production code", "scheduler")]
    tests = rows[("ownership: scheduler", "tests", "tests/scheduler")]
    assert ours["logical_lines"] > 1000 and tests["logical_lines"] > 500
    assert ours["logical_lines"] == rows[("scheduler", "code", "scheduler")]["logical_lines"]
    theirs = [r for (c, p, _), r in rows.items() if c == "ownership: lc-create-agent-prod"]
    assert {r["path"] for r in theirs} == {
        t for part, t in spec_config("lc-create-agent-prod") if part == "custom"
    }
    assert all(r["part"] == "custom code" and r["logical_lines"] > 0 for r in theirs)


def spec_config(engine: str) -> tuple[tuple[str, str], ...]:
    from bench.engines.registry import spec

    return spec(engine).config_code


def test_a_cached_count_is_the_count_of_the_same_text(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_VARIABLE, str(tmp_path / "cache"))
    (tmp_path / "m.py").write_text(COMPACT)
    counts = codesize._Counts(codesize.cache_file())
    fresh = codesize.measure_target("m.py::f", tmp_path, counts)
    counts.save()
    again = codesize._Counts(codesize.cache_file())  # read back from the file
    assert len(again.known) == 1
    assert codesize.measure_target("m.py::f", tmp_path, again) == fresh
    assert codesize.measure_target("m.py::f", tmp_path) == fresh  # no cache at all
    # an edited file is counted again, not read from the cache
    (tmp_path / "m.py").write_text(COMPACT.replace("return json", "x = 1\n    return json"))
    after = codesize._Counts(codesize.cache_file())  # the next measure
    edited = codesize.measure_target("m.py::f", tmp_path, after)
    assert edited.statements == fresh.statements + 1
    after.save()  # the old text's count was not used: it is dropped
    kept = codesize._Counts(codesize.cache_file())
    assert list(kept.known.values()) == [list(dataclasses.asdict(edited).values())]
    # a cache file that is not JSON costs only time
    codesize.cache_file().write_text("{not json")
    assert (
        codesize.measure_target("m.py::f", tmp_path, codesize._Counts(codesize.cache_file()))
        == edited
    )
