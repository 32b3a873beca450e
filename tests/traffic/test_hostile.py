"""Hostile traffic and hostile logs (issue 26, attacks 2, 5, 7, 8 and 10): one exchange that
cannot be written spoils nothing else; the proxy relays with bounded memory and never cuts a
complete relay; schema patterns are matched with a time limit, off the proxy's event loop;
every credential-bearing header is masked; requests from a browser are refused; a bad log is
one clear line and exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from bench.cli import main
from bench.traffic import MASK, Redactor, read_log
from bench.traffic.proxy import create_app
from bench.traffic.redact import header_secrets
from bench.traffic.session import RecordingSession
from bench.traffic.stream import StreamReader, timing_from
from scenarios import load_scenario
from tests.traffic.conftest import serve_in_thread
from tests.traffic.test_build import SYSTEM, assistant, call, exchange, tool

# -- attack 2: one exchange the recorder cannot write --------------------------------------


def conversation(result: str, at: float, user: str = "Find A.", **usage: int) -> list[Any]:
    """Two exchanges of one run: a call of ``find``, then the answer after its ``result``."""
    ask = [SYSTEM, {"role": "user", "content": user}]
    calls = assistant(None, call('{"q":"A"}', "c1"))
    first = exchange(ask, calls, at)
    second = exchange([*ask, calls, tool("c1", result)], assistant("Done."), at + 1)
    if usage:
        second.response["usage"] = usage
    return [first, second]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (
            conversation("x" * 150_000, 1.0),
            "rec: exchange 2: messages[3] (the result of find, call c1): 150,000 characters; "
            "a scenario text holds at most 100,000",
        ),
        (conversation("a\ud800b", 1.0), None),
        (conversation("fine", 1.0, prompt_tokens=20_000_000, completion_tokens=3), None),
    ],
    ids=["150k-tool-result", "lone-surrogate", "20M-prompt-tokens"],
)
def test_one_exchange_that_cannot_be_written_spoils_no_other(
    tmp_path: Path, bad: list[Any], error: str | None
) -> None:
    events: list[str] = []
    session = RecordingSession(tmp_path, "rec", on_event=events.append)
    for item in [*bad, *conversation("B is in drawer 2", 10.0, user="Find B.")]:
        session.add(item)  # never raises
    assert len(session.exchanges) == 4
    log = (tmp_path / "rec.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(log) == 4  # every exchange is in the log, as it came
    assert (
        json.loads(log[1])["request"]["messages"][3]["content"]
        == (bad[1].request["messages"][3]["content"])
    )
    later = load_scenario(tmp_path / ("rec_2.yaml"))
    assert (later.user, later.tools[0].behavior.returns) == ("Find B.", "B is in drawer 2")
    if error is not None:
        assert session.built.errors == [error]
        assert not (tmp_path / "rec.yaml").exists()
        return
    # what could be recorded was, and the rest is said
    first = load_scenario(tmp_path / "rec.yaml")
    assert session.built.errors == []
    if "\ud800" in bad[1].request["messages"][3]["content"]:
        assert first.tools[0].behavior.returns == "a\ufffdb"
        assert session.built.notes == [
            "exchange 2: messages[3].content: a lone surrogate (\\ud800) written as U+FFFD"
        ]
    else:
        assert first.script[1].timing.prompt_tokens is None
        assert first.script[1].timing.completion_tokens == 3
        assert session.built.notes == [
            "exchange 2: usage.prompt_tokens 20,000,000 left out: above 10,000,000"
        ]


# -- the fake upstream of the proxy tests ---------------------------------------------------

MIB = 2**20
MAX_GAPS = 100_000  # TurnTiming.gaps_ms holds at most this many
BIG_ANSWER_MIB = 24
HITS: list[str] = []
BIG_HEAD = b'{"choices":[{"index":0,"message":{"role":"assistant","content":"'
BIG_TAIL = b'"},"finish_reason":"stop"}]}'


def sse(chunk: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


DELTA = sse({"choices": [{"index": 0, "delta": {"content": "a"}}]})
CHUNKS = 120_001  # more than a timing holds gaps


async def chat(request: Request) -> Any:
    body = json.loads(await request.body())
    HITS.append(body["model"])
    if body["model"] == "many-chunks":

        async def many() -> Any:
            per_piece = 1_000
            for start in range(0, CHUNKS, per_piece):
                yield DELTA * min(per_piece, CHUNKS - start)
            yield sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            yield b"data: [DONE]\n\n"

        return StreamingResponse(many(), media_type="text/event-stream")

    async def big() -> Any:  # one JSON answer of BIG_ANSWER_MIB MiB, sent a MiB at a time
        text = b"x" * MIB
        yield BIG_HEAD
        for _ in range(BIG_ANSWER_MIB):
            yield text
        yield BIG_TAIL

    return StreamingResponse(big(), media_type="application/json")


FAKE = Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])
ASK = {"messages": [{"role": "user", "content": "hi"}], "tools": []}


@pytest.fixture(scope="module")
def fake_upstream() -> Any:
    server, thread, url = serve_in_thread(FAKE)
    yield url
    server.should_exit = True
    thread.join(timeout=10)


def proxied(upstream: str, directory: Path, **session: Any) -> Any:
    """A recording proxy in a thread: (its URL, the session, a function that stops it)."""
    recording = RecordingSession(directory, "rec", **session)
    server, thread, url = serve_in_thread(create_app(upstream, recording))

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=30)

    return url, recording, stop


# -- attack 5: bounded memory, complete relays ----------------------------------------------


def test_a_stream_of_more_chunks_than_a_timing_holds_is_relayed_whole_and_recorded(
    fake_upstream: str, tmp_path: Path
) -> None:
    url, session, stop = proxied(fake_upstream, tmp_path)
    try:
        with httpx.stream(
            "POST", f"{url}/chat/completions", json={**ASK, "model": "many-chunks"}, timeout=120
        ) as reply:
            relayed = b"".join(reply.iter_bytes())
    finally:
        stop()
    assert relayed.count(DELTA) == CHUNKS
    assert relayed.endswith(b"data: [DONE]\n\n")
    (recorded,) = session.exchanges
    assert (recorded.error, recorded.message["content"]) == (None, "a" * CHUNKS)
    assert len(recorded.timing.gaps_ms) == MAX_GAPS


def test_a_timing_of_more_chunks_than_it_holds_is_thinned_evenly() -> None:
    arrivals = [1.0 + i / 1000 for i in range(150_001)]
    timing = timing_from(1.0, 200.0, arrivals)
    assert (timing.ttft_ms, len(timing.gaps_ms), timing.total_ms) == (0.0, MAX_GAPS, 199_000.0)
    assert round(sum(timing.gaps_ms), 3) == 150_000.0  # the first and the last chunk kept


def test_an_endless_stream_keeps_bounded_state() -> None:
    reader = StreamReader()
    piece = sse({"choices": [{"index": 0, "delta": {"content": "words " * 10}}]}) * 10_000
    for second in range(60):  # 600,000 chunks, 36 million characters
        reader.feed(piece, float(second))
    assert reader.assembler.overflow
    assert sum(map(len, reader.assembler.content)) <= 2**20
    assert MAX_GAPS <= len(reader.arrivals) <= 2 * MAX_GAPS
    reader.feed(b"data: " + b"[" * (5 * MIB), 61.0)  # one event without an end
    assert len(reader._buffer) < 16


def test_a_large_answer_is_relayed_with_bounded_memory_and_said_too_large(
    fake_upstream: str, tmp_path: Path
) -> None:
    url, session, stop = proxied(fake_upstream, tmp_path)
    tracemalloc.start()
    try:
        size = 0
        with httpx.stream(
            "POST", f"{url}/chat/completions", json={**ASK, "model": "big"}, timeout=120
        ) as reply:
            for piece in reply.iter_bytes():
                size += len(piece)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        stop()
    assert size == BIG_ANSWER_MIB * MIB + len(BIG_HEAD) + len(BIG_TAIL)
    assert peak < 14 * MIB, f"{peak / MIB:.1f} MiB held for a {BIG_ANSWER_MIB} MiB answer"
    (recorded,) = session.exchanges
    assert (recorded.status, recorded.response) == (200, None)
    assert recorded.error == "the answer is larger than 8 MiB: relayed, not recorded"


# -- attack 2 and 7 at the proxy: recording never blocks or breaks the relay -----------------


def test_a_recording_failure_is_said_and_the_relay_goes_on(
    fake_upstream: str, tmp_path: Path
) -> None:
    failed: list[bool] = []

    def hook(data: dict[str, Any]) -> dict[str, Any]:
        if not failed:
            failed.append(True)
            raise RuntimeError("this hook is broken once")
        return data

    events: list[str] = []
    url, session, stop = proxied(
        fake_upstream, tmp_path, redactor=Redactor(hooks=[hook]), on_event=events.append
    )
    try:
        answers = [
            httpx.post(f"{url}/chat/completions", json={**ASK, "model": model}, timeout=120)
            for model in ("many-chunks", "many-chunks")
        ]
    finally:
        stop()
    assert [a.status_code for a in answers] == [200, 200]
    assert len(session.exchanges) == 1
    assert events[0] == "an exchange was not recorded: RuntimeError: this hook is broken once"
    assert events[1].startswith("exchange 1: HTTP 200, streamed")


def test_recording_runs_off_the_event_loop(fake_upstream: str, tmp_path: Path) -> None:
    """A redaction hook (or a slow build) that blocks does not stop the proxy serving others:
    the answer it records waits for it (so that recording never competes with timing the
    agent's next call), the event loop does not."""
    entered, release = threading.Event(), threading.Event()

    def hook(data: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        release.wait(timeout=120)
        return data

    url, session, stop = proxied(fake_upstream, tmp_path, redactor=Redactor(hooks=[hook]))
    answers: list[int] = []
    try:
        first = threading.Thread(
            target=lambda: answers.append(
                httpx.post(
                    f"{url}/chat/completions", json={**ASK, "model": "many-chunks"}, timeout=120
                ).status_code
            )
        )
        first.start()
        assert entered.wait(timeout=60)
        # the hook is still running: another request is relayed all the same
        other = httpx.get(f"{url}/models", timeout=20)
        assert (other.status_code, answers) == (404, [])  # the fake upstream has no /models
        release.set()
        first.join(timeout=60)
    finally:
        release.set()
        stop()
    assert answers == [200]
    assert len(session.exchanges) == 1


CATASTROPHIC = {
    "type": "function",
    "function": {
        "name": "find",
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string", "pattern": "^(a|aa)+$"}},
        },
    },
}


def test_a_catastrophic_pattern_is_cut_by_a_time_limit(tmp_path: Path) -> None:
    """In a child process: without a time limit the match would run for hours."""
    ask = [SYSTEM, {"role": "user", "content": "Find."}]
    arguments = json.dumps({"q": "a" * 60 + "!"})
    calls = assistant(None, call(arguments, "c1"))
    lines = [
        {"request": {"model": "m", "messages": ask, "tools": [CATASTROPHIC]}, "response": r}
        for r in (
            {"choices": [{"index": 0, "message": calls}]},
            {"choices": [{"index": 0, "message": assistant("Done.")}]},
        )
    ]
    lines[1]["request"]["messages"] = [*ask, calls, tool("c1", "none")]
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    command = [sys.executable, "-m", "bench.cli", "scenarios", "import", str(log)]
    command += ["--scenario-dir", str(tmp_path / "out")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"schedbench scenarios: error: {log}: no scenario to build: log: exchange 1: "
        f"tool_calls[0].arguments.q: pattern '^(a|aa)+$' takes longer than 0.2 s on "
        f"{'a' * 40!r} (or the file's patterns over 1.0 s in all); simplify the regular "
        "expression (catastrophic backtracking)\n"
    )


# -- attack 10: credentials in any header; requests from a browser ---------------------------


def test_every_credential_bearing_header_is_a_secret() -> None:
    headers = {
        "Cookie": "sid=c00kie-value-1; theme=dark",
        "x-goog-api-key": "AIza-goog-key-123",
        "X-Auth-Token": "auth-token-456",
        "X-Session-Id": "session-789-abc",
        "X-Custom-Secret": "s3cr3t-value",
        "Authorization": "Basic dXNlcjpwYXNz",
        "X-Short-Token": "on",  # too short to search for
        "Content-Type": "application/json",
        "X-Request-Id": "req-12345678",
    }
    assert sorted(header_secrets(headers)) == sorted(
        [
            "sid=c00kie-value-1; theme=dark",
            "c00kie-value-1",
            "AIza-goog-key-123",
            "auth-token-456",
            "session-789-abc",
            "s3cr3t-value",
            "Basic dXNlcjpwYXNz",
            "dXNlcjpwYXNz",
        ]
    )


def test_header_credentials_echoed_in_a_log_are_masked(tmp_path: Path) -> None:
    leaked = "c00kie-value-1 AIza-goog-key-123 auth-token-456"
    line = {
        "headers": {
            "Cookie": "sid=c00kie-value-1",
            "x-goog-api-key": "AIza-goog-key-123",
            "X-Auth-Token": "auth-token-456",
        },
        "request": {"model": "m", "messages": [{"role": "user", "content": leaked}], "tools": []},
        "response": {"choices": [{"index": 0, "message": assistant(leaked)}]},
    }
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    (read,) = read_log(path)
    assert read.request["messages"][0]["content"] == f"{MASK} {MASK} {MASK}"
    assert read.message["content"] == f"{MASK} {MASK} {MASK}"


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Host": "evil.example"}, "Host 'evil.example' is not this proxy"),
        ({"Origin": "https://evil.example"}, "a browser request (Origin: https://evil.example)"),
        ({"Sec-Fetch-Site": "cross-site"}, "a browser request (Sec-Fetch-Site: cross-site)"),
    ],
    ids=["dns-rebinding", "origin", "fetch-metadata"],
)
def test_requests_from_a_web_page_are_refused(
    fake_upstream: str, tmp_path: Path, headers: dict[str, str], reason: str
) -> None:
    url, session, stop = proxied(fake_upstream, tmp_path)
    before = len(HITS)
    try:
        refused = httpx.post(
            f"{url}/chat/completions",
            json={**ASK, "model": "many-chunks"},
            headers=headers,
            timeout=30,
        )
        allowed = httpx.get(url.replace("127.0.0.1", "localhost") + "/nothing-here", timeout=30)
    finally:
        stop()
    assert refused.status_code == 403
    assert refused.json()["error"]["message"] == (
        f"schedbench record: refused: {reason}; only programs on this machine may use the proxy"
    )
    assert allowed.status_code == 404  # localhost is this proxy: relayed (the fake has no path)
    assert (len(HITS), session.exchanges) == (before, [])


# -- attack 8: hostile logs ------------------------------------------------------------------

TOOLS = [CATASTROPHIC["function"] | {"parameters": {"type": "object", "properties": {}}}]
FIND_TOOLS = [{"type": "function", "function": TOOLS[0]}]
USER = {"role": "user", "content": "hi"}
CALLS = assistant(None, call("{}", "c1"))


def line(messages: list[Any], answer: Any, **extra: Any) -> str:
    request = {"model": "m", "messages": messages, "tools": FIND_TOOLS}
    return json.dumps({"request": request, "response": {"choices": [{"message": answer}]}, **extra})


HOSTILE = {
    "text-null": (
        [line([{"role": "user", "content": [{"type": "text", "text": None}]}], assistant("ok"))],
        "log.jsonl:1: request.messages[0].content[0].text: expected text, not null",
    ),
    "tool-calls-string": (
        [line([USER], {"role": "assistant", "content": None, "tool_calls": "find"})],
        "log.jsonl:1: response.choices[0].message.tool_calls: expected a list of tool calls, "
        "not a string",
    ),
    "400-digit-start-time": (
        [
            line([USER], assistant("ok")).replace(
                '{"request"', '{"start_time": ' + "9" * 400 + ', "request"'
            )
        ],
        "log.jsonl:1: start_time: a number of 400 digits is no time",
    ),
    "oversized-tool-result": (
        [
            line([USER], CALLS),
            line([USER, CALLS, tool("c1", "x" * 150_000)], assistant("done")),
        ],
        "log.jsonl: no scenario to build: log: exchange 2: messages[2] (the result of find, "
        "call c1): 150,000 characters; a scenario text holds at most 100,000",
    ),
}


@pytest.mark.parametrize("case", HOSTILE, ids=list(HOSTILE))
def test_a_hostile_log_is_one_clear_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, message = HOSTILE[case]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["scenarios", "import", str(path), "--scenario-dir", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert (code, out, err) == (2, "", f"schedbench scenarios: error: {tmp_path / message}\n")
