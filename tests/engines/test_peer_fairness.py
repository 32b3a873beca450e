"""The fairness check of ``test_fairness.py`` for the peer frameworks, on every happy-path
scenario and every timed peer engine (defaults, ``-nostream``, ``-prod``).

The conversation must be ``raw``'s: the same messages, normalised as ``normalise`` does (key
order, ``stream`` / ``stream_options``, tool-call ids, argument serialisation) and, for the
peers, two serialisations of the same message — a text given as a list of text parts
(Strands) and an empty ``content`` beside tool calls (``""`` or ``null``) — the results of
parallel tool calls in any order, and the same tools, in any order. What each framework
adds on the wire *by default* is not normalised away: it is declared here (``WIRE_EXTRAS``:
request fields, tool fields, the keys it adds to a schema, and ``REWRITES`` of the schemas'
insides; docs/engines.md "What the peers send") and the test fails when a framework sends
anything else, or stops sending it — so the token figures of the report are read knowing
it (LlamaIndex's ``temperature: 0.1``, PydanticAI's strict schemas, Strands' filled-in
property descriptions).

The peers run in their own environments, so each environment runs ``raw`` and its engines
in-process (``PROBE``) and prints the request bodies; they are compared here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bench.engines.registry import SPECS
from bench.envs import MAIN, ensure
from scenarios import load_scenarios
from tests.engines.test_fairness import normalise

ROOT = Path(__file__).resolve().parents[2]
HAPPY_PATHS = sorted(name for name, s in load_scenarios().items() if "happy-path" in s.tags)
# the timed engines of every peer framework, by environment
BY_ENVIRONMENT: dict[str, list[str]] = {}
for _spec in SPECS:
    if _spec.environment != MAIN and _spec.family != "langchain" and not _spec.outcome_only:
        BY_ENVIRONMENT.setdefault(_spec.environment, []).append(_spec.name)

PROBE = """
import asyncio, json, sys
from bench.engines import RunContext, create_engine
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from scenarios import load_scenarios

async def main(names, scenario_names):
    scenarios = load_scenarios()
    mock = MockLLM(scenarios=scenarios)
    out = {}
    for name in ["raw", *names]:
        engine = create_engine(name)
        out[name] = {}
        for scenario in scenario_names:
            mock.reset()
            ctx = RunContext(scenario=scenarios[scenario], mock=mock, base_url=BASE_URL)
            record = await engine.run(await engine.prepare(ctx))
            out[name][scenario] = {
                "status": record.status,
                "error": record.error,
                "requests": record.requests,
                "tokens": [record.prompt_tokens, record.completion_tokens],
            }
        await engine.aclose()
    print(json.dumps(out))

asyncio.run(main(sys.argv[1].split(","), sys.argv[2].split(",")))
"""


# what each framework adds to raw's request by default: top-level fields, and per tool the
# fields beside name / description / parameters and the keys it adds to the parameters
WIRE_EXTRAS: dict[str, dict[str, object]] = {
    "openai-agents": {"fields": {}, "tool": {"strict": False}, "parameters": {}},
    "pydantic-ai": {
        "fields": {"tool_choice": "auto"},
        "tool": {"strict": True},
        "parameters": {"additionalProperties": False},
    },
    "llamaindex": {
        "fields": {"tool_choice": "auto", "parallel_tool_calls": True, "temperature": 0.1},
        "tool": {"strict": False},
        "parameters": {"additionalProperties": False},
    },
    "agno": {"fields": {}, "tool": {}, "parameters": {}},
    "autogen": {"fields": {"tool_choice": "auto"}, "tool": {"strict": False}, "parameters": {}},
    "agent-framework": {"fields": {"tool_choice": "auto"}, "tool": {}, "parameters": {}},
    "strands": {"fields": {}, "tool": {}, "parameters": {}},
}


def _filled_descriptions(parameters: dict) -> dict:
    """Strands gives every property without a description ``"Property <name>"``, and a schema
    without ``required`` an empty one."""
    properties = {
        name: {
            k: v for k, v in spec.items() if not (k == "description" and v == f"Property {name}")
        }
        for name, spec in parameters.get("properties", {}).items()
    }
    unfilled = {**parameters, "properties": properties}
    if unfilled.get("required") == []:
        del unfilled["required"]
    return unfilled


def _strict_objects(parameters: dict) -> dict:
    """PydanticAI's strict mode closes every nested object: ``properties: {}`` and
    ``additionalProperties: false`` where the schema had neither (a free-form object)."""
    properties = {}
    for name, spec in parameters.get("properties", {}).items():
        if spec.get("type") == "object" and spec.get("properties") == {}:
            spec = {
                k: v for k, v in spec.items() if k not in ("properties", "additionalProperties")
            }
        properties[name] = spec
    return {**parameters, "properties": properties}


# how a framework rewrites the inside of a schema by default (undone before comparing, and
# required: a scenario whose schema it rewrites must show the rewrite)
REWRITES = {"strands": _filled_descriptions, "pydantic-ai": _strict_objects}


def text_of(content: object) -> object:
    """A list of text parts as the one text it is (Strands sends user text that way)."""
    if isinstance(content, list) and all(
        isinstance(p, dict) and p.get("type", "text") == "text" and "text" in p for p in content
    ):
        return "".join(p["text"] for p in content)
    return content


def conversation(body: dict, rewrite: object = None) -> dict:
    """The request as ``normalise`` sees it, its messages' serialisation and its tools'
    order evened out, a framework's schema ``rewrite`` undone, and what a framework adds
    split off (``extras``)."""
    body = normalise(body)
    messages: list[dict] = []
    for message in body["messages"]:
        message = {**message, "content": text_of(message.get("content"))}
        if message.get("tool_calls") and message["content"] in ("", None):
            message["content"] = None
        messages.append(message)
    # the results of parallel calls, in the order of the calls (ids are renamed in order)
    i = 0
    while i < len(messages):
        j = i
        while j < len(messages) and messages[j]["role"] == "tool":
            j += 1
        messages[i:j] = sorted(messages[i:j], key=lambda m: m["tool_call_id"])
        i = max(j, i + 1)
    tools, tool_extras, parameter_extras = [], {}, {}
    for tool in sorted(body.get("tools", []), key=lambda t: t["function"]["name"]):
        function = dict(tool["function"])
        parameters = dict(function.pop("parameters"))
        for key in ("name", "description"):
            function.setdefault(key, None)
        tool_extras.update({k: v for k, v in function.items() if k not in ("name", "description")})
        tools.append({"name": function["name"], "description": function["description"]})
        parameter_extras.update(
            {k: parameters.pop(k) for k in ["additionalProperties"] if k in parameters}
        )
        tools[-1]["parameters"] = rewrite(parameters) if callable(rewrite) else parameters
    fields = {k: v for k, v in body.items() if k not in ("messages", "tools", "model")}
    return {
        "model": body["model"],
        "messages": messages,
        "tools": tools,
        "extras": {"fields": fields, "tool": tool_extras, "parameters": parameter_extras},
    }


@pytest.mark.timeout(900)
@pytest.mark.parametrize("environment", sorted(BY_ENVIRONMENT))
def test_every_peer_engine_sends_what_raw_sends(environment):
    names = BY_ENVIRONMENT[environment]
    done = subprocess.run(
        [ensure(environment).python, "-c", PROBE, ",".join(names), ",".join(HAPPY_PATHS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=850,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    runs = json.loads(done.stdout.splitlines()[-1])
    raw = runs["raw"]
    assert {run["status"] for run in raw.values()} == {"completed"}
    differences = {}
    for name in names:
        for scenario in HAPPY_PATHS:
            run = runs[name][scenario]
            if run["status"] != "completed":
                differences[(name, scenario)] = run["error"]
                continue
            sent = [conversation(body, REWRITES.get(environment)) for body in run["requests"]]
            expected = [conversation(body) for body in raw[scenario]["requests"]]
            for request in sent:
                request["extras"] = undeclared(request["extras"], WIRE_EXTRAS[environment])
            for request in expected:
                request["extras"] = {"fields": {}, "tool": {}, "parameters": {}}
            if sent != expected:
                differences[(name, scenario)] = first_difference(sent, expected)
    assert differences == {}


def undeclared(extras: dict, declared: dict) -> dict:
    """What a request adds beyond its framework's declared extras: its request fields must be
    exactly the declared ones; a tool may carry the declared tool and schema keys (whether
    it does can depend on the schema: PydanticAI goes strict only where it can)."""
    return {
        "fields": {} if extras["fields"] == declared["fields"] else extras["fields"],
        "tool": {k: v for k, v in extras["tool"].items() if declared["tool"].get(k, ...) != v},
        "parameters": {
            k: v for k, v in extras["parameters"].items() if declared["parameters"].get(k, ...) != v
        },
    }


def first_difference(sent: list[dict], expected: list[dict]) -> object:
    """Where two request sequences first differ (for a readable failure)."""
    if len(sent) != len(expected):
        return ("requests", len(sent), len(expected))
    for i, (a, b) in enumerate(zip(sent, expected, strict=True)):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return (f"request {i}", key, a.get(key), b.get(key))
    return None
