"""The table's declarations agree with the source, and the reading of the source can fail."""

from __future__ import annotations

import pytest

from bench.catalogue.internals import findings, kinds, scan
from bench.catalogue.table import CELLS, Cell


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: f"{c.engine}-{c.customisation}")
def test_the_declaration_matches_the_source(cell: Cell) -> None:
    assert cell.target is not None
    assert kinds(cell.target) == cell.internals, [str(f) for f in findings(cell.target)]


BAD = """
from langchain_core.tracers._streaming import _StreamingCallbackHandler
from langchain_classic.agents import AgentExecutor
from langchain.agents.middleware import AgentMiddleware
from scheduler import LightweightAgent


def private_import(kit):
    return _StreamingCallbackHandler()


def private_attribute(agent):
    return agent._params


def patched(kit):
    AgentExecutor._should_continue = lambda *a: False


def patched_instance(agent):
    agent.config.max_steps += 1
    setattr(agent, "hooks", None)


def subclassed(kit):
    class Quiet(AgentExecutor):
        pass

    class Mine(AgentMiddleware):
        def _private_hook(self):
            pass

    return Quiet, Mine


def clean(kit):
    class Counter(AgentMiddleware):
        def __init__(self):
            super().__init__()
            self._seen = 0

        def before_model(self, state, runtime):
            self._seen += 1

    options = {}
    options["params"] = 1
    return Counter(), LightweightAgent(kit.chat_model()), options
"""


def _found(name: str) -> list[tuple[str, str]]:
    return [(f.kind, f.what) for f in scan(BAD, name)]


def test_each_kind_is_found() -> None:
    assert _found("private_import") == [
        ("private API", "uses langchain_core.tracers._streaming._StreamingCallbackHandler")
    ]
    assert _found("private_attribute") == [("private API", "reads ._params")]
    assert _found("patched") == [
        ("monkeypatching", "assigns ._should_continue of an object"),
        ("private API", "reads ._should_continue"),
    ]
    assert _found("patched_instance") == [
        ("monkeypatching", "assigns .max_steps of an object"),
        ("monkeypatching", "calls setattr"),
    ]
    assert _found("subclassed") == [
        ("subclassing internals", "subclasses AgentExecutor"),
        ("subclassing internals", "overrides AgentMiddleware._private_hook"),
    ]


def test_documented_extension_points_and_own_state_are_clean() -> None:
    assert _found("clean") == []
