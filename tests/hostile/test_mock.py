"""Hostile requests to the mock LLM: every one gets an OpenAI-style JSON error, and the
server keeps serving everyone else."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest

from bench.referee import MockLLM
from bench.referee.core import CACHE_ENTRIES
from bench.referee.server import READY_PREFIX
from scenarios import load_scenarios

MESSAGES = [{"role": "user", "content": "I want to return order A123."}]
CHAT = {"model": "scenario/customer_returns", "messages": MESSAGES}
TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """``schedbench mock serve`` with a 1 MiB body cap and a 1 s request deadline."""
    command = [sys.executable, "-m", "bench.cli", "mock", "serve", "--port", "0"]
    command += ["--max-body-mb", "1", "--request-timeout", str(TIMEOUT_S)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        assert line.startswith(READY_PREFIX), line + process.stderr.read()
        yield line.removeprefix(READY_PREFIX).strip()
    finally:
        process.terminate()
        process.wait(timeout=10)


def openai_error(response: httpx.Response, status: int) -> dict:
    """The response is ``status`` with an OpenAI error body; returns its ``error``."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == ("invalid_request_error" if status < 500 else "server_error")
    return error


FUNCTION = {"type": "function", "function": {"name": "f"}}
PROPERTY = {"properties": {"a": {"description": 7}}}
ASSISTANT = {"role": "assistant", "content": None}

# field, value sent, the param OpenAI's error names, expected, got
ODD_FIELDS = [
    ("tools", "x", "tools", "an array of objects", "a string"),
    ("tools", [5], "tools[0]", "an object", "an integer"),
    (
        "tools",
        [{**FUNCTION, "function": {"name": 5}}],
        "tools[0].function.name",
        "a string",
        "an integer",
    ),
    (
        "tools",
        [{**FUNCTION, "function": {"name": "f", "parameters": PROPERTY}}],
        "tools[0].function.parameters.properties.a.description",
        "a string",
        "an integer",
    ),
    ("functions", {"name": "f"}, "functions", "an array of objects", "an object"),
    ("stream", "yes", "stream", "a boolean", "a string"),
    ("stream_options", 5, "stream_options", "an object", "an integer"),
    (
        "stream_options",
        {"include_usage": "y"},
        "stream_options.include_usage",
        "a boolean",
        "a string",
    ),
    ("tool_choice", 3, "tool_choice", "a string or an object", "an integer"),
    (
        "messages",
        [{"role": "user", "content": 5}],
        "messages[0].content",
        "a string or an array of content parts",
        "an integer",
    ),
    ("messages", [{"role": 1, "content": "x"}], "messages[0].role", "a string", "an integer"),
    (
        "messages",
        [{"role": "user", "content": [{"type": "text", "text": 1}]}],
        "messages[0].content[0].text",
        "a string",
        "an integer",
    ),
    (
        "messages",
        [*MESSAGES, {**ASSISTANT, "tool_calls": [{"function": "f"}]}],
        "messages[1].tool_calls[0].function",
        "an object",
        "a string",
    ),
    (
        "messages",
        [*MESSAGES, {**ASSISTANT, "tool_calls": "x"}],
        "messages[1].tool_calls",
        "an array",
        "a string",
    ),
    (
        "messages",
        [*MESSAGES, {**ASSISTANT, "function_call": {"name": "f", "arguments": {}}}],
        "messages[1].function_call.arguments",
        "a string",
        "an object",
    ),
]


@pytest.mark.parametrize(("field", "value", "param", "expected", "got"), ODD_FIELDS)
def test_odd_field_types_get_a_400_naming_the_field(server, field, value, param, expected, got):
    response = httpx.post(f"{server}/chat/completions", json={**CHAT, field: value})
    error = openai_error(response, 400)
    message = f"Invalid type for '{param}': expected {expected}, but got {got} instead."
    assert (error["param"], error["message"], error["code"]) == (param, message, "invalid_type")


@pytest.mark.parametrize(
    ("field", "value", "code", "message"),
    [
        (
            "messages",
            [],
            "invalid_messages",
            "'messages' must be a non-empty list of message objects",
        ),
        ("model", None, "invalid_model", "'model' is required and must be a string"),
    ],
)
def test_missing_essentials_get_a_400(server, field, value, code, message):
    error = openai_error(httpx.post(f"{server}/chat/completions", json={**CHAT, field: value}), 400)
    assert (error["param"], error["code"], error["message"]) == (field, code, message)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", "invalid_json"),
        (b"[" * 100_000, "invalid_json"),  # nesting past the JSON parser's recursion limit
        (b"\xff\xfe", "invalid_json"),
        (b"[1, 2]", "invalid_body"),
        (b'"text"', "invalid_body"),
    ],
)
def test_bodies_that_are_no_request_get_a_400(server, body, code):
    response = httpx.post(f"{server}/chat/completions", content=body)
    assert openai_error(response, 400)["code"] == code


def test_unknown_routes_and_wrong_methods_get_404_and_405(server):
    error = openai_error(httpx.post(f"{server}/nothing", json={}), 404)
    assert (error["code"], error["message"]) == (
        "unknown_url",
        "Unknown request URL: POST /v1/nothing.",
    )
    error = openai_error(httpx.get(f"{server}/chat/completions"), 405)
    assert error["message"] == "Invalid method for URL (GET /v1/chat/completions)."
    assert openai_error(httpx.delete(f"{server}/models"), 405)["code"] == "method_not_allowed"


def test_a_body_over_the_cap_gets_a_413(server):
    big = {**CHAT, "messages": [{"role": "user", "content": "x" * (2 * 2**20)}]}
    error = openai_error(httpx.post(f"{server}/chat/completions", json=big), 413)
    assert error["message"] == "request body larger than 1,048,576 bytes"

    def chunks():  # no content-length: the cap holds while the body streams in
        for _ in range(40):
            yield b" " * 65536

    response = httpx.post(f"{server}/chat/completions", content=chunks())
    assert openai_error(response, 413)["code"] == "request_too_large"
    assert httpx.post(f"{server}/chat/completions", json=CHAT).status_code == 200


def _raw(server: str, payload: bytes, wait_s: float = 10.0) -> tuple[bytes, float]:
    host, port = server.removeprefix("http://").split("/")[0].split(":")
    started = time.monotonic()
    with socket.create_connection((host, int(port))) as sock:
        sock.settimeout(wait_s)
        sock.sendall(payload)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data, time.monotonic() - started


def _error_of(data: bytes) -> tuple[bytes, dict]:
    head, _, body = data.partition(b"\r\n\r\n")
    return head.split(b"\r\n")[0], json.loads(body)["error"]


@pytest.mark.parametrize(
    "payload",
    [
        b"",  # connects and says nothing
        b"POST /v1/chat/comp",  # half a request line
        b'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{"mo',
    ],
)
def test_a_slow_or_stalled_request_gets_a_408_and_others_are_served_meanwhile(server, payload):
    answered = []
    other = threading.Thread(
        target=lambda: answered.append(httpx.post(f"{server}/chat/completions", json=CHAT))
    )
    result: list[tuple[bytes, float]] = []
    stalled = threading.Thread(target=lambda: result.append(_raw(server, payload)))
    stalled.start()
    time.sleep(0.2)
    other.start()
    other.join(5)
    assert answered and answered[0].status_code == 200  # while the slow one still hangs on
    stalled.join(15)
    data, elapsed = result[0]
    status, error = _error_of(data)
    assert status == b"HTTP/1.1 408 Request Timeout"
    assert error == {
        "message": "request not received in full within 1 s",
        "type": "invalid_request_error",
        "param": None,
        "code": "request_timeout",
    }
    assert TIMEOUT_S - 0.1 <= elapsed < TIMEOUT_S + 5


def test_bytes_that_are_not_http_get_a_400_in_openai_format(server):
    data, _ = _raw(server, b"\x16\x03\x01 not http at all\r\n\r\n")
    status, error = _error_of(data)
    assert (status, error["code"]) == (b"HTTP/1.1 400 Bad Request", "invalid_http")


async def test_a_failure_inside_the_mock_is_a_500_in_openai_format(monkeypatch):
    # the app in-process, its token counting broken for one kind of message
    from bench.referee import MockLLM, tokens
    from bench.referee.server import create_app

    real = tokens.message_tokens

    def broken(message):
        if "audio" in message:
            raise TypeError("cannot count audio")
        return real(message)

    monkeypatch.setattr("bench.referee.core.message_tokens", broken)
    transport = httpx.ASGITransport(app=create_app(MockLLM()))
    async with httpx.AsyncClient(transport=transport, base_url="http://mock/v1") as client:
        odd = {**CHAT, "messages": [{**MESSAGES[0], "audio": {"name": 5}}]}
        error = openai_error(await client.post("/chat/completions", json=odd), 500)
        assert error["code"] == "mock_error"
        assert error["message"].startswith("the mock failed on this request (TypeError: ")
        assert (await client.post("/chat/completions", json=CHAT)).status_code == 200


TURN_ONE = [
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "get_forecast", "arguments": "{}"}}
    ]},
    {"role": "tool", "tool_call_id": "c", "content": "{}"},
]  # fmt: skip


def test_the_caches_stay_bounded_whatever_clients_send():
    mock = MockLLM(scenarios=load_scenarios(), record=False)
    for i in range(CACHE_ENTRIES + 500):
        tool = {"type": "function", "function": {"name": f"t{i}", "description": "d"}}
        assert mock.handle(json.dumps({**CHAT, "tools": [tool]}).encode()).status == 200
        # a distinct body on the faulty turn each time: one more fault counter each time
        question = {"role": "user", "content": f"Will it rain? ({i})"}
        faulty = {"model": "scenario/llm_server_error", "messages": [question, *TURN_ONE]}
        assert mock.handle(json.dumps(faulty).encode()).status == 500  # the scripted fault
    assert len(mock._tools_tokens) == CACHE_ENTRIES
    assert len(mock._fault_hits) == CACHE_ENTRIES
    assert len(mock._completions) <= CACHE_ENTRIES
