"""The fairness check behind every token-overhead figure: on every happy-path scenario, each
tool-calling engine sends the LLM the same messages and tool schemas as ``raw``.

Normalisation, and why each step is legitimate:

- key order is ignored (dicts compare by content; JSON key order means nothing to the API);
- ``stream`` and ``stream_options`` are dropped: *how* the answer travels back, not what the
  model is asked (the streaming engines set them, the others do not);
- tool-call ids are renamed ``call_1, call_2, ...`` in order of appearance, in the assistant
  messages and in the tool messages that answer them: they are opaque handles (today the mock
  issues the same ids to everyone, but nothing requires it);
- tool-call ``arguments`` are compared parsed: LangChain re-serialises the arguments it
  parsed (``json.dumps`` with its own escaping), which is the same JSON object.

Anything else that differs — a message's text, an extra message, a field like
``temperature`` or ``parallel_tool_calls``, a schema detail — fails the test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import pytest_asyncio

from bench.engines.registry import engines_where, spec
from scenarios import load_scenarios
from tests.engines.conftest import run_once

pytestmark = pytest.mark.asyncio(loop_scope="session")

# every engine of the registry that asks for tools with tool calling (not text ReAct)
TOOL_CALLING_ENGINES = [
    name
    for name in engines_where(protocol="tools", environment="main")
    if name != "raw" and not spec(name).outcome_only
]
HAPPY_PATHS = sorted(
    name for name, scenario in load_scenarios().items() if "happy-path" in scenario.tags
)
TRANSPORT_ONLY = {"stream", "stream_options"}


def normalise(body: dict[str, Any]) -> dict[str, Any]:
    ids: dict[str, str] = {}

    def rename(call_id: str) -> str:
        return ids.setdefault(call_id, f"call_{len(ids) + 1}")

    messages = []
    for message in body["messages"]:
        message = dict(message)
        if "tool_calls" in message:
            message["tool_calls"] = [
                {
                    **call,
                    "id": rename(call["id"]),
                    "function": {
                        **call["function"],
                        "arguments": json.loads(call["function"]["arguments"]),
                    },
                }
                for call in message["tool_calls"]
            ]
        if "tool_call_id" in message:
            message["tool_call_id"] = rename(message["tool_call_id"])
        messages.append(message)
    return {
        **{k: v for k, v in body.items() if k not in TRANSPORT_ONLY},
        "messages": messages,
    }


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def raw_bodies(engines, scenarios, mock) -> list[dict[str, Any]]:
    record = await run_once(engines["raw"], scenarios["customer_returns"], mock)
    assert record.status == "completed"
    return record.requests


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def raw_runs(engines, scenarios, mock) -> dict[str, Any]:
    """raw's run of every happy-path scenario."""
    runs = {name: await run_once(engines["raw"], scenarios[name], mock) for name in HAPPY_PATHS}
    assert {run.status for run in runs.values()} == {"completed"}
    return runs


async def test_raw_sends_model_messages_and_tools_only(raw_bodies):
    assert [sorted(body) for body in raw_bodies] == [["messages", "model", "tools"]] * 3
    assert [len(body["messages"]) for body in raw_bodies] == [2, 4, 6]


@pytest.mark.parametrize("scenario_name", HAPPY_PATHS)
@pytest.mark.parametrize("engine_name", TOOL_CALLING_ENGINES)
async def test_engine_sends_what_raw_sends(
    engine_name, scenario_name, engines, scenarios, mock, raw_runs
):
    raw = raw_runs[scenario_name]
    record = await run_once(engines[engine_name], scenarios[scenario_name], mock)
    assert record.status == "completed", record.error
    assert [normalise(body) for body in record.requests] == [normalise(b) for b in raw.requests]
    # the same bodies are billed the same tokens
    assert (record.prompt_tokens, record.completion_tokens) == (
        raw.prompt_tokens,
        raw.completion_tokens,
    )


async def test_react_sends_text_only_and_pays_for_its_prompt(engines, scenarios, mock, raw_bodies):
    """ReAct is not a tool-calling engine: no ``tools``, the schemas travel as prompt text."""
    record = await run_once(engines["lc-react"], scenarios["customer_returns"], mock)
    assert record.status == "completed", record.error
    assert all("tools" not in body for body in record.requests)
    assert all(body["stop"] == ["\nObservation"] for body in record.requests)
    text = record.requests[0]["messages"][0]["content"]
    for tool in scenarios["customer_returns"].tools:
        assert json.dumps(tool.parameters) in text
    raw = await run_once(engines["raw"], scenarios["customer_returns"], mock)
    assert record.prompt_tokens > raw.prompt_tokens
