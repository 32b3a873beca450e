"""The checks that span fields of a scenario (a call names a tool defined elsewhere, ...).

They read the file's data as parsed (``cross_problems``), not the validated model, so that
they run in the same pass as the field checks: a file with an unknown field, a wrong type
and an undefined tool reports all three at once. Each check looks only at values of the
right shape and leaves the rest to the field checks, which report them. ``Scenario``'s own
validator runs the same function, so a scenario built in code is held to the same rules.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from jsonschema.exceptions import ValidationError as ArgsError
from pydantic import TypeAdapter, ValidationError

from scenarios.argschema import (
    REGEX_BUDGET_S,
    ArgsValidator,
    closed_schema,
    regex_budget,
    schema_problem,
)
from scenarios.tool_results import json_text


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to ``word`` if one is close (a typo), else None."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


_BOOL = TypeAdapter(bool)


def _true(value: Any) -> bool:
    """True as the field check reads it (``true``, ``1``, ``yes``...); a wrong value: False."""
    try:
        return bool(_BOOL.validate_python(value))
    except ValidationError:
        return False


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _tool_schemas(tools: list[Any]) -> dict[str, dict[str, Any] | None]:
    """Tool name → the closed schema scripted arguments are checked against (None: the
    tool's schema is broken, which its field check reports)."""
    out: dict[str, dict[str, Any] | None] = {}
    for tool in tools:
        name = _map(tool).get("name")
        if not isinstance(name, str) or name in out:
            continue
        params = _map(tool).get("parameters", {"type": "object", "properties": {}})
        ok = isinstance(params, dict) and schema_problem(params) is None
        out[name] = closed_schema(params) if ok else None
    return out


def _args_problems(where: str, args: Mapping[str, Any], schema: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for error in ArgsValidator(schema).iter_errors(args):
        path = "".join(f".{p}" for p in error.absolute_path)
        problems.extend(f"{where}.args{path}: {message}" for message in _arg_messages(error))
    return list(dict.fromkeys(problems))


def _arg_messages(error: ArgsError) -> list[str]:
    """jsonschema's message, or for an argument outside the schema one that says why."""
    if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
        return [error.message]
    known = _map(error.schema.get("properties"))
    out = []
    for key, value in error.instance.items():
        if key in known or not isinstance(key, str):
            continue
        if value is None:
            out.append(
                f"key '{key}' has no value; in YAML a comma splits a {{...}} mapping, "
                "so quote text that contains one"
            )
            continue
        guess = did_you_mean(key, known)
        hint = f"did you mean '{guess}'?" if guess else f"the tool takes {_names(known)}"
        out.append(f"argument '{key}' is not in the tool's schema; {hint}")
    return out or [error.message]


def _names(names: Collection[str]) -> str:
    return ", ".join(names) if names else "no arguments"


def _tool_name_problem(where: str, name: str, defined: Collection[str]) -> str:
    guess = did_you_mean(name, defined)
    return f"{where}: tool '{name}' is not defined" + (
        f"; did you mean '{guess}'?" if guess else ""
    )


def cross_problems(data: Mapping[str, Any], *, engines: Collection[str] | None = None) -> list[str]:
    """Every problem across fields of a scenario's data, one ``field.path: reason`` each.

    ``engines``: the engine names an ``expect.engines`` override may name (None: any).
    """
    token = regex_budget.set(REGEX_BUDGET_S)  # this file's budget for its schemas' patterns
    try:
        return _cross_problems(data, engines)
    finally:
        regex_budget.reset(token)


def _cross_problems(data: Mapping[str, Any], engines: Collection[str] | None) -> list[str]:
    problems: list[str] = []
    tools = _list(data.get("tools"))
    names = [n for t in tools if isinstance(n := _map(t).get("name"), str)]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"tools: duplicate tool names {duplicates}")
    for i, tool in enumerate(tools):
        tool = _map(tool)
        if tool.get("approval") == "deny" and not _true(tool.get("require_confirmation")):
            problems.append(
                f"tools[{i}].approval: 'deny' has no effect without require_confirmation: true"
            )
    schemas = _tool_schemas(tools)
    script = _list(data.get("script"))
    for t, turn in enumerate(script):
        turn = _map(turn)
        if _true(turn.get("repeat")) and t != len(script) - 1:
            problems.append(f"script[{t}].repeat: only the last turn may repeat")
        for c, call in enumerate(_list(turn.get("tool_calls"))):
            problems.extend(_call_problems(f"script[{t}].tool_calls[{c}]", _map(call), schemas))
        previous = _map(script[t - 1]) if t > 0 else {}
        if _true(turn.get("retry")) and (
            t == 0 or not _list(previous.get("tool_calls")) or not _list(turn.get("tool_calls"))
        ):
            problems.append(
                f"script[{t}].retry: a retry turn repeats tool calls after a turn with tool calls"
            )
    expect = _map(data.get("expect"))
    last = _map(script[-1]) if script else {}
    if (
        last
        and last.get("content") is None
        and not _true(last.get("repeat"))
        and expect.get("status", "completed") == "completed"
    ):
        problems.append(
            "script: ends with tool calls but expect.status is completed; "
            "end with a content turn or expect another status"
        )
    problems.extend(_expect_problems(expect, schemas, engines))
    problems.extend(_needs_problems(data, tools, script))
    return problems


def _needs_problems(data: Mapping[str, Any], tools: list[Any], script: list[Any]) -> list[str]:
    """A text a turn ``needs`` must be one the model may or may not receive: in a tool's
    result or the history, never in the system prompt or the user's message (always sent)."""
    always = {
        "the system prompt": data.get("system_prompt"),
        "the user's message": data.get("user"),
    }
    sources: list[str] = [str(_map(m).get("content")) for m in _list(data.get("history"))]
    unknown_results = False  # a handler's results are only known when it runs
    for tool in map(_map, tools):
        behavior = _map(tool.get("behavior"))
        unknown_results |= tool.get("handler") is not None
        sources.append(json_text(behavior.get("returns")))
        sources += [str(_map(r).get("returns")) for r in _list(behavior.get("results"))]
        sources += [str(behavior.get(key)) for key in ("raises", "fail_message")]
    problems = []
    for t, turn in enumerate(script):
        for i, text in enumerate(_list(_map(_map(turn).get("needs")).get("seen"))):
            if not isinstance(text, str) or not text:
                continue
            where = f"script[{t}].needs.seen[{i}]"
            sent = [
                name for name, value in always.items() if isinstance(value, str) and text in value
            ]
            if sent:
                problems.append(
                    f"{where}: '{text}' is in {sent[0]}, which every request carries; name a "
                    "text only a tool result (or the history) holds"
                )
            elif not unknown_results and not any(text in source for source in sources):
                problems.append(
                    f"{where}: '{text}' is in no tool's result and not in the history, so no "
                    "model could ever see it"
                )
    return problems


def _call_problems(
    where: str, call: Mapping[str, Any], schemas: Mapping[str, dict[str, Any] | None]
) -> list[str]:
    name = call.get("name")
    if not isinstance(name, str):
        return []
    if _true(call.get("unknown")):
        if name in schemas:
            return [f"{where}.name: marked unknown but '{name}' is defined"]
        return []
    if name not in schemas:
        return [_tool_name_problem(f"{where}.name", name, schemas)]
    schema, args = schemas[name], call.get("args", {})
    if schema is None or call.get("raw_arguments") is not None or not isinstance(args, dict):
        return []
    return _args_problems(where, args, schema)


def _expect_problems(
    expect: Mapping[str, Any],
    schemas: Mapping[str, Any],
    engines: Collection[str] | None,
) -> list[str]:
    """Tool names in expectations that name no tool (a typo would never match), and
    overrides for engines that do not exist (they would never apply)."""
    problems = []
    overrides = _map(expect.get("engines"))
    places: list[tuple[str, Mapping[str, Any]]] = [("expect", expect)]
    places += [(f"expect.engines.{name}", _map(o)) for name, o in overrides.items()]
    for where, fields in places:
        for key in ("tools", "forbidden_tools"):
            for i, name in enumerate(_list(fields.get(key))):
                if isinstance(name, str) and name not in schemas:
                    problems.append(_tool_name_problem(f"{where}.{key}[{i}]", name, schemas))
    if engines is not None:
        problems.extend(engine_problems(overrides, engines))
    return problems


def engine_problems(overrides: Iterable[str], engines: Collection[str]) -> list[str]:
    """Per-engine overrides naming no engine (a typo would silently never apply)."""
    problems = []
    for name in overrides:
        if name not in engines:
            guess = did_you_mean(str(name), engines)
            hint = f"did you mean '{guess}'? " if guess else ""
            problems.append(
                f"expect.engines.{name}: unknown engine; {hint}valid engines: " + ", ".join(engines)
            )
    return problems
