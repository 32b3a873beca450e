"""The exchange → scenario builder, on hand-made recordings (no server)."""

from __future__ import annotations

import json
from typing import Any

from bench.traffic import Exchange, build_scenarios, scenario_yaml
from bench.traffic.write import name_from
from scenarios import (
    Expect,
    Limits,
    RecordedResult,
    Scenario,
    ScriptToolCall,
    ToolBehavior,
    ToolDef,
    Turn,
    TurnTiming,
    parse_scenario,
)
from scenarios.schema import Message

FIND = {
    "type": "function",
    "function": {
        "name": "find",
        "description": "Find a document.",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
        },
    },
}
SYSTEM = {"role": "system", "content": "Be brief."}


def call(arguments: str, call_id: str, name: str = "find") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def assistant(content: str | None = None, *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def tool(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def exchange(
    messages: list[dict[str, Any]],
    answer: dict[str, Any],
    at: float,
    *,
    status: int = 200,
    tools: list[dict[str, Any]] | None = None,
    timing: TurnTiming | None = None,
) -> Exchange:
    response = {
        "choices": [{"index": 0, "message": answer, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 50, "completion_tokens": 7},
    }
    return Exchange(
        request={
            "model": "gpt-x",
            "messages": messages,
            "tools": [FIND] if tools is None else tools,
        },
        response=response if status == 200 else {"error": {"message": "slow down"}},
        status=status,
        timing=timing or TurnTiming(stream=False, total_ms=120.0),
        started_at=at,
    )


def test_two_interleaved_runs_become_two_scenarios_and_the_rest_is_noted() -> None:
    ask_a = [SYSTEM, {"role": "user", "content": "Find A."}]
    ask_b = [SYSTEM, {"role": "user", "content": "Find B."}]
    calls_a = assistant(None, call('{"q":"A"}', "a1"))
    calls_b = assistant("Looking.", call('{"q": "B"}', "b1"))
    exchanges = [
        exchange(ask_a, calls_a, 1.0),
        exchange(ask_b, calls_b, 1.1, status=429),  # rate-limited, then retried:
        exchange(
            ask_b,
            calls_b,
            1.2,
            timing=TurnTiming(stream=True, ttft_ms=80.0, total_ms=95.5, gaps_ms=[5.0, 4.0]),
        ),
        exchange([*ask_b, calls_b, tool("b1", "B is in drawer 2")], assistant("Drawer 2."), 1.5),
        exchange([*ask_a, calls_a, tool("a1", "A: shelf 1")], assistant("Shelf 1.\nDone."), 1.4),
        exchange([{"role": "user", "content": "hi"}], assistant("hello"), 1.6, tools=[]),
        Exchange(
            request={"model": "gpt-x", "messages": ask_a, "tools": [FIND]},
            response=None,
            status=200,
            error="the stream ended before its finish_reason",
            started_at=1.7,
        ),
        exchange(
            [*ask_a, calls_a, tool("zz", "?"), assistant("x", call("{}", "c9")), tool("c9", "?")],
            assistant("orphan"),
            1.8,
        ),
    ]
    built = build_scenarios(exchanges, "docs")
    assert built.errors == []
    assert built.notes == [
        "exchange 2: left out: HTTP 429",
        "exchange 6: left out: a request without tools (only tool-calling traffic is recorded)",
        "exchange 7: left out: the stream ended before its finish_reason",
        "exchange 8: left out: its turn 2 continues no recorded conversation (a retry, or a run "
        "whose start was not recorded)",
    ]
    tools = [ToolDef.model_validate({**FIND["function"], "behavior": {"returns": "A: shelf 1"}})]
    expected_a = Scenario(
        name="docs",
        description="Recorded traffic of gpt-x: 2 LLM calls, 1 tool calls. "
        "Play its measured timings with --latency recorded.",
        tags=["recorded"],
        system_prompt="Be brief.",
        user="Find A.",
        tools=tools,
        script=[
            Turn(
                tool_calls=[
                    ScriptToolCall(
                        name="find", args={"q": "A"}, recorded_arguments='{"q":"A"}', id="a1"
                    )
                ],
                timing=TurnTiming(
                    stream=False, total_ms=120.0, prompt_tokens=50, completion_tokens=7
                ),
            ),
            Turn(
                content="Shelf 1.\nDone.",
                timing=TurnTiming(
                    stream=False, total_ms=120.0, prompt_tokens=50, completion_tokens=7
                ),
            ),
        ],
        expect=Expect(llm_calls=2, tool_calls=1, tools=["find"], final_contains="Shelf 1."),
    )
    assert [s.model_dump() for s in built.scenarios] == [
        expected_a.model_dump(),
        expected_a.model_copy(
            update={
                "name": "docs_2",
                "user": "Find B.",
                "tools": [
                    tools[0].model_copy(
                        update={"behavior": ToolBehavior(returns="B is in drawer 2")}
                    )
                ],
                "script": [
                    Turn(
                        content="Looking.",
                        tool_calls=[ScriptToolCall(name="find", args={"q": "B"}, id="b1")],
                        timing=TurnTiming(
                            stream=True,
                            ttft_ms=80.0,
                            total_ms=95.5,
                            gaps_ms=[5.0, 4.0],
                            prompt_tokens=50,
                            completion_tokens=7,
                        ),
                    ),
                    expected_a.script[1].model_copy(update={"content": "Drawer 2."}),
                ],
                "expect": Expect(
                    llm_calls=2, tool_calls=1, tools=["find"], final_contains="Drawer 2."
                ),
            }
        ).model_dump(),
    ]


def test_bad_calls_are_kept_as_sent_and_judged_by_status_only() -> None:
    ask = [{"role": "user", "content": "Go."}]
    turn0 = assistant(
        None,
        call('{"q": "ok"}', "c1"),
        call('{"q": 5}', "c2"),
        call('{"q": "tr', "c3"),
        call('{"x": 1}', "c4", name="summon"),
    )
    turn1 = assistant(None, call('{"q": "ok"}', "c5"))
    turn2 = assistant(None, call('{"q": "ok"}', "c6"))
    after0 = [
        *ask,
        turn0,
        tool("c1", "r1"),
        tool("c2", "bad type"),
        tool("c3", "bad json"),
        tool("c4", "no such tool"),
    ]
    exchanges = [
        exchange(ask, turn0, 1.0),
        exchange(after0, turn1, 2.0),
        exchange([*after0, turn1, tool("c5", "r2")], turn2, 3.0),
        exchange(
            [*after0, turn1, tool("c5", "r2"), turn2, tool("c6", "r3")], assistant("Done."), 4.0
        ),
    ]
    [scenario] = build_scenarios(exchanges, "bad").scenarios
    assert scenario.script[0].tool_calls == [
        ScriptToolCall(name="find", args={"q": "ok"}, id="c1"),
        ScriptToolCall(name="find", raw_arguments='{"q": 5}', id="c2"),  # breaks the schema
        ScriptToolCall(name="find", raw_arguments='{"q": "tr', id="c3"),  # not JSON
        ScriptToolCall(name="summon", args={"x": 1}, unknown=True, id="c4"),
    ]
    # the same arguments gave three results: by arguments, in order
    assert scenario.tools[0].behavior == ToolBehavior(
        results=[RecordedResult(args={"q": "ok"}, returns=r) for r in ("r1", "r2", "r3")]
    )
    assert scenario.expect == Expect(status="completed")
    assert scenario.limits == Limits(max_same_tool_calls=3)


def test_a_run_cut_on_tool_calls_expects_an_abort_and_limits_follow_the_recording() -> None:
    ask = [
        SYSTEM,
        {"role": "user", "content": "x" * 20_000},
    ]
    history = [{"role": "user", "content": "earlier"}, {"role": "assistant", "content": "noted"}]
    slow = TurnTiming(stream=False, total_ms=30_000.0)
    [scenario] = build_scenarios(
        [
            exchange(
                [SYSTEM, *history, *ask[1:]],
                assistant(None, call('{"q": "z"}', "c1")),
                1.0,
                timing=slow,
            )
        ],
        "cut",
    ).scenarios
    assert scenario.history == [
        Message(role="user", content="earlier"),
        Message(role="assistant", content="noted"),
    ]
    assert scenario.expect == Expect(status="aborted")
    assert scenario.tools[0].behavior == ToolBehavior()  # its result was never seen
    assert scenario.limits == Limits(llm_timeout_s=90, token_budget=21_000, run_timeout_s=120)


def test_what_a_scenario_cannot_hold_is_an_error_line_and_other_runs_still_build() -> None:
    good = [{"role": "user", "content": "ok?"}]
    with_tool_history = [tool("old", "stale"), {"role": "user", "content": "again?"}]
    built = build_scenarios(
        [
            exchange(with_tool_history, assistant("sure"), 1.0),
            exchange(good, assistant("yes"), 2.0),
        ],
        "mixed",
    )
    assert built.errors == [
        "mixed: exchange 1: messages[0]: a tool message before the user's input; a scenario's "
        "history holds only user and assistant text"
    ]
    assert [s.name for s in built.scenarios] == ["mixed_2"]


def test_the_yaml_loads_back_to_the_same_scenario_bytes_included() -> None:
    content = 'Line one: "quoted", tab\there.\n  indented line\nünïcödé — and a trailing space '
    turn0 = assistant(None, call('{"q":"1.0","n":1.0,"k":1}', "c1"))
    exchanges = [
        exchange(
            [{"role": "user", "content": "- starts like a list\nsecond line"}],
            turn0,
            1.0,
            timing=TurnTiming(stream=True, ttft_ms=10.5, total_ms=40.25, gaps_ms=[1.0, 2.5, 0.125]),
        ),
        exchange(
            [
                {"role": "user", "content": "- starts like a list\nsecond line"},
                turn0,
                tool("c1", "ok"),
            ],
            assistant(content),
            2.0,
        ),
    ]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "find",
                "parameters": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}, "n": {}, "k": {}},
                },
            },
        }
    ]
    for e in exchanges:
        e.request["tools"] = tools
    [scenario] = build_scenarios(exchanges, "roundtrip").scenarios
    text = scenario_yaml(scenario)
    again = parse_scenario(text)
    assert json.dumps(again.model_dump()) == json.dumps(scenario.model_dump())
    assert again.script[0].tool_calls[0].recorded_arguments == '{"q":"1.0","n":1.0,"k":1}'
    assert again.tools[0].description == "find"  # sent without one: the format needs one
    assert "gaps_ms: [1.0, 2.5, 0.125]" in text


def test_names_from_folders() -> None:
    assert [name_from(t) for t in ("My Agent-v2", "__", "orders.log")] == [
        "my_agent_v2",
        "recorded",
        "orders_log",
    ]


def test_json_results_read_as_values_only_where_they_reserialise_to_the_same_bytes() -> None:
    ask = [{"role": "user", "content": "Go."}]
    turn0 = assistant(None, call('{"q": "a"}', "c1"))
    for text, returns in [
        ('{"ok": true, "n": 1.0, "name": "Zoë"}', {"ok": True, "n": 1.0, "name": "Zoë"}),
        ('{"ok":true}', '{"ok":true}'),  # compact: json.dumps would add a space
        ("42", "42"),
    ]:
        exchanges = [
            exchange(ask, turn0, 1.0),
            exchange([*ask, turn0, tool("c1", text)], assistant("Done."), 2.0),
        ]
        [scenario] = build_scenarios(exchanges, "values").scenarios
        assert scenario.tools[0].behavior == ToolBehavior(returns=returns)
        assert parse_scenario(scenario_yaml(scenario)).tools[0].behavior.returns == returns


def test_a_client_resending_earlier_messages_in_another_shape_still_continues() -> None:
    first = [{"role": "user", "content": "Find A."}]
    resent = [{"role": "user", "content": [{"type": "text", "text": "Find A."}], "name": None}]
    turn0 = assistant(None, call('{"q": "A"}', "a1"))
    built = build_scenarios(
        [
            exchange(first, turn0, 1.0),
            exchange(
                [*resent, {**turn0, "refusal": None}, tool("a1", "shelf")], assistant("Shelf."), 2.0
            ),
        ],
        "shapes",
    )
    assert (built.notes, [len(s.script) for s in built.scenarios]) == ([], [2])
