"""``scenarios import`` of a log that uses every field ``record`` writes: each one reaches
the scenario, the scenario file loads back to it, and what a line holds that a scenario
does not is reported (issue 26: ``ttft_ms`` on a non-streamed line was dropped silently)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.cli import main
from bench.traffic import MASK
from scenarios import (
    Expect,
    Limits,
    Scenario,
    ScriptToolCall,
    ToolBehavior,
    ToolDef,
    Turn,
    TurnTiming,
    load_scenario,
)
from scenarios.schema import Message

FIND = {
    "name": "find",
    "description": "Find a document.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
}
SIGN = {
    "name": "sign",
    "description": "Sign a document.",
    "parameters": {"type": "object", "properties": {"doc": {"type": "string"}}},
}
KEY = "sk-live-0123456789"
ASK = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Earlier question."},
    {"role": "assistant", "content": "Earlier answer."},
    {"role": "user", "content": [{"type": "text", "text": f"Find A and sign it. Key {KEY}."}]},
]


def call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


FIRST = {
    "role": "assistant",
    "content": "Looking.",
    "tool_calls": [call("c1", "find", '{"q":"A"}')],
}
RETRY = {"role": "assistant", "content": None, "tool_calls": [call("c2", "find", '{"q":"A"}')]}
SIGNING = {
    "role": "assistant",
    "content": None,
    "tool_calls": [call("c3", "sign", '{"doc": "A-1"}')],
}
FINAL = {"role": "assistant", "content": "A is A-1; I may not sign it.\nAsk a supervisor."}


def line(messages: list[Any], answer: dict[str, Any], at: float, **timing: Any) -> dict[str, Any]:
    return {
        "started_at": at,
        "status": 200,
        "request": {
            "model": "gpt-x",
            "messages": messages,
            "tools": [
                {"type": "function", "function": FIND},
                {"type": "function", "function": SIGN},
            ],
            "stream": True,
            "temperature": 0.2,
        },
        "response": {
            "object": "chat.completion",
            "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 80 + int(at), "completion_tokens": 9},
        },
        "timing": {"stream": True, **timing},
        "headers": {"Authorization": f"Bearer {KEY}"},
    }


def tool(name: str, args: dict[str, Any], at: float, **run: Any) -> dict[str, Any]:
    return {"tool": {"name": name, "args": args, "started_at": at, **run}}


LOG = [
    line(ASK, FIRST, 100.0, ttft_ms=300.5, total_ms=420.25, gaps_ms=[20.0, 30.5]),
    tool(
        "find",
        {"q": "A"},
        100.5,
        outcome="raised",
        error="RuntimeError: index offline",
        duration_ms=250.0,
    ),
    line(
        [*ASK, FIRST, {"role": "tool", "tool_call_id": "c1", "content": "Error: find failed"}],
        RETRY,
        101.0,
        ttft_ms=280.0,
        total_ms=300.0,
    ),
    tool(
        "find", {"q": "A"}, 101.4, outcome="returned", duration_ms=270.0, require_confirmation=False
    ),
    line(
        [
            *ASK,
            FIRST,
            {"role": "tool", "tool_call_id": "c1", "content": "Error: find failed"},
            RETRY,
            {"role": "tool", "tool_call_id": "c2", "content": '{"doc": "A-1"}'},
        ],
        SIGNING,
        102.0,
        total_ms=150.0,
    ),
    tool("sign", {"doc": "A-1"}, 102.2, outcome="denied", require_confirmation=True),
    line(
        [
            *ASK,
            FIRST,
            {"role": "tool", "tool_call_id": "c1", "content": "Error: find failed"},
            RETRY,
            {"role": "tool", "tool_call_id": "c2", "content": '{"doc": "A-1"}'},
            SIGNING,
            {"role": "tool", "tool_call_id": "c3", "content": "The user refused."},
        ],
        FINAL,
        103.0,
        ttft_ms=200.0,
        total_ms=260.0,
        gaps_ms=[10.0],
    ),
]


def expected(name: str) -> Scenario:
    return Scenario(
        name=name,
        description="Recorded traffic of gpt-x: 4 LLM calls, 3 tool calls. "
        "Play its measured timings with --latency recorded.",
        tags=["recorded", "fault"],
        system_prompt="Be brief.",
        history=[
            Message(role="user", content="Earlier question."),
            Message(role="assistant", content="Earlier answer."),
        ],
        user=f"Find A and sign it. Key {MASK}.",
        tools=[
            ToolDef(
                **FIND,
                behavior=ToolBehavior(
                    returns={"doc": "A-1"},
                    latency_ms=260.0,  # the median of 250 and 270
                    fail_times=1,
                    fail_message="RuntimeError: index offline",
                ),
            ),
            ToolDef(**SIGN, require_confirmation=True, approval="deny"),
        ],
        script=[
            Turn(
                content="Looking.",
                tool_calls=[
                    ScriptToolCall(
                        name="find", args={"q": "A"}, recorded_arguments='{"q":"A"}', id="c1"
                    )
                ],
                timing=TurnTiming(
                    stream=True,
                    ttft_ms=300.5,
                    total_ms=420.25,
                    gaps_ms=[20.0, 30.5],
                    prompt_tokens=180,
                    completion_tokens=9,
                ),
            ),
            Turn(
                tool_calls=[
                    ScriptToolCall(
                        name="find", args={"q": "A"}, recorded_arguments='{"q":"A"}', id="c2"
                    )
                ],
                retry=True,
                timing=TurnTiming(
                    stream=True,
                    ttft_ms=280.0,
                    total_ms=300.0,
                    prompt_tokens=181,
                    completion_tokens=9,
                ),
            ),
            Turn(
                tool_calls=[ScriptToolCall(name="sign", args={"doc": "A-1"}, id="c3")],
                timing=TurnTiming(
                    stream=True, total_ms=150.0, prompt_tokens=182, completion_tokens=9
                ),
            ),
            Turn(
                content=FINAL["content"],
                timing=TurnTiming(
                    stream=True,
                    ttft_ms=200.0,
                    total_ms=260.0,
                    gaps_ms=[10.0],
                    prompt_tokens=183,
                    completion_tokens=9,
                ),
            ),
        ],
        limits=Limits(),
        expect=Expect(
            status="completed",
            forbidden_tools=["sign"],
            llm_calls=4,
            tool_calls=2,
            tools=["find", "find"],
            final_contains="A is A-1; I may not sign it.",
        ),
    )


def write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(item) + "\n" for item in lines), encoding="utf-8")
    return path


def test_a_log_with_every_field_imports_to_the_scenario_holding_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = write(tmp_path / "full.jsonl", LOG)
    out = tmp_path / "out"
    assert main(["scenarios", "import", str(log), "--scenario-dir", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        f"wrote {out}/full.yaml (4 LLM calls, 3 tool calls)",
        f"{log}:1,3,5,7: request.temperature not replayed (each engine sends its own)",
        f"next: schedbench scenarios validate --scenario-dir {out}",
    ]
    assert load_scenario(out / "full.yaml") == expected("full")
    assert KEY not in (out / "full.yaml").read_text(encoding="utf-8")
    # written again from the file it wrote: the same bytes
    again = tmp_path / "again"
    assert main(["scenarios", "import", str(log), "--scenario-dir", str(again)]) == 0
    assert (again / "full.yaml").read_bytes() == (out / "full.yaml").read_bytes()


def test_what_a_line_holds_and_a_scenario_does_not_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    picture = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    user = {"role": "user", "content": [*ASK[-1]["content"], picture]}
    request = {"model": "m", "messages": [user], "tools": [{"type": "function", "function": FIND}]}
    answer = {"role": "assistant", "content": "No.", "reasoning_content": "Because."}
    log = write(
        tmp_path / "gateway.jsonl",
        [
            {
                "request": request,
                "input": request,
                "response": {"choices": [{"message": answer}, {"message": answer}]},
                "latency_ms": 120,
                "duration_ms": 130,
                "ttft_ms": 40,  # a call that was not streamed: no first token
                "metadata": {"team": "a"},
                "cost_usd": 0.01,
            }
        ],
    )
    assert main(["scenarios", "import", str(log), "--scenario-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[1:-1] == [
        f"{log}:1: cost_usd not read",
        f"{log}:1: metadata not read",
        f"{log}:1: input not read: request is",
        f"{log}:1: duration_ms not read: latency_ms is",
        f"{log}:1: ttft_ms left out: the call was not streamed (a first token is a stream's; "
        "the answer arrives whole)",
        f"{log}:1: response.choices[1:] left out: only the first choice is an agent's answer",
        f"{log}:1: response.choices[0].message.reasoning_content not replayed",
        "exchange 1: messages[0].content: 1 image_url part left out: a scenario holds text only",
    ]
    assert load_scenario(tmp_path / "gateway.yaml").script[0].timing == TurnTiming(
        stream=False, total_ms=120.0
    )
