"""Tool argument schemas: checking a schema, closing it, and matching arguments against it.

A tool's ``parameters`` is exactly what the LLM sees. Scripted arguments (at load time) and
executed arguments (the harness's ``valid_tool_args``) are judged against ``closed_schema``
of it: every object schema that lists ``properties`` and says nothing about other keys gets
``additionalProperties: false``, so a typo (``{cty: Paris}``) or an unquoted comma in a YAML
flow mapping (``{query: a, b}`` adds a key ``b`` with no value) cannot validate. The closure
is never sent to the LLM: every engine sends the schema as written, so prompt tokens stay
comparable with earlier runs. A schema that says otherwise (``additionalProperties: true``,
``patternProperties``, composition with ``allOf``/``anyOf``/``oneOf``/``$ref``) is left open.
"""

from __future__ import annotations

import functools
import json
import time
from contextvars import ContextVar
from typing import Any

import regex
from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError

# A schema's `pattern` is the file's own regular expression: matched with a time limit (and
# all matches of one file within a budget), so that a catastrophic one ("^(a|aa)+$" on a
# long scripted argument) cannot hang the loader.
REGEX_TIMEOUT_S = 0.2
REGEX_BUDGET_S = 1.0
regex_budget: ContextVar[float] = ContextVar("regex_budget", default=REGEX_BUDGET_S)


def _search(pattern: str, text: str) -> bool:
    left = regex_budget.get()
    started = time.perf_counter()
    try:
        found = regex.search(pattern, text, timeout=max(min(REGEX_TIMEOUT_S, left), 0.001))
        return found is not None
    except TimeoutError:
        raise ValidationError(
            f"pattern {pattern!r} takes longer than {REGEX_TIMEOUT_S} s on {text[:40]!r} "
            f"(or the file's patterns over {REGEX_BUDGET_S} s in all); simplify the regular "
            "expression (catastrophic backtracking)"
        ) from None
    finally:
        regex_budget.set(left - (time.perf_counter() - started))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    try:
        matched = not validator.is_type(instance, "string") or _search(pattern, instance)
    except ValidationError as exc:
        yield exc
        return
    if not matched:
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                matched = _search(pattern, key)
            except ValidationError as exc:
                yield exc
                return
            if matched:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


ArgsValidator = validators.extend(
    Draft202012Validator, {"pattern": _pattern, "patternProperties": _pattern_properties}
)

_NULLABLE_KEYWORDS = frozenset({"default", "const", "examples", "enum"})


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why ``schema`` cannot be a tool's ``parameters`` (None: it can)."""
    try:
        key = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON data (built in code): check it uncached
        return _schema_problem(schema)
    return _cached_problem(key)


@functools.lru_cache(maxsize=1024)
def _cached_problem(text: str) -> str | None:
    # checking a schema costs ~5 ms; a file is checked in the field and the cross checks,
    # and the same files are loaded again by every command and worker
    return _schema_problem(json.loads(text))


def _schema_problem(schema: dict[str, Any]) -> str | None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return f"not a valid JSON Schema: {exc.message}"
    if schema.get("type") != "object":
        return "tool parameters must be a JSON Schema with type: object"
    dangling = _dangling_key(schema)
    if dangling is not None:
        where, key = dangling
        return (
            f"{where}: key {key!r} has no value; in YAML a comma splits a {{...}} mapping, "
            "so quote text that contains one"
        )
    return None


def _dangling_key(schema: dict[str, Any]) -> tuple[str, str] | None:
    """The first ``key: null`` that is no JSON Schema keyword (``{description: a, b}``).

    Iterative and visiting each object once: YAML aliases share one object among many
    places, and a walk that re-entered it at each place would be exponential in the nesting.
    """
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(schema, "")]
    while stack:
        node, where = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            children = []
            for key, value in node.items():
                if key in _NULLABLE_KEYWORDS:
                    continue
                if value is None:
                    return where.lstrip(".") or "parameters", str(key)
                children.append((value, f"{where}.{key}"))
            stack.extend(reversed(children))  # depth first, in the file's order
        elif isinstance(node, list):
            stack.extend((item, where) for item in reversed(node))
    return None


# keywords by which a schema says how other keys are treated, or may add keys of its own
_OPEN_KEYWORDS = frozenset(
    {
        "additionalProperties",
        "unevaluatedProperties",
        "patternProperties",
        "propertyNames",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "$ref",
        "$dynamicRef",
        "dependentSchemas",
    }
)
_SCHEMA_MAPS = ("properties", "$defs", "definitions")
_SCHEMA_VALUES = ("items", "additionalProperties", "contains")


def closed_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` whose object schemas with ``properties`` refuse other keys,
    unless they say how other keys are treated (see the module docstring)."""
    memo: dict[int, Any] = {}  # YAML aliases share subschemas: copy each once

    def close(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        if id(node) in memo:
            return memo[id(node)]
        out = memo[id(node)] = dict(node)
        for word in _SCHEMA_MAPS:
            if isinstance(node.get(word), dict):
                out[word] = {key: close(value) for key, value in node[word].items()}
        for word in _SCHEMA_VALUES:
            if isinstance(node.get(word), dict):
                out[word] = close(node[word])
        if isinstance(node.get("prefixItems"), list):
            out["prefixItems"] = [close(item) for item in node["prefixItems"]]
        if isinstance(node.get("properties"), dict) and not _OPEN_KEYWORDS & node.keys():
            out["additionalProperties"] = False
        return out

    closed: dict[str, Any] = close(schema)
    return closed
