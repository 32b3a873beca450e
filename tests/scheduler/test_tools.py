"""ToolSpec, the @tool decorator, the JSON-Schema subset validator, result serialisation."""

from __future__ import annotations

import dataclasses
import datetime
import enum
from typing import Annotated, Literal

import pytest

from scheduler import ConfigError, ToolArgumentsError, ToolContext, ToolSpec, tool
from scheduler.schema import validate
from scheduler.tools import parse_docstring, to_content


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def test_decorator_builds_schema_from_signature_and_docstring():
    @tool
    def find_orders(
        customer: str,
        status: Literal["open", "closed"] = "open",
        limit: int = 10,
        tags: list[str] | None = None,
        color: Color = Color.RED,
        note: Annotated[str, "free text"] = "",
        ctx: ToolContext | None = None,
    ) -> list[dict]:
        """Find a customer's orders.

        Returns the most recent first.

        Args:
            customer: The customer id,
                e.g. C-1.
            status (str): Which orders.
            limit: At most this many.
        """
        return []

    assert find_orders.name == "find_orders"
    assert find_orders.description == "Find a customer's orders. Returns the most recent first."
    assert find_orders.parameters == {
        "type": "object",
        "properties": {
            "customer": {"type": "string", "description": "The customer id, e.g. C-1."},
            "status": {
                "type": "string",
                "enum": ["open", "closed"],
                "description": "Which orders.",
                "default": "open",
            },
            "limit": {"type": "integer", "description": "At most this many.", "default": 10},
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
            "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
            "note": {"type": "string", "description": "free text", "default": ""},
        },
        "required": ["customer"],
        "additionalProperties": False,
    }
    assert find_orders.context_param == "ctx"
    assert find_orders("C-1") == []  # still callable
    assert find_orders.to_openai() == {
        "type": "function",
        "function": {
            "name": "find_orders",
            "description": find_orders.description,
            "parameters": find_orders.parameters,
        },
    }


def test_decorator_options_and_rest_docstrings():
    @tool(name="lookup", timeout=5, require_confirmation=True)
    async def get(order_id: str) -> str:
        """Look an order up.

        :param order_id: the id
        """
        return order_id

    assert (get.name, get.timeout, get.require_confirmation, get.is_async) == (
        "lookup",
        5,
        True,
        True,
    )
    assert get.parameters["properties"] == {"order_id": {"type": "string", "description": "the id"}}
    assert parse_docstring("Summary line.\n\nArgs:\n    x (int): the x\n") == (
        "Summary line.",
        {"x": "the x"},
    )


def test_decorator_rejects_what_it_cannot_describe():
    with pytest.raises(ConfigError, match=r"\*args / \*\*kwargs"):
        tool(lambda *args: None)

    def f(x: Weird) -> None: ...

    with pytest.raises(ConfigError, match="parameter 'x': no JSON Schema for the annotation"):
        tool(f)

    class Local:
        pass

    def g(x: Local) -> None: ...  # a string annotation nobody can resolve

    with pytest.raises(ConfigError, match="tool 'g': cannot resolve its annotations"):
        tool(g)


def test_toolspec_validates_its_own_definition():
    with pytest.raises(ConfigError, match="must match"):
        ToolSpec("bad name", "d", {"type": "object"}, lambda: None)
    with pytest.raises(ConfigError, match="type 'object'"):
        ToolSpec("ok", "d", {"type": "string"}, lambda: None)
    with pytest.raises(ConfigError, match="not callable"):
        ToolSpec("ok", "d", {"type": "object"}, 42)  # type: ignore[arg-type]


SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 2},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "mode": {"enum": ["fast", "exact"]},
        "filters": {
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            "additionalProperties": False,
        },
        "score": {"type": ["number", "null"]},
    },
    "required": ["query"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        ({"query": "ok"}, []),
        ({"query": "ok", "limit": 5.0, "score": None, "filters": {"tags": ["a"]}}, []),
        ({}, ["arguments: 'query' is a required property"]),
        ({"query": 3}, ["query: 3 is not of type 'string'"]),
        ({"query": "x"}, ["query: has 1 characters, fewer than minLength 2"]),
        ({"query": "ok", "limit": True}, ["limit: True is not of type 'integer'"]),
        ({"query": "ok", "limit": 0}, ["limit: 0 is less than the minimum 1"]),
        ({"query": "ok", "limit": 99}, ["limit: 99 is more than the maximum 50"]),
        ({"query": "ok", "mode": "slow"}, ["mode: 'slow' is not one of ['fast', 'exact']"]),
        (
            {"query": "ok", "filters": {"tags": ["a", 2], "x": 1}},
            ["filters.tags[1]: 2 is not of type 'string'", "filters: unexpected property 'x'"],
        ),
        ({"query": "ok", "score": "high"}, ["score: 'high' is not of type 'number' or 'null'"]),
        ({"query": "ok", "extra": 1}, ["arguments: unexpected property 'extra'"]),
        ([], ["arguments: [] is not of type 'object'"]),
    ],
)
def test_validator(value, errors):
    assert validate(value, SCHEMA) == errors


def test_validator_any_of():
    schema = {"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0}]}
    assert validate("a", schema) == validate(3, schema) == []
    assert validate(-1, schema) == ["arguments: -1 matches none of the allowed schemas"]


def test_check_arguments_never_lets_bad_input_through():
    calls = []
    spec = ToolSpec("search", "d", SCHEMA, lambda query, limit=10: calls.append(query))
    assert spec.check_arguments('{"query": "ok", "limit": 3}') == {"query": "ok", "limit": 3}
    cases = {
        "{bad": "arguments are not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        "[1]": "arguments must be a JSON object, not list",
        '{"query": 1}': "query: 1 is not of type 'string'",
        "": "arguments: 'query' is a required property",
        # in the schema, but the handler does not take it
        '{"query": "ok", "mode": "fast"}': "arguments: unexpected property 'mode'",
    }
    for raw, message in cases.items():
        with pytest.raises(ToolArgumentsError) as caught:
            spec.check_arguments(raw)
        assert caught.value.errors == [message], raw
        assert str(caught.value) == f"invalid arguments for 'search': {message}"
    assert calls == []


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Weird:
    def __str__(self) -> str:
        return "<weird>"


def test_to_content_serialises_what_json_dumps_cannot():
    assert to_content("plain text") == "plain text"
    assert to_content({"a": 1, "é": "ü"}) == '{"a": 1, "é": "ü"}'
    value = {
        "when": datetime.date(2026, 11, 20),
        "point": Point(1, 2),
        "tags": {"x"},
        "blob": b"hi",
        "color": Color.BLUE,
        "other": Weird(),
        "pair": (1, 2),
    }
    assert to_content(value) == (
        '{"when": "2026-11-20", "point": {"x": 1, "y": 2}, "tags": ["x"], "blob": "hi", '
        '"color": "blue", "other": "<weird>", "pair": [1, 2]}'
    )
    circular: list = []
    circular.append(circular)
    assert to_content(circular) == "[[...]]"
    assert to_content(None) == "null"


def test_flat_schemas_take_the_fast_path_with_the_same_verdicts():
    flat = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": "d"}, "n": {"type": "integer"}},
        "required": ["q"],
        "additionalProperties": False,
    }
    spec = ToolSpec("f", "d", flat, lambda **kw: None)
    assert spec._flat is not None and ToolSpec("g", "d", SCHEMA, lambda **kw: None)._flat is None
    assert spec.check_arguments('{"q": "x", "n": 2.0}') == {"q": "x", "n": 2.0}  # 2.0 is an integer
    for raw, message in {
        '{"n": 1}': "arguments: 'q' is a required property",
        '{"q": "x", "n": true}': "n: True is not of type 'integer'",
        '{"q": "x", "z": 1}': "arguments: unexpected property 'z'",
    }.items():
        with pytest.raises(ToolArgumentsError) as caught:
            spec.check_arguments(raw)
        assert caught.value.errors == [message]
