"""JSON Schema, the small part tools need: build one from Python types, validate arguments.

The validator covers the subset tool schemas use — ``type`` (one or a list), ``enum``,
``const``, ``properties``, ``required``, ``additionalProperties``, ``items``, ``anyOf`` /
``oneOf``, numeric and length bounds — so the scheduler needs no jsonschema dependency.
Keywords outside the subset are ignored (never a false rejection).
"""

from __future__ import annotations

import enum
import types
import typing
from collections import abc
from collections.abc import Callable
from typing import Any

Converter = Callable[[Any], Any]

_TYPES: dict[str, Any] = {
    "string": str,
    "object": dict,
    "array": list,
    "boolean": bool,
    "null": type(None),
}


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    expected = _TYPES.get(name)
    return True if expected is None else isinstance(value, expected)


def _where(path: str) -> str:
    return path or "arguments"


def validate(value: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Every way ``value`` violates ``schema``, as ``"path: reason"`` strings (empty: valid)."""
    errors: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else (expected,)
        if not any(_is_type(value, n) for n in names):
            shown = " or ".join(f"'{n}'" for n in names)
            return [f"{_where(path)}: {value!r} is not of type {shown}"]
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{_where(path)}: {value!r} is not one of {schema['enum']!r}")
    if "const" in schema and value != schema["const"]:
        errors.append(f"{_where(path)}: {value!r} is not {schema['const']!r}")
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if options and all(validate(value, option, path) for option in options):
            errors.append(f"{_where(path)}: {value!r} matches none of the allowed schemas")
    if isinstance(value, dict):
        _object(value, schema, path, errors)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                errors.extend(validate(item, items, f"{path}[{i}]"))
        _bounds(len(value), schema, "minItems", "maxItems", "items", path, errors)
    elif isinstance(value, str):
        _bounds(len(value), schema, "minLength", "maxLength", "characters", path, errors)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(
                f"{_where(path)}: {value!r} is less than the minimum {schema['minimum']!r}"
            )
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(
                f"{_where(path)}: {value!r} is more than the maximum {schema['maximum']!r}"
            )
    return errors


def _object(value: dict[str, Any], schema: dict[str, Any], path: str, errors: list[str]) -> None:
    properties = schema.get("properties") or {}
    for name in schema.get("required") or ():
        if name not in value:
            errors.append(f"{_where(path)}: '{name}' is a required property")
    extra = schema.get("additionalProperties", True)
    for name, item in value.items():
        sub = properties.get(name)
        where = f"{path}.{name}" if path else name
        if sub is not None:
            errors.extend(validate(item, sub, where))
        elif extra is False:
            errors.append(f"{_where(path)}: unexpected property '{name}'")
        elif isinstance(extra, dict):
            errors.extend(validate(item, extra, where))


def _bounds(
    size: int, schema: dict[str, Any], low: str, high: str, unit: str, path: str, errors: list[str]
) -> None:
    if low in schema and size < schema[low]:
        errors.append(f"{_where(path)}: has {size} {unit}, fewer than {low} {schema[low]}")
    if high in schema and size > schema[high]:
        errors.append(f"{_where(path)}: has {size} {unit}, more than {high} {schema[high]}")


# -- building schemas from annotations ---------------------------------------------------


def is_model(annotation: Any) -> bool:
    """A pydantic model class (recognised by its methods: pydantic is never imported here)."""
    return isinstance(annotation, type) and all(
        callable(getattr(annotation, name, None))
        for name in ("model_validate", "model_json_schema")
    )


def _model_ref(model: Any, defs: dict[str, Any] | None) -> dict[str, Any]:
    schema = dict(model.model_json_schema(ref_template="#/$defs/{model}"))
    nested = schema.pop("$defs", {})
    if defs is None:  # no document to hold definitions: inline (nested models unresolved)
        return schema
    defs.update(nested)
    defs[model.__name__] = schema
    return {"$ref": f"#/$defs/{model.__name__}"}


def schema_for(annotation: Any, defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of a Python type annotation (raises TypeError when there is none).
    Pydantic models are referenced as ``#/$defs/<Model>`` and their schemas put in ``defs``."""
    if annotation is Any or annotation is typing.Any:
        return {}
    if is_model(annotation):
        return _model_ref(annotation, defs)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        schema = dict(schema_for(args[0], defs))
        for extra in args[1:]:
            if isinstance(extra, str):
                schema["description"] = extra
        return schema
    if annotation is None or annotation is type(None):
        return {"type": "null"}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if annotation in simple:
        return {"type": simple[annotation]}
    if origin is typing.Literal:
        values = list(args)
        kinds = {type(v) for v in values}
        if len(kinds) == 1 and next(iter(kinds)) in simple:
            return {"type": simple[next(iter(kinds))], "enum": values}
        return {"enum": values}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return schema_for(typing.Literal[tuple(m.value for m in annotation)])
    if origin in (typing.Union, types.UnionType):
        members = [schema_for(a, defs) for a in args]
        plain = [m.get("type") for m in members]
        if all(isinstance(t, str) and len(m) == 1 for t, m in zip(plain, members, strict=True)):
            return {"type": plain}
        return {"anyOf": members}
    if annotation in (list, tuple, set, frozenset) or origin in (
        list,
        tuple,
        set,
        frozenset,
        abc.Sequence,
    ):
        if origin is tuple and args and args[-1] is not Ellipsis:
            items = schema_for(args[0], defs) if len(set(args)) == 1 else {}
            return {"type": "array", "items": items}
        return {"type": "array", "items": schema_for(args[0], defs)} if args else {"type": "array"}
    if annotation is dict or origin in (dict, abc.Mapping):
        if len(args) == 2 and args[1] is not Any:
            return {"type": "object", "additionalProperties": schema_for(args[1], defs)}
        return {"type": "object"}
    raise TypeError(f"no JSON Schema for the annotation {annotation!r}")


# -- coercing checked JSON values to the annotated Python types ---------------------------


def _to_int(value: Any) -> Any:
    return int(value) if isinstance(value, float) else value  # 2.0 passed the schema: 2


def _to_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _optional(convert: Converter) -> Converter:
    return lambda value: None if value is None else convert(value)


def _items(convert: Converter | None, kind: Callable[[Any], Any]) -> Converter:
    if convert is None:
        return lambda value: kind(value) if isinstance(value, list) else value
    return lambda value: kind(convert(v) for v in value) if isinstance(value, list) else value


def converter_for(annotation: Any) -> Converter | None:
    """How to turn a JSON value that passed the schema into the annotated type (``Enum``
    member, ``int``, ``float``, model instance, containers of those); None: as it is."""
    if annotation is bool:
        return None
    if annotation is int:
        return _to_int
    if annotation is float:
        return _to_float
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation
    if is_model(annotation):
        return annotation.model_validate  # type: ignore[no-any-return]
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return converter_for(args[0])
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        convert = converter_for(members[0]) if len(members) == 1 else None
        return None if convert is None else _optional(convert)
    if origin in (list, abc.Sequence, tuple, set, frozenset):
        convert = converter_for(args[0]) if args else None
        kind: Callable[[Any], Any] = {tuple: tuple, set: set, frozenset: frozenset}.get(
            origin, list
        )
        if convert is None and kind is list:
            return None
        return _items(convert, kind)
    if origin in (dict, abc.Mapping) and len(args) == 2:
        convert = converter_for(args[1])
        if convert is None:
            return None
        return lambda value: (
            {k: convert(v) for k, v in value.items()} if isinstance(value, dict) else value
        )
    return None
