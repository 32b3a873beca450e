"""Stream faults look the same to a client through every transport.

Each fault (``fault: {stream: ...}``, ``first_token_s``, ``times: always``) is played on a
streamed and on a plain answer through the in-process httpx transport, the in-process httpx2
transport (what the openai SDK sends through) and the loopback server with each library, and
the client must see exactly the same thing: the same events, the same bytes, the same
exception of its own library (a dropped connection is the library's ``RemoteProtocolError``
with the message a closed socket gives; a stall past the read timeout its ``ReadTimeout``).
Timings are checked only as lower bounds (a stall is really waited) and generous upper bounds
(nothing hangs).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import httpx2
import pytest
import yaml

from bench.referee import MockLLM
from bench.referee.faults import DROPPED_CHUNKED, dropped_body
from bench.referee.server import start_server_process
from bench.referee.transport import mock_async_client, mock_client
from scenarios import Scenario

ANSWER = "one two three four five six"  # six content events: the break comes after three
FIRST_HALF = "one two three"
# a stall and a first token late by 1.2 s, with read timeouts 0.4 s shorter or 2 s longer: on
# a busy host the loopback server's headers and first events have that long to arrive
# (timeouts of 0.2 s against 0.4-0.5 s failed there)
STALL_S = 1.2
FIRST_TOKEN_S = 1.2
LIBS = {"httpx": httpx, "httpx2": httpx2}

FAULTS: dict[str, dict[str, Any]] = {
    "truncate": {"stream": "truncate"},
    "drop": {"stream": "drop"},
    "corrupt": {"stream": "corrupt"},
    "stall": {"stream": "stall", "stall_s": STALL_S},
    "stall_then_close": {"stream": "stall", "stall_s": 0.3, "resume": False},
    "first_token": {"first_token_s": FIRST_TOKEN_S},
    "unauthorized": {"status": 401, "times": "always"},
    "down": {"status": 503, "times": "always"},
}


def _scenario_data(name: str, fault: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"the answer broken by {fault}",
        "user": "count to six",
        "script": [{"content": ANSWER, "fault": fault}],
    }


SCENARIOS = {
    name: Scenario.model_validate(_scenario_data(name, fault)) for name, fault in FAULTS.items()
}


@pytest.fixture(scope="module")
def fault_server(tmp_path_factory):
    """The loopback server, serving the fault scenarios above."""
    folder = tmp_path_factory.mktemp("fault_scenarios")
    for name, fault in FAULTS.items():
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(_scenario_data(name, fault)))
    with start_server_process(folder) as server:
        yield server


TRANSPORTS = [
    ("httpx", "inprocess"),
    ("httpx2", "inprocess"),
    ("httpx", "loopback"),
    ("httpx2", "loopback"),
]


@pytest.fixture(params=TRANSPORTS, ids=[f"{lib}-{where}" for lib, where in TRANSPORTS])
def connect(request):
    """``connect(timeout)``: an async client of one library over one transport, with fresh
    fault counters."""
    lib, where = request.param

    def make(timeout: float) -> Any:
        if where == "inprocess":
            return mock_async_client(MockLLM(scenarios=SCENARIOS), lib, timeout=timeout)
        server = request.getfixturevalue("fault_server")
        httpx.post(server.base_url.removesuffix("/v1") + "/reset").raise_for_status()
        return LIBS[lib].AsyncClient(base_url=server.base_url, timeout=timeout)

    make.lib = LIBS[lib]
    return make


@dataclass
class Seen:
    """What a client got: the status, the SSE data lines or the body, the exception."""

    status: int | None = None
    data: list[str] = field(default_factory=list)  # streamed: the ``data:`` payloads
    body: bytes = b""  # plain
    headers: dict[str, str] = field(default_factory=dict)
    error: Exception | None = None
    headers_s: float | None = None  # when the response headers came
    elapsed_s: float = 0.0

    @property
    def content(self) -> str:
        """The streamed text, from the events that parse (a corrupt one is left out)."""
        text = ""
        for data in self.data:
            try:
                chunk = json.loads(data)
            except ValueError:
                continue
            for choice in chunk.get("choices") or ():
                text += (choice.get("delta") or {}).get("content") or ""
        return text

    @property
    def finish_reasons(self) -> list[str]:
        reasons = []
        for data in self.data:
            try:
                chunk = json.loads(data)
            except ValueError:
                continue
            reasons += [
                c["finish_reason"] for c in chunk.get("choices") or () if c["finish_reason"]
            ]
        return reasons

    @property
    def unparsable(self) -> list[str]:
        bad = []
        for data in self.data:
            if data == "[DONE]":
                continue
            try:
                json.loads(data)
            except ValueError:
                bad.append(data)
        return bad


async def ask(client: Any, scenario: str, *, stream: bool) -> Seen:
    body = {
        "model": f"scenario/{scenario}",
        "messages": [{"role": "user", "content": "count to six"}],
        "stream": stream,
    }
    seen = Seen()
    started = time.perf_counter()
    try:
        if stream:
            async with client.stream("POST", "/chat/completions", json=body) as response:
                seen.status, seen.headers = response.status_code, dict(response.headers)
                seen.headers_s = time.perf_counter() - started
                async for line in response.aiter_lines():
                    if line.startswith("data: "):
                        seen.data.append(line.removeprefix("data: "))
        else:
            response = await client.post("/chat/completions", json=body)
            seen.status, seen.headers = response.status_code, dict(response.headers)
            seen.body = response.content
    except Exception as exc:
        seen.error = exc
    seen.elapsed_s = time.perf_counter() - started
    return seen


def _normal(body: bytes) -> bytes:
    """A completion body without what differs between two answers (its id and time)."""
    body = re.sub(rb'"chatcmpl-mock\d+"', b'"ID"', body)
    return re.sub(rb'"created": \d+', b'"created": 0', body)


def _raised(seen: Seen, kind: type, message: str | None = None) -> None:
    assert type(seen.error) is kind, repr(seen.error)
    if message is not None:
        assert str(seen.error) == message


# -- truncate --------------------------------------------------------------------------------


async def test_a_truncated_stream_ends_cleanly_without_finish_reason_or_done(connect):
    async with connect(2.0) as client:
        cut = await ask(client, "truncate", stream=True)
        whole = await ask(client, "truncate", stream=True)  # the same body: the fault is spent
    assert (cut.status, cut.error, cut.content, cut.finish_reasons) == (200, None, FIRST_HALF, [])
    assert cut.data[-1] != "[DONE]" and len(cut.data) == 4  # the role event and three words
    assert (whole.content, whole.finish_reasons, whole.data[-1]) == (ANSWER, ["stop"], "[DONE]")


async def test_a_truncated_plain_answer_is_its_json_cut_in_half(connect):
    async with connect(2.0) as client:
        cut = await ask(client, "truncate", stream=False)
        whole = await ask(client, "truncate", stream=False)
    assert (cut.status, cut.error) == (200, None)
    assert int(cut.headers["content-length"]) == len(cut.body)  # the server says that is all
    assert len(cut.body) == round(len(whole.body) / 2)
    assert _normal(whole.body).startswith(_normal(cut.body))
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut.body)
    assert json.loads(whole.body)["choices"][0]["message"]["content"] == ANSWER


# -- drop ------------------------------------------------------------------------------------


async def test_a_dropped_stream_raises_the_librarys_own_error_after_the_first_half(connect):
    async with connect(2.0) as client:
        dropped = await ask(client, "drop", stream=True)
        retried = await ask(client, "drop", stream=True)
    _raised(dropped, connect.lib.RemoteProtocolError, DROPPED_CHUNKED)
    assert (dropped.status, dropped.content, dropped.finish_reasons) == (200, FIRST_HALF, [])
    assert (retried.error, retried.content, retried.data[-1]) == (None, ANSWER, "[DONE]")


async def test_a_dropped_plain_answer_raises_with_the_bytes_received(connect):
    async with connect(2.0) as client:
        dropped = await ask(client, "drop", stream=False)
        whole = await ask(client, "drop", stream=False)
    size = len(whole.body)
    _raised(dropped, connect.lib.RemoteProtocolError, dropped_body(round(size / 2), size))
    assert whole.error is None
    assert json.loads(whole.body)["choices"][0]["message"]["content"] == ANSWER


# -- corrupt ---------------------------------------------------------------------------------


async def test_a_corrupt_event_is_one_data_line_that_is_not_json(connect):
    async with connect(2.0) as client:
        seen = await ask(client, "corrupt", stream=True)
    assert (seen.status, seen.error, seen.data[-1], seen.finish_reasons) == (
        200,
        None,
        "[DONE]",
        ["stop"],
    )
    assert len(seen.unparsable) == 1 and seen.unparsable[0].startswith('{"id":"chatcmpl-mock')
    # the corrupt event was the fourth word's: a client that skipped it would lose the word
    assert seen.content == "one two three five six"


async def test_a_corrupt_plain_answer_holds_a_byte_no_json_allows(connect):
    async with connect(2.0) as client:
        corrupt = await ask(client, "corrupt", stream=False)
        whole = await ask(client, "corrupt", stream=False)
    assert (corrupt.status, corrupt.error, corrupt.body.count(b"\x00")) == (200, None, 1)
    assert _normal(corrupt.body.replace(b"\x00", b"")) == _normal(whole.body)
    with pytest.raises(json.JSONDecodeError, match="Invalid control character"):
        json.loads(corrupt.body)


# -- stall -----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "plain"])
async def test_a_stall_past_the_read_timeout_is_a_read_timeout(connect, stream):
    async with connect(STALL_S - 0.4) as client:
        seen = await ask(client, "stall", stream=stream)
    _raised(seen, connect.lib.ReadTimeout)
    assert seen.status == (200 if stream else None)
    if stream:
        assert seen.content == FIRST_HALF
    # the timeout was waited; a ReadTimeout means it cut the stall (a stall waited out ends well)
    assert seen.elapsed_s >= STALL_S - 0.4


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "plain"])
async def test_a_stall_within_the_read_timeout_is_waited_out(connect, stream):
    async with connect(STALL_S + 2) as client:
        seen = await ask(client, "stall", stream=stream)
    assert seen.error is None
    if stream:
        assert (seen.content, seen.data[-1]) == (ANSWER, "[DONE]")
    else:
        assert json.loads(seen.body)["choices"][0]["message"]["content"] == ANSWER
    assert STALL_S <= seen.elapsed_s < STALL_S + 3


async def test_a_stall_that_never_resumes_ends_in_a_drop(connect):
    async with connect(2.0) as client:
        streamed = await ask(client, "stall_then_close", stream=True)
        plain = await ask(client, "stall_then_close", stream=False)
    _raised(streamed, connect.lib.RemoteProtocolError, DROPPED_CHUNKED)
    assert streamed.content == FIRST_HALF
    _raised(plain, connect.lib.RemoteProtocolError)
    assert str(plain.error).startswith("peer closed connection without sending complete")
    assert streamed.elapsed_s >= 0.3 and plain.elapsed_s >= 0.3


# -- slow first token ------------------------------------------------------------------------


async def test_a_slow_first_token_sends_the_headers_at_once(connect):
    async with connect(FIRST_TOKEN_S + 2) as client:
        streamed = await ask(client, "first_token", stream=True)
        plain = await ask(client, "first_token", stream=False)
    assert (streamed.error, streamed.content, streamed.data[-1]) == (None, ANSWER, "[DONE]")
    assert streamed.headers_s < FIRST_TOKEN_S - 0.3 and FIRST_TOKEN_S <= streamed.elapsed_s < 4
    assert plain.error is None and FIRST_TOKEN_S <= plain.elapsed_s < 4


async def test_a_first_token_later_than_the_read_timeout_is_a_read_timeout(connect):
    async with connect(FIRST_TOKEN_S - 0.4) as client:
        seen = await ask(client, "first_token", stream=True)
    _raised(seen, connect.lib.ReadTimeout)
    assert (seen.status, seen.data) == (200, [])


# -- status faults that never end ------------------------------------------------------------


@pytest.mark.parametrize(("scenario", "status"), [("unauthorized", 401), ("down", 503)])
async def test_times_always_answers_every_request_with_the_fault(connect, scenario, status):
    async with connect(2.0) as client:
        seen = [await ask(client, scenario, stream=stream) for stream in (False, True) * 3]
    assert [s.status for s in seen] == [status] * 6
    assert all(s.error is None for s in seen)


# -- sync clients, in-process ----------------------------------------------------------------


@pytest.mark.parametrize("lib", sorted(LIBS))
def test_sync_clients_see_the_same_drop_and_stall(lib):
    request = {"messages": [{"role": "user", "content": "count to six"}], "stream": True}
    with mock_client(MockLLM(scenarios=SCENARIOS), lib, timeout=0.2) as client:
        received = []
        drop = {**request, "model": "scenario/drop"}
        with (
            pytest.raises(LIBS[lib].RemoteProtocolError, match=re.escape(DROPPED_CHUNKED)),
            client.stream("POST", "/chat/completions", json=drop) as response,
        ):
            for line in response.iter_lines():
                if line:
                    received.append(line)
        assert len(received) == 4  # the role event and three words
        started = time.perf_counter()
        with pytest.raises(LIBS[lib].ReadTimeout, match=r"^no data within 0.2s$"):
            client.post("/chat/completions", json={**request, "model": "scenario/stall"})
        assert 0.2 <= time.perf_counter() - started < 0.45


# -- the server stays quiet ------------------------------------------------------------------


def test_the_server_logs_nothing_for_a_scripted_drop(tmp_path):
    (tmp_path / "drop.yaml").write_text(yaml.safe_dump(_scenario_data("drop", FAULTS["drop"])))
    log = tmp_path / "mock.log"
    server = start_server_process(tmp_path, log=log)
    try:
        body = {"model": "scenario/drop", "messages": [{"role": "user", "content": "x"}]}
        for _ in range(3):
            with pytest.raises(httpx.RemoteProtocolError):
                httpx.post(f"{server.base_url}/chat/completions", json={**body, "stream": True})
            httpx.post(server.base_url.removesuffix("/v1") + "/reset")
    finally:
        server.stop()
    err = log.read_text(encoding="utf-8")
    assert err == ""  # uvicorn would log each drop as "Exception in ASGI application"


# -- where the break comes (the mock's reply, no transport) ----------------------------------


def _streamed_reply(turn: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> Any:
    data = {"name": "where", "description": "d", "user": "u", "script": [turn]}
    if tools:
        data["tools"] = tools
        data["script"].append({"content": "done"})
    mock = MockLLM(scenarios={"where": Scenario.model_validate(data)})
    body = {"model": "scenario/where", "messages": [{"role": "user", "content": "u"}]}
    if tools:
        body["tools"] = [{"type": "function", "function": {"name": "lookup"}}]
    return mock.handle(json.dumps({**body, "stream": True}).encode())


def _deltas(reply: Any) -> list[dict[str, Any]]:
    return [json.loads(c.removeprefix(b"data: "))["choices"][0]["delta"] for c in reply.chunks]


def test_a_truncated_tool_call_stops_mid_arguments():
    schema = {"type": "object", "properties": {"city": {}, "date": {}}}
    tools = [{"name": "lookup", "description": "d", "parameters": schema}]
    call = {"name": "lookup", "args": {"city": "Porto", "date": "2026-12-01"}}
    reply = _streamed_reply({"tool_calls": [call], "fault": {"stream": "truncate"}}, tools)
    arguments = "".join(
        fragment["function"]["arguments"]
        for delta in _deltas(reply)
        for fragment in delta.get("tool_calls") or ()
    )
    assert arguments == '{"city": "Porto"'  # 16 of 39 characters: 2 of 5 fragments
    assert all("finish_reason" not in delta for delta in _deltas(reply))


def test_a_one_word_answer_is_cut_before_its_word_and_corrupts_that_word():
    cut = _streamed_reply({"content": "Yes", "fault": {"stream": "truncate"}})
    assert _deltas(cut) == [{"role": "assistant", "content": "", "refusal": None}]
    corrupt = _streamed_reply({"content": "Yes", "fault": {"stream": "corrupt"}})
    assert len(corrupt.chunks) == 4  # role, the corrupt word, finish, [DONE]
    with pytest.raises(json.JSONDecodeError):
        json.loads(corrupt.chunks[1].removeprefix(b"data: "))
    assert corrupt.chunks[-1] == b"data: [DONE]\n\n"


@pytest.mark.parametrize(("at", "words"), [(0.1, "one"), (0.5, FIRST_HALF), (0.9, ANSWER[:-4])])
def test_at_says_how_much_of_the_answer_comes_before_the_break(at, words):
    reply = _streamed_reply({"content": ANSWER, "fault": {"stream": "drop", "at": at}})
    delivered = [piece for _, piece in reply.deliveries()]
    assert delivered[-1] is None  # the connection closes there
    content = "".join(
        json.loads(piece.removeprefix(b"data: "))["choices"][0]["delta"].get("content") or ""
        for piece in delivered[:-1]
    )
    assert content == words
