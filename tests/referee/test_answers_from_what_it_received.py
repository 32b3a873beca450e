"""The mock answers only from what it received (issue 22): a scripted answer that ``needs`` a
text — a tool result — is given only if the request carried it; else the scenario's "did not
see it" answer. Stateless: derived from the request body alone, in every protocol."""

from __future__ import annotations

import json

import pytest

from bench.referee import MockLLM
from scenarios import Scenario, ScenarioError, load_scenarios, parse_scenario
from tests.referee.conftest import tools_of

HUGE = "huge_tool_result"
CLEARED = "[cleared]"  # what LangChain's ClearToolUsesEdit leaves of a tool result


@pytest.fixture(scope="module")
def scenario() -> Scenario:
    return load_scenarios()[HUGE]


@pytest.fixture
def mock(scenario) -> MockLLM:
    return MockLLM(scenarios={HUGE: scenario})


def tools_body(scenario: Scenario, result: str, **extra) -> bytes:
    call = scenario.script[0].tool_calls[0]
    messages = [
        {"role": "system", "content": scenario.system_prompt},
        {"role": "user", "content": scenario.user},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.args)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": result},
    ]
    body = {"model": f"scenario/{HUGE}", "messages": messages, "tools": tools_of(scenario)}
    return json.dumps({**body, **extra}).encode()


def answer(reply) -> str:
    assert reply.status == 200, reply.body
    return json.loads(reply.body)["choices"][0]["message"]["content"]


def test_a_cleared_tool_result_gets_the_did_not_see_it_answer(scenario, mock):
    real, unseen = scenario.script[1].content, scenario.script[1].needs.otherwise
    full = scenario.tools[0].fixed_result
    assert "OutOfMemoryError" in full and "OutOfMemoryError" not in unseen
    # the same turn of the same conversation, in either order: no cache mixes them up
    assert answer(mock.handle(tools_body(scenario, full))) == real
    assert answer(mock.handle(tools_body(scenario, CLEARED))) == unseen
    assert answer(mock.handle(tools_body(scenario, full))) == real
    [_, cleared, _] = mock.requests
    assert cleared.turn == 1 and cleared.completion_tokens < mock.requests[0].completion_tokens


def test_a_result_cut_before_the_needed_line_is_not_seen_either(scenario, mock):
    cut = scenario.tools[0].fixed_result[:40]  # '{"service": "checkout", "lines": "03:11:'
    assert answer(mock.handle(tools_body(scenario, cut))) == scenario.script[1].needs.otherwise


def test_a_streamed_answer_says_the_same(scenario, mock):
    reply = mock.handle(tools_body(scenario, CLEARED, stream=True))
    text = ""
    for chunk in reply.chunks:
        data = chunk.decode().removeprefix("data: ").strip()
        if data and data != "[DONE]":
            for choice in json.loads(data)["choices"]:
                text += choice["delta"].get("content") or ""
    assert text == scenario.script[1].needs.otherwise


def test_react_and_anthropic_requests_are_judged_by_what_they_carry(scenario, mock):
    react = {
        "model": f"scenario/{HUGE}",
        "messages": [
            {
                "role": "user",
                "content": "Answer with Question: / Thought: / Action: / Action Input: lines.\n"
                f"Question: {scenario.user}\nThought: look\nAction: export_logs\n"
                f"Action Input: {{}}\nObservation: {CLEARED}\nThought:",
            }
        ],
    }
    text = answer(mock.handle(json.dumps(react).encode()))
    assert (
        text
        == f"Thought: I now know the final answer.\nFinal Answer: {scenario.script[1].needs.otherwise}"
    )
    anthropic = {
        "model": f"scenario/{HUGE}",
        "max_tokens": 512,
        "messages": [
            {"role": "user", "content": scenario.user},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "export_logs", "input": {}}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": CLEARED}],
            },
        ],
        "tools": [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in scenario.tools
        ],
    }
    reply = mock.handle_messages(json.dumps(anthropic).encode())
    assert reply.status == 200, reply.body
    blocks = json.loads(reply.body)["content"]
    assert blocks == [{"type": "text", "text": scenario.script[1].needs.otherwise}]


SCENARIO = """\
name: needs
description: A turn that needs a tool result.
system_prompt: You are an assistant.
user: What does the lookup say?
tools:
  - name: lookup
    description: Look it up.
    behavior: {returns: {answer: forty-two}}
script:
  - tool_calls: [{name: lookup}]
  - content: It says forty-two.
    needs: {seen: [NEEDED], otherwise: I did not get an answer.}
"""


@pytest.mark.parametrize(
    ("needed", "problem"),
    [
        (
            "What does",
            "script[1].needs.seen[0]: 'What does' is in the user's message, which every request "
            "carries; name a text only a tool result (or the history) holds",
        ),
        (
            "forty-three",
            "script[1].needs.seen[0]: 'forty-three' is in no tool's result and not in the "
            "history, so no model could ever see it",
        ),
    ],
)
def test_a_needed_text_must_be_one_a_model_may_or_may_not_receive(needed, problem):
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(SCENARIO.replace("NEEDED", needed))
    assert caught.value.lines == [f"<string>: {problem}"]
    assert parse_scenario(SCENARIO.replace("NEEDED", "forty-two")).script[1].needs.seen == [
        "forty-two"
    ]
