"""A scenario without tools: tool-calling engines get a plain answer, ReAct its own text."""

from __future__ import annotations

import pytest

from bench.engines import MAIN_ENGINES, RunContext, create_engine
from bench.referee import MockLLM
from bench.referee.protocols import detect_protocol
from bench.referee.transport import BASE_URL
from scenarios import parse_scenario

CHAT_ONLY = parse_scenario(
    """\
name: chat_only
description: No tools at all; the model just answers.
user: Say hello.
script:
  - content: Hello there, friend.
"""
)


def test_the_protocol_is_told_by_the_prompt_not_by_missing_tools():
    plain = {"messages": [{"role": "user", "content": "Say hello."}]}
    react = {
        "messages": [
            {
                "role": "user",
                "content": "Use the following format:\nQuestion: the input question\n"
                "Thought: ...\nAction: the action\nAction Input: the input\n\n"
                "Question: Say hello.\nThought:",
            }
        ]
    }
    assert detect_protocol(plain) == "tools"
    assert detect_protocol({**plain, "tools": []}) == "tools"
    assert detect_protocol(react) == "react"
    assert detect_protocol({**react, "tools": [{"type": "function"}]}) == "tools"


@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
async def test_every_engine_answers_a_scenario_without_tools_with_the_plain_text(engine_name):
    mock = MockLLM(scenarios={"chat_only": CHAT_ONLY})
    engine = create_engine(engine_name)
    try:
        prepared = await engine.prepare(
            RunContext(scenario=CHAT_ONLY, mock=mock, base_url=BASE_URL)
        )
        record = await engine.run(prepared)
    finally:
        await engine.aclose()
    expected_protocol = "react" if engine_name == "lc-react" else "tools"
    assert (record.status, record.final_answer, record.llm_calls) == (
        "completed",
        "Hello there, friend.",
        1,
    )
    assert [r.protocol for r in mock.requests] == [expected_protocol]
    reply = mock.requests[0]
    assert reply.status == 200
