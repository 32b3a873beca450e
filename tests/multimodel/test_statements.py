"""The statement diff: formatting-invariant, one change per replaced, added or removed
statement, nested bodies flattened, docstrings and comments ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.engines.statement_diff import find_function, statements_changed
from bench.multimodel.variants import VARIANTS

BEFORE = '''
def make(model, url):
    """Build the model."""
    from vendor_a import ChatA

    client = ChatA(model=model, base_url=url, retries=3)
    if client.ready:
        client.warm()
    return client


class Engine:
    def answer(self, result):
        output = result["output"]
        return output
'''

CASES = {
    "reformatted, commented, new docstring": (
        '''
def make(model, url):
    """Another docstring."""
    from vendor_a import (
        ChatA,
    )

    # a comment
    client = ChatA(
        model=model,
        base_url=url,
        retries=3,
    )
    if client.ready:
        client.warm()  # warm it
    return client
''',
        0,
    ),
    "import and constructor replaced": (
        """
def make(model, url):
    from vendor_b import ChatB

    client = ChatB(model=model, base_url=url, retries=3)
    if client.ready:
        client.warm()
    return client
""",
        2,
    ),
    "one keyword changed": (
        """
def make(model, url):
    from vendor_a import ChatA

    client = ChatA(model=model, base_url=url, retries=5)
    if client.ready:
        client.warm()
    return client
""",
        1,
    ),
    "a statement added inside the if": (
        """
def make(model, url):
    from vendor_a import ChatA

    client = ChatA(model=model, base_url=url, retries=3)
    if client.ready:
        client.warm()
        client.log()
    return client
""",
        1,
    ),
    "the if removed with its body": (
        """
def make(model, url):
    from vendor_a import ChatA

    client = ChatA(model=model, base_url=url, retries=3)
    return client
""",
        2,
    ),
}


def _write(tmp_path: Path, name: str, source: str) -> str:
    (tmp_path / name).write_text(source, encoding="utf-8")
    return f"{name}::make"


@pytest.mark.parametrize("case", sorted(CASES))
def test_statements_changed(tmp_path: Path, case: str) -> None:
    source, expected = CASES[case]
    before = _write(tmp_path, "before.py", BEFORE)
    after = _write(tmp_path, "after.py", source)
    assert statements_changed(before, after, tmp_path) == expected
    assert statements_changed(after, before, tmp_path) == expected  # symmetric


def test_methods_are_found_by_class(tmp_path: Path) -> None:
    _write(tmp_path, "before.py", BEFORE)
    assert find_function("before.py::Engine.answer", tmp_path).name == "answer"
    for target, reason in (
        ("before.py::Nope.answer", "no class 'Nope'"),
        ("before.py::missing", "no function 'missing'"),
        ("before.py", "name a function"),
    ):
        with pytest.raises(ValueError, match=reason):
            find_function(target, tmp_path)


def test_the_switches_of_this_repository() -> None:
    """The provider-specific code of each variant, as the check counts it: the import and the
    constructor of the chat model; plus two statements where the executor's answer is read."""
    counted = {v.label: sum(statements_changed(a, b) for a, b in v.code) for v in VARIANTS}
    assert counted == {
        "lc-create-agent on openai": 0,
        "lc-create-agent on anthropic": 2,
        "lc-agentexecutor on openai": 0,
        "lc-agentexecutor on anthropic": 2,
        "lc-agentexecutor on anthropic (fixed)": 4,
        "lc-agentexecutor-nostream on openai": 0,
        "lc-agentexecutor-nostream on anthropic": 2,
        "scheduler on openai": 0,
        "scheduler on anthropic": 2,
        "scheduler-stream on openai": 0,
        "scheduler-stream on anthropic": 2,
    }
