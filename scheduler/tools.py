"""Tools: ``ToolSpec``, the ``@tool`` decorator, argument checking and result serialisation.

Arguments come from the LLM and are untrusted. ``ToolSpec.check_arguments`` turns the raw
JSON text into keyword arguments or raises ``ToolArgumentsError`` (malformed JSON, schema
violations, names the handler does not take), so a handler is never called with bad input.
Checked arguments are then coerced to the handler's annotations: an ``Enum`` parameter gets
the member, ``int`` / ``float`` get that type, a pydantic model gets ``model_validate``-d
(pydantic is never imported here: a model is recognised by its methods).
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.errors import ConfigError, ToolArgumentsError, safe_str
from scheduler.schema import Converter, converter_for, schema_for, validate

if TYPE_CHECKING:
    from scheduler.state import RunState
    from scheduler.trace import Span
    from scheduler.types import ToolCall

NO_TIMEOUT = float("inf")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(slots=True)
class ToolContext:
    """Given to a handler that declares a parameter annotated ``ToolContext``."""

    state: RunState  # the run: its ``context`` object, usage, messages, agent name
    call: ToolCall  # the call being executed (id, name, raw arguments)
    span: Span | None  # this call's trace span (sub-agents nest their trace under it)


@dataclass(slots=True, eq=False)
class ToolSpec:
    """A tool the LLM may call.

    ``parameters`` is the JSON Schema the LLM sees and the arguments are checked against.
    ``timeout``: seconds, ``None`` for the agent's ``tool_timeout``, ``NO_TIMEOUT`` for none.
    ``run_in_thread``: sync handlers run in a worker thread so that a slow one neither blocks
    the event loop nor escapes its timeout; set it False only for handlers that return at
    once (they then run inline, and no timeout can interrupt them).
    ``max_concurrency``: calls of this tool in worker threads at once, stuck ones included
    (None: the pool's ``per_tool`` default) — the bulkhead that keeps a hung dependency
    from taking every thread.
    ``expose_errors``: send the handler's exception text to the LLM; by default it reads
    only the exception type (the text may hold secrets). ``ToolInputError`` messages are
    always sent: the tool wrote them for the LLM.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Callable[..., Any]
    require_confirmation: bool = False
    timeout: float | None = None
    run_in_thread: bool = True
    max_concurrency: int | None = None
    expose_errors: bool = False
    is_async: bool = field(init=False, repr=False)
    context_param: str | None = field(init=False, repr=False)  # where ToolContext goes
    accepted: frozenset[str] | None = field(init=False, repr=False)  # None: takes **kwargs
    _convert: dict[str, Converter] = field(init=False, repr=False)  # to the annotated types
    _schema: dict[str, Any] = field(init=False, repr=False)
    _flat: tuple[dict[str, Any], tuple[str, ...], bool] | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise ConfigError(f"tool name {self.name!r} must match {_NAME.pattern}")
        if not isinstance(self.parameters, dict) or self.parameters.get("type") != "object":
            raise ConfigError(
                f"tool {self.name!r}: parameters must be a JSON Schema with type 'object'"
            )
        if not callable(self.handler):
            raise ConfigError(f"tool {self.name!r}: handler is not callable")
        self.is_async = inspect.iscoroutinefunction(self.handler) or inspect.iscoroutinefunction(
            type(self.handler).__call__
        )
        if self.max_concurrency is not None and self.max_concurrency < 1:
            raise ConfigError(f"tool {self.name!r}: max_concurrency must be >= 1 or None")
        self.context_param, self.accepted, self._convert = _inspect_handler(self.handler)
        self._schema = {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }
        self._flat = _flat_schema(self.parameters)

    def to_openai(self) -> dict[str, Any]:
        """The entry of the request's ``tools`` list (built once, shared: do not mutate)."""
        return self._schema

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A decorated function stays callable as before."""
        return self.handler(*args, **kwargs)

    def check_arguments(self, raw: str | dict[str, Any] | None) -> dict[str, Any]:
        """Raw JSON text from the LLM -> keyword arguments; raises ToolArgumentsError."""
        if isinstance(raw, dict):
            args = raw
        elif raw is None or not raw.strip():
            args = {}
        else:
            try:
                args = json.loads(raw)
            except ValueError as exc:
                raise ToolArgumentsError(
                    self.name, [f"arguments are not valid JSON ({exc})"]
                ) from None
        if not isinstance(args, dict):
            raise ToolArgumentsError(
                self.name, [f"arguments must be a JSON object, not {type(args).__name__}"]
            )
        errors = (
            []
            if self._flat is not None and _flat_ok(args, *self._flat)
            else validate(args, self.parameters)
        )
        if not errors and self.accepted is not None and not self.accepted.issuperset(args):
            errors = [
                f"arguments: unexpected property '{n}'" for n in sorted(args.keys() - self.accepted)
            ]
        if errors:
            raise ToolArgumentsError(self.name, errors)
        if self._convert:
            args = self._coerce(args)
        return args

    def _coerce(self, args: dict[str, Any]) -> dict[str, Any]:
        out = dict(args)
        problems: list[str] = []
        for name, convert in self._convert.items():
            if name in out:
                try:
                    out[name] = convert(out[name])
                except ValueError as exc:  # pydantic's ValidationError is a ValueError
                    problems.extend(_validation_messages(name, exc))
        if problems:
            raise ToolArgumentsError(self.name, problems)
        return out


def _validation_messages(name: str, exc: ValueError) -> list[str]:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            return [
                ".".join([name, *(str(part) for part in e.get("loc", ()))]) + ": " + e["msg"]
                for e in errors()
            ]
        except Exception:  # not pydantic's shape after all
            pass
    return [f"{name}: {safe_str(exc)}"]


_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}
_PLAIN_KEYS = frozenset({"type", "description", "title"})


def _flat_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, ...], bool] | None:
    """The common case — an object of properties that each only name a type — as
    (property -> Python types, required names, extra properties allowed), for a check
    without walking the schema. None when the schema needs the full validator."""
    if not set(schema) <= {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "description",
        "title",
    }:
        return None
    types: dict[str, Any] = {}
    for name, sub in (schema.get("properties") or {}).items():
        kind = sub.get("type") if isinstance(sub, dict) else None
        if not isinstance(kind, str) or kind not in _PY_TYPES or not set(sub) <= _PLAIN_KEYS:
            return None
        types[name] = _PY_TYPES[kind]
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool):
        return None
    return types, tuple(schema.get("required") or ()), extra


def _flat_ok(
    args: dict[str, Any], types: dict[str, Any], required: tuple[str, ...], extra: bool
) -> bool:
    """True if certainly valid; False sends the arguments to the full validator for messages."""
    for name in required:
        if name not in args:
            return False
    for name, value in args.items():
        expected = types.get(name)
        if expected is None:
            if not extra:
                return False
        elif not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            return False
    return True


def _inspect_handler(
    handler: Callable[..., Any],
) -> tuple[str | None, frozenset[str] | None, dict[str, Converter]]:
    """(the ToolContext parameter, the names it accepts or None for **kwargs, converters)."""
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return None, None, {}
    try:
        hints = typing.get_type_hints(handler, include_extras=True)
    except Exception:  # unresolvable annotations: fall back to the raw ones
        hints = {}
    context_param = None
    names: set[str] = set()
    converters: dict[str, Converter] = {}
    for param in signature.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            return _context_name(signature, hints), None, converters
        annotation = hints.get(param.name, param.annotation)
        if _is_context(annotation):
            context_param = param.name
        elif param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            names.add(param.name)
            convert = converter_for(annotation)
            if convert is not None:
                converters[param.name] = convert
    return context_param, frozenset(names), converters


def _context_name(signature: inspect.Signature, hints: dict[str, Any]) -> str | None:
    for param in signature.parameters.values():
        if _is_context(hints.get(param.name, param.annotation)):
            return param.name
    return None


def _is_context(annotation: Any) -> bool:
    """``ToolContext``, ``ToolContext | None`` (or the same as a string annotation)."""
    if annotation is ToolContext or annotation in ("ToolContext", "ToolContext | None"):
        return True
    return ToolContext in typing.get_args(annotation)


# -- the decorator -------------------------------------------------------------------------


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    require_confirmation: bool = False,
    timeout: float | None = None,
    run_in_thread: bool = True,
    max_concurrency: int | None = None,
    expose_errors: bool = False,
) -> Any:
    """Make a ToolSpec from a typed function: JSON Schema from its signature, descriptions
    from its docstring (summary, then a Google-style ``Args:`` section or ``:param x:``).

    Usable bare (``@tool``) or with options (``@tool(timeout=5)``). Parameters with defaults
    are optional; a parameter annotated ``ToolContext`` is injected, not shown to the LLM.
    """

    def build(func: Callable[..., Any]) -> ToolSpec:
        summary, arg_docs = parse_docstring(inspect.getdoc(func) or "")
        return ToolSpec(
            name=name or func.__name__,
            description=description or summary or func.__name__.replace("_", " "),
            parameters=parameters_schema(func, arg_docs),
            handler=func,
            require_confirmation=require_confirmation,
            timeout=timeout,
            run_in_thread=run_in_thread,
            max_concurrency=max_concurrency,
            expose_errors=expose_errors,
        )

    return build(fn) if fn is not None else build


def parameters_schema(
    func: Callable[..., Any], arg_docs: dict[str, str] | None = None
) -> dict[str, Any]:
    """The ``parameters`` JSON Schema of a function's signature."""
    arg_docs = arg_docs or {}
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except (NameError, TypeError) as exc:
        raise ConfigError(
            f"tool {func.__name__!r}: cannot resolve its annotations ({exc})"
        ) from None
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}  # models' schemas, referenced as #/$defs/<Model>
    for param in inspect.signature(func).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(
                f"tool {func.__name__!r}: *args / **kwargs cannot be described to the LLM"
            )
        annotation = hints.get(param.name, Any)
        if _is_context(annotation):
            continue
        try:
            schema = dict(schema_for(annotation, defs))
        except TypeError as exc:
            raise ConfigError(f"tool {func.__name__!r}, parameter {param.name!r}: {exc}") from None
        if param.name in arg_docs and "description" not in schema:
            schema["description"] = arg_docs[param.name]
        if param.default is param.empty:
            required.append(param.name)
        elif _jsonable(param.default):
            schema["default"] = (
                param.default.value if isinstance(param.default, enum.Enum) else param.default
            )
        properties[param.name] = schema
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    if defs:
        schema["$defs"] = defs
    return schema


def _jsonable(value: Any) -> bool:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


_SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Params|Returns?|Raises|Yields|Examples?|Notes?):\s*$"
)
_ARG_LINE = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_PARAM_LINE = re.compile(r"^:param\s+(?:\S+\s+)?(\w+):\s*(.*)$")


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """(summary, {argument: description}) from a Google-style or reST docstring."""
    summary: list[str] = []
    args: dict[str, str] = {}
    section: str | None = None
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        header = _SECTION.match(stripped)
        if header:
            section, current = header.group(1), None
            continue
        param = _PARAM_LINE.match(stripped)
        if param:
            section, current = "rest", param.group(1)
            args[current] = param.group(2)
            continue
        if section is None:
            if stripped.startswith(":"):
                section = "rest"
            else:
                summary.append(stripped)
            continue
        if section in ("Args", "Arguments", "Parameters", "Params"):
            match = _ARG_LINE.match(stripped)
            if match and not line.startswith(" " * 8):
                current = match.group(1).lstrip("*")
                args[current] = match.group(3)
            elif current and stripped:
                args[current] = f"{args[current]} {stripped}".strip()
        elif section == "rest" and current and stripped and not stripped.startswith(":"):
            args[current] = f"{args[current]} {stripped}".strip()
    text = " ".join(summary).strip()
    return re.sub(r"\s+", " ", text), args


# -- results ------------------------------------------------------------------------------


def _json_default(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)  # pydantic v2
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, enum.Enum):
        return value.value
    isoformat = getattr(value, "isoformat", None)  # datetime, date, time
    if callable(isoformat):
        return isoformat()
    return str(value)


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_json_default)


def to_content(value: Any) -> str:
    """A handler's return value as the text of the tool message. Strings pass through;
    anything else is JSON, with dataclasses, pydantic models, sets, bytes, dates and
    unknown objects converted instead of crashing the run (the sketch's ``json.dumps``)."""
    if isinstance(value, str):
        return value
    try:
        return _ENCODER.encode(value)
    except Exception:  # circular, exotic or a broken __str__: still say something
        return safe_str(value)
