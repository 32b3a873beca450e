"""The mock's Anthropic Messages API, checked against the official ``anthropic`` SDK: every
scripted answer parses, JSON and streamed, in-process (httpx and httpx2) and on loopback;
errors come in Anthropic's format; the turn is derived from the request alone."""

from __future__ import annotations

import json
import subprocess
import sys

import anthropic
import httpx
import pytest

from bench.referee import LatencyProfile, MockLLM
from bench.referee.anthropic_request import conversation, prompt_tokens, request_problem
from bench.referee.transport import ANTHROPIC_BASE_URL, mock_async_client, mock_client
from tests.referee.conftest import tools_of

MODEL = "scenario/customer_returns"


def anthropic_tools(scenario) -> list[dict]:
    return [
        {"name": t.name, "description": t.description, "input_schema": t.parameters}
        for t in scenario.tools
    ]


def async_sdk(mock: MockLLM) -> anthropic.AsyncAnthropic:
    client = mock_async_client(mock, "httpx2", base_url=ANTHROPIC_BASE_URL)
    return anthropic.AsyncAnthropic(
        api_key="x", base_url=ANTHROPIC_BASE_URL, http_client=client, max_retries=0
    )


def _results(message) -> list[dict]:
    return [
        {"type": "tool_result", "tool_use_id": b.id, "content": f"result of {b.name}"}
        for b in message.content
        if b.type == "tool_use"
    ]


async def _play(client, scenario, *, stream: bool, limit: int) -> list:
    """Play a scenario through the SDK as a tool-calling client does; every message."""
    messages = [{"role": m.role, "content": m.content} for m in scenario.history]
    messages.append({"role": "user", "content": scenario.user})
    kwargs = {
        "model": f"scenario/{scenario.name}",
        "max_tokens": 1024,
        "system": scenario.system_prompt,
    }
    if scenario.tools:
        kwargs["tools"] = anthropic_tools(scenario)
    seen = []
    for _ in range(limit):
        if stream:
            async with client.messages.stream(messages=messages, **kwargs) as events:
                async for _event in events:
                    pass
                message = await events.get_final_message()
        else:
            message = await client.messages.create(messages=messages, **kwargs)
        seen.append(message)
        if message.stop_reason != "tool_use":
            break
        messages.append({"role": "assistant", "content": [b.model_dump() for b in message.content]})
        messages.append({"role": "user", "content": _results(message)})
    return seen


def _answer(message) -> tuple:
    """A message without its id: what the two deliveries must agree on."""
    return (
        message.role,
        message.model,
        [b.model_dump(exclude_none=True) for b in message.content],
        message.stop_reason,
        message.usage.input_tokens,
        message.usage.output_tokens,
    )


def _scripted(scenario) -> list[tuple]:
    """What the script says, turn by turn: (text or None, [(tool, args)]). ``_play`` sends
    made-up tool results, so a turn that ``needs`` a real one says its "did not see it"."""
    return [
        (turn.needs.otherwise, [])
        if turn.needs is not None
        else (turn.content, [(c.name, c.args) for c in turn.tool_calls])
        for turn in scenario.script
    ]


def _said(message) -> tuple:
    text = "".join(b.text for b in message.content if b.type == "text") or None
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    return text, calls


PLAYABLE = [
    "customer_returns",
    "single_tool",
    "parallel_tool_calls",
    "sequential_chain",
    "multi_turn_memory",
    "long_conversation",
    "large_toolset",
    "huge_tool_result",
    "streaming_long_answer",
    "unknown_tool",
    "confirmation_required",
    "tool_timeout",
    "tool_flaky",
    "tool_circuit_breaker",
    "loop_detection",
    "max_steps",
]


@pytest.mark.parametrize("name", PLAYABLE)
async def test_the_sdk_parses_every_answer_json_and_streamed(name, builtin_scenarios) -> None:
    scenario = builtin_scenarios[name]
    client = async_sdk(MockLLM(scenarios=builtin_scenarios))
    plain = await _play(client, scenario, stream=False, limit=len(scenario.script))
    streamed = await _play(client, scenario, stream=True, limit=len(scenario.script))
    assert [_said(m) for m in plain] == _scripted(scenario)
    assert [_answer(m) for m in streamed] == [_answer(m) for m in plain]
    assert all(m.usage.input_tokens > 0 and m.usage.output_tokens > 0 for m in plain)


async def test_customer_returns_whole_answers(builtin_scenarios) -> None:
    client = async_sdk(MockLLM(scenarios=builtin_scenarios))
    scenario = builtin_scenarios["customer_returns"]
    first, second, last = await _play(client, scenario, stream=False, limit=3)
    assert first.model_dump(exclude={"id"}, exclude_none=True) == {
        "content": [
            {
                "id": "toolu_t0_0",
                "input": {"query": "return policy"},
                "name": "search_knowledge_base",
                "type": "tool_use",
            }
        ],
        "model": MODEL,
        "role": "assistant",
        "stop_reason": "tool_use",
        "type": "message",
        "usage": {
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "input_tokens": first.usage.input_tokens,
            "output_tokens": first.usage.output_tokens,
        },
    }
    assert second.content[0].id == "toolu_t1_0"
    assert last.stop_reason == "end_turn" and "within 30 days" in last.content[0].text
    assert first.id.startswith("msg_") and first._request_id.startswith("req_")


def test_the_sync_sdk_over_the_in_process_httpx2_transport(builtin_scenarios) -> None:
    client = anthropic.Anthropic(
        api_key="x",
        base_url=ANTHROPIC_BASE_URL,
        max_retries=0,
        http_client=mock_client(MockLLM(), "httpx2", base_url=ANTHROPIC_BASE_URL),
    )
    scenario = builtin_scenarios["customer_returns"]
    with client.messages.stream(
        model=MODEL,
        max_tokens=64,
        messages=[{"role": "user", "content": scenario.user}],
        tools=anthropic_tools(scenario),
    ) as events:
        kinds = [event.type for event in events]
        message = events.get_final_message()
    assert message.content[0].input == {"query": "return policy"}
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert {"content_block_start", "input_json", "content_block_stop", "message_delta"} <= set(
        kinds
    )


async def test_plain_httpx_gets_the_event_stream_as_anthropic_sends_it(builtin_scenarios) -> None:
    mock = MockLLM(scenarios=builtin_scenarios)
    body = {
        "model": "scenario/single_tool",
        "max_tokens": 64,
        "stream": True,
        "messages": [{"role": "user", "content": builtin_scenarios["single_tool"].user}],
        "tools": anthropic_tools(builtin_scenarios["single_tool"]),
    }
    async with mock_async_client(mock, "httpx", base_url=ANTHROPIC_BASE_URL) as http:
        response = await http.post("/v1/messages", json=body)
    events = [block.split("\n") for block in response.text.strip().split("\n\n")]
    names = [lines[0].removeprefix("event: ") for lines in events]
    payloads = [json.loads(lines[1].removeprefix("data: ")) for lines in events]
    assert [p["type"] for p in payloads] == names
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    partial = "".join(
        p["delta"]["partial_json"] for p in payloads if p["type"] == "content_block_delta"
    )
    call = builtin_scenarios["single_tool"].script[0].tool_calls[0]
    assert json.loads(partial) == call.args
    assert payloads[-2]["delta"] == {"stop_reason": "tool_use", "stop_sequence": None}
    assert response.headers["content-type"] == "text/event-stream"


async def test_errors_come_in_anthropics_format(builtin_scenarios) -> None:
    client = async_sdk(MockLLM(scenarios=builtin_scenarios))
    with pytest.raises(anthropic.NotFoundError) as caught:
        await client.messages.create(
            model="scenario/nope", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    error = caught.value.body
    assert error["type"] == "error" and error["error"]["type"] == "not_found_error"
    assert error["error"]["message"].startswith("model: 'scenario/nope' is not a scenario")
    with pytest.raises(anthropic.BadRequestError) as caught:
        await client.messages.create(
            model=MODEL, max_tokens=8, messages=[{"role": "system", "content": "hi"}]
        )
    assert caught.value.body == {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "messages.0.role: Input should be 'user' or 'assistant'",
        },
    }


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1}, "model: Field required"),
        ({"model": MODEL, "messages": [{"role": "user", "content": "x"}]}, "max_tokens: Field required"),
        ({"model": MODEL, "max_tokens": 0, "messages": [{"role": "user", "content": "x"}]},
         "max_tokens: Input should be greater than or equal to 1"),
        ({"model": MODEL, "max_tokens": 5, "messages": "x"}, "messages: Input should be a valid list"),
        ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "b", "input": "c"}]}]},
         "messages.0.content.0.input: Input should be a valid dictionary"),
        ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "system": 3},
         "system: Input should be a valid string"),
        ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [{"name": "t"}]},
         "tools.0.input_schema: Field required"),
        ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "some"}},
         "tool_choice.type: Input should be 'auto', 'any', 'tool', 'none'"),
        ({"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "stream": "yes"},
         "stream: Input should be a valid boolean"),
    ],
)  # fmt: skip
def test_a_request_the_mock_cannot_read_is_a_400_naming_the_field(body, message) -> None:
    mock = MockLLM()
    reply = mock.handle_messages(json.dumps(body).encode())
    assert (reply.status, json.loads(reply.body)) == (
        400,
        {"type": "error", "error": {"type": "invalid_request_error", "message": message}},
    )
    assert mock.requests[-1].api == "anthropic"


def test_bytes_that_are_not_json_are_a_400_not_an_exception() -> None:
    reply = MockLLM().handle_messages(b"\xff{not json")
    assert reply.status == 400
    assert json.loads(reply.body)["error"]["type"] == "invalid_request_error"


async def test_a_scripted_429_is_retried_by_the_sdk_after_retry_after(builtin_scenarios) -> None:
    mock = MockLLM(scenarios=builtin_scenarios)
    scenario = builtin_scenarios["llm_rate_limit"]
    http = mock_async_client(mock, "httpx2", base_url=ANTHROPIC_BASE_URL)
    client = anthropic.AsyncAnthropic(
        api_key="x", base_url=ANTHROPIC_BASE_URL, http_client=http, max_retries=5
    )
    messages = [{"role": "user", "content": scenario.user}]
    kwargs = {"model": "scenario/llm_rate_limit", "max_tokens": 64, "messages": messages}
    message = await client.messages.create(**kwargs, tools=anthropic_tools(scenario))
    statuses = [r.status for r in mock.requests]
    fault = scenario.script[0].fault
    assert statuses == [429] * fault.times + [200]
    assert message.stop_reason in ("tool_use", "end_turn")
    mock.reset()
    strict = anthropic.AsyncAnthropic(
        api_key="x", base_url=ANTHROPIC_BASE_URL, http_client=http, max_retries=0
    )
    with pytest.raises(anthropic.RateLimitError) as caught:
        await strict.messages.create(**kwargs, tools=anthropic_tools(scenario))
    assert caught.value.response.headers["retry-after"] == f"{fault.retry_after_s:g}"
    assert caught.value.body["error"]["type"] == "rate_limit_error"


def _fault_turn_body(scenario) -> dict:
    """A streamed request for the first turn of ``scenario`` that carries a fault."""
    messages = [{"role": "user", "content": scenario.user}]
    for i, turn in enumerate(scenario.script):
        if turn.fault is not None:
            break
        calls = [
            {"type": "tool_use", "id": f"t{i}_{j}", "name": c.name, "input": c.args}
            for j, c in enumerate(turn.tool_calls)
        ]
        messages.append({"role": "assistant", "content": calls})
        results = [{"type": "tool_result", "tool_use_id": c["id"], "content": "ok"} for c in calls]
        messages.append({"role": "user", "content": results})
    return {
        "model": f"scenario/{scenario.name}",
        "max_tokens": 64,
        "stream": True,
        "messages": messages,
        "tools": anthropic_tools(scenario),
    }


def test_a_truncated_stream_ends_before_the_stop_events(builtin_scenarios) -> None:
    mock = MockLLM(scenarios=builtin_scenarios)
    body = _fault_turn_body(builtin_scenarios["llm_stream_truncated"])
    broken = mock.handle_messages(json.dumps(body).encode())
    whole = mock.handle_messages(json.dumps(body).encode())  # the fault strikes once
    names = [chunk.split(b"\n")[0].removeprefix(b"event: ") for chunk in broken.chunks]
    assert names[:3] == [b"message_start", b"ping", b"content_block_start"]
    assert b"message_delta" not in names and b"message_stop" not in names
    assert b"content_block_delta" in names
    assert whole.chunks[1 : len(broken.chunks)] == broken.chunks[1:]  # all but the message id
    assert whole.chunks[-1] == b'event: message_stop\ndata: {"type":"message_stop"}\n\n'


def test_a_corrupt_event_keeps_its_event_line_and_breaks_its_json(builtin_scenarios) -> None:
    mock = MockLLM(scenarios=builtin_scenarios)
    body = _fault_turn_body(builtin_scenarios["llm_stream_corrupt_chunk"])
    reply = mock.handle_messages(json.dumps(body).encode())
    broken = []
    for chunk in reply.chunks:
        head, data = chunk.rstrip(b"\n").split(b"\n")
        assert head.startswith(b"event: ") and data.startswith(b"data: ")
        try:
            json.loads(data.removeprefix(b"data: "))
        except ValueError:
            broken.append(head)
    assert broken == [b"event: content_block_delta"]


async def test_the_sdk_raises_on_a_corrupt_event(builtin_scenarios) -> None:
    client = async_sdk(MockLLM(scenarios=builtin_scenarios))
    body = _fault_turn_body(builtin_scenarios["llm_stream_corrupt_chunk"])
    body.pop("stream")
    with pytest.raises(ValueError):
        async with client.messages.stream(**body) as events:
            async for _event in events:
                pass


def test_the_turn_is_derived_from_the_request_alone(builtin_scenarios) -> None:
    mock = MockLLM(scenarios=builtin_scenarios)
    user = {"role": "user", "content": "I want to return order A123."}
    call = {"type": "tool_use", "id": "t1", "name": "search_knowledge_base", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "Returns within 30 days."}
    base = {
        "model": MODEL,
        "max_tokens": 64,
        "tools": anthropic_tools(builtin_scenarios[MODEL[9:]]),
    }
    conversations = {
        "a question": [user],
        "after one tool round": [user, {"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}],
        "text beside the results": [user, {"role": "assistant", "content": [call]},
                                    {"role": "user", "content": [result, {"type": "text", "text": "go on"}]}],
        "a new question after an answer": [user, {"role": "assistant", "content": "Done."}, user],
    }  # fmt: skip
    for messages in conversations.values():
        mock.handle_messages(json.dumps({**base, "messages": messages}).encode())
        mock.handle_messages(json.dumps({**base, "messages": messages}).encode())  # again
    assert [r.turn for r in mock.requests] == [0, 0, 1, 1, 1, 1, 0, 0]


def test_a_react_prompt_without_tools_gets_react_text(builtin_scenarios) -> None:
    mock = MockLLM(scenarios=builtin_scenarios)
    prompt = "Answer with:\nQuestion: the input\nAction: a tool\nAction Input: its input\n"
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": prompt + "Question: return A123?"}],
    }
    reply = mock.handle_messages(json.dumps(body).encode())
    text = json.loads(reply.body)["content"][0]["text"]
    assert text.startswith("Thought:") and "Action: search_knowledge_base" in text
    assert mock.requests[-1].protocol == "react"


def test_no_tools_choice_forces_text(builtin_scenarios) -> None:
    scenario = builtin_scenarios["customer_returns"]
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": scenario.user}],
        "tools": anthropic_tools(scenario),
        "tool_choice": {"type": "none"},
    }
    answer = json.loads(MockLLM().handle_messages(json.dumps(body).encode()).body)
    assert [b["type"] for b in answer["content"]] == ["text"]
    assert answer["stop_reason"] == "end_turn"


def test_one_conversation_costs_the_same_tokens_in_both_protocols(builtin_scenarios) -> None:
    scenario = builtin_scenarios["customer_returns"]
    mock = MockLLM(scenarios=builtin_scenarios)
    openai_body = {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": scenario.system_prompt},
            {"role": "user", "content": scenario.user},
        ],
        "tools": tools_of(scenario),
    }
    anthropic_body = {
        "model": MODEL,
        "max_tokens": 64,
        "system": scenario.system_prompt,
        "messages": [{"role": "user", "content": scenario.user}],
        "tools": anthropic_tools(scenario),
    }
    mock.handle(json.dumps(openai_body).encode())
    mock.handle_messages(json.dumps(anthropic_body).encode())
    first, second = mock.requests
    assert (first.api, second.api) == ("openai", "anthropic")
    assert first.prompt_tokens == second.prompt_tokens == prompt_tokens(anthropic_body) > 0
    assert first.completion_tokens == second.completion_tokens > 0


def test_the_same_turn_gets_the_same_latency_in_both_protocols(builtin_scenarios) -> None:
    scenario = builtin_scenarios["customer_returns"]
    mock = MockLLM(scenarios=builtin_scenarios, latency=LatencyProfile.realistic())
    openai_reply = mock.handle(
        json.dumps(
            {"model": MODEL, "messages": [{"role": "user", "content": scenario.user}],
             "tools": tools_of(scenario), "stream": True}
        ).encode()
    )  # fmt: skip
    anthropic_reply = mock.handle_messages(
        json.dumps(
            {"model": MODEL, "max_tokens": 64, "messages": [{"role": "user", "content": scenario.user}],
             "tools": anthropic_tools(scenario), "stream": True}
        ).encode()
    )  # fmt: skip
    assert anthropic_reply.delay_s == openai_reply.delay_s > 0.2


def test_the_conversation_view_of_a_request() -> None:
    body = {
        "system": [{"type": "text", "text": "Be brief."}],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Looking."},
                    {"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "ok"}]},
                    {"type": "text", "text": "and?"},
                ],
            },
        ],
    }  # fmt: skip
    call = {"id": "a", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}
    expected = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
    ]
    assert request_problem({"model": "m", "max_tokens": 1, **body}) is None
    assert conversation(body) == expected
    assert conversation(body, complete=True) == [*expected, {"role": "user", "content": "and?"}]


def test_the_loopback_server_speaks_both_apis(mock_server, builtin_scenarios) -> None:
    host = mock_server.base_url.removesuffix("/v1")
    client = anthropic.Anthropic(api_key="x", base_url=host, max_retries=0)
    scenario = builtin_scenarios["customer_returns"]
    kwargs = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": scenario.user}],
        "tools": anthropic_tools(scenario),
    }
    plain = client.messages.create(**kwargs)
    with client.messages.stream(**kwargs) as events:
        streamed = events.get_final_message()
    assert _answer(plain) == _answer(streamed)
    assert plain.content[0].input == {"query": "return policy"}
    too_large = httpx.post(f"{host}/v1/messages", content=b"x" * (9 * 2**20))
    assert too_large.status_code == 413
    assert too_large.json()["error"]["type"] == "request_too_large"
    wrong_method = httpx.get(f"{host}/v1/messages")
    assert wrong_method.status_code == 405 and wrong_method.json()["type"] == "error"
    openai_route = httpx.get(f"{host}/v1/chat/completions")
    assert openai_route.status_code == 405 and "type" not in openai_route.json()


def test_the_referee_imports_no_contestant() -> None:
    code = (
        "import sys, bench.referee.anthropic, bench.referee.server, bench.referee.transport; "
        "print(sorted({m.split('.')[0] for m in sys.modules} "
        "& {'scheduler', 'langchain', 'langchain_core', 'langchain_anthropic', 'anthropic', "
        "'openai', 'langgraph'}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_malformed_arguments_are_streamed_verbatim_and_empty_in_json(builtin_scenarios) -> None:
    scenario = builtin_scenarios["malformed_tool_args"]
    (call,) = scenario.script[0].tool_calls
    body = {
        "model": f"scenario/{scenario.name}",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": scenario.user}],
        "tools": anthropic_tools(scenario),
    }
    mock = MockLLM(scenarios=builtin_scenarios)
    plain = json.loads(mock.handle_messages(json.dumps(body).encode()).body)
    assert [(b["type"], b["input"]) for b in plain["content"] if b["type"] == "tool_use"] == [
        ("tool_use", {})
    ]
    streamed = mock.handle_messages(json.dumps({**body, "stream": True}).encode())
    fragments = "".join(
        json.loads(chunk.split(b"\ndata: ")[1])["delta"].get("partial_json", "")
        for chunk in streamed.chunks
        if chunk.startswith(b"event: content_block_delta")
    )
    assert fragments == call.raw_arguments


def test_the_sync_httpx_transport_serves_messages(builtin_scenarios) -> None:
    body = {
        "model": MODEL,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": builtin_scenarios["customer_returns"].user}],
    }
    with mock_client(MockLLM(), "httpx", base_url=ANTHROPIC_BASE_URL) as http:
        answer = http.post("/v1/messages", json=body)
        missing = http.post("/v1/nothing", json=body)
    assert answer.status_code == 200 and answer.json()["type"] == "message"
    assert answer.headers["request-id"].startswith("req_")
    assert missing.status_code == 404
