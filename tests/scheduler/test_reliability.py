"""Issue 26, the scheduler's part: a tool's BaseException, breakers and the caller's budget,
token counting that never blocks the loop on one user's data, bounded previews."""

from __future__ import annotations

import asyncio
import base64
import json
import random
import threading
from typing import Any, ClassVar

import httpx
import pytest

import scheduler.tokens
from scheduler import (
    AgentConfig,
    AgentStatus,
    Budget,
    LightweightAgent,
    OpenAIChatClient,
    RunFinished,
    RunHandle,
    TerminationReason,
    ToolSpec,
    tool,
)
from scheduler.tokens import count_message_tokens, count_request_tokens, count_tools_tokens
from scheduler.trace import preview

from .faults import BASE_URL, RoutingLLM, ask, status

S, R = AgentStatus, TerminationReason
T = scheduler.tokens  # the new names through the module: each test fails on its own before them
NO_ARGS = {"type": "object", "properties": {}}


@pytest.fixture
async def llm():
    routing = RoutingLLM()
    yield routing
    await routing.aclose()


# -- attack 1: a tool's BaseException is the tool's failure, never the service's -------------


class Custom(BaseException):
    """A BaseException a library might define (gevent's GreenletExit is one)."""


EXITS = [SystemExit(3), KeyboardInterrupt(), GeneratorExit(), Custom("boom")]


def _tool(kind: str, exc: BaseException) -> ToolSpec:
    async def async_bad() -> None:
        raise exc

    def sync_bad() -> None:
        raise exc

    handler = async_bad if kind == "async" else sync_bad
    return ToolSpec("bad", "Misbehaves.", NO_ARGS, handler, run_in_thread=kind == "thread")


async def _consume(agent: LightweightAgent, question: str) -> list[Any]:
    return [event async for event in agent.stream(question)]


@pytest.mark.parametrize("exc", EXITS, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("kind", ["async", "inline", "thread"])
@pytest.mark.parametrize("api", ["run", "stream"])
async def test_a_tools_base_exception_is_a_failed_tool_call(llm, api, kind, exc):
    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[_tool(kind, exc)])
    if api == "run":
        result = await agent.run(ask("bad"))
    else:
        events = await _consume(agent, ask("bad"))
        assert isinstance(events[-1], RunFinished)  # the stream always ends with RunFinished
        result = events[-1].result
    name = type(exc).__name__
    call = result.steps[0].tool_results[0]
    assert (result.status, call.status, call.content) == (
        S.COMPLETED,
        "error",
        f"Error: tool 'bad' failed: {name}",
    )
    assert result.content == f"done: {call.content[:40]}"  # the LLM read it and went on
    assert call.error is not None and call.error.cause is exc  # type: ignore[attr-defined]
    assert agent.breakers["bad"].failures == 1  # the tool failed: as for a threaded tool


async def test_a_hooks_base_exception_is_a_hook_error(llm):
    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    def veto(**_: Any) -> None:
        raise SystemExit("a hook called sys.exit()")

    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[echo])
    agent.on("before_tool", veto)
    result = await agent.run(ask("echo", text="hi"))
    assert (result.status, result.content) == (S.COMPLETED, "done: hi")
    assert [str(e) for e in result.hook_errors] == [
        "hook 'test_a_hooks_base_exception_is_a_hook_error.<locals>.veto' on before_tool "
        "raised SystemExit: a hook called sys.exit()"
    ]


async def test_an_approvers_base_exception_denies_the_call(llm):
    spec = ToolSpec("pay", "Pays.", NO_ARGS, lambda: "paid", require_confirmation=True)

    def approver(**_: Any) -> bool:
        raise KeyboardInterrupt

    agent = LightweightAgent(
        llm.client(), AgentConfig(token_budget=None), tools=[spec], approver=approver
    )
    result = await agent.run(ask("pay"))
    call = result.steps[0].tool_results[0]
    assert (result.status, call.status, call.content) == (
        S.COMPLETED,
        "denied",
        "Error: the user did not approve the call to 'pay': the approver failed: KeyboardInterrupt: ",
    )


class ExitingModel:
    """A ChatModel whose calls raise a BaseException (a broken plug-in)."""

    model = "exiting"

    def __init__(self, exc: BaseException):
        self.exc = exc

    async def complete(self, messages: Any, **_: Any) -> Any:
        raise self.exc

    async def complete_streaming(self, messages: Any, **_: Any) -> Any:
        raise self.exc


@pytest.mark.parametrize("exc", [SystemExit(3), GeneratorExit(), Custom("boom")], ids=repr)
async def test_a_chat_models_base_exception_fails_the_run(exc):
    agent = LightweightAgent(ExitingModel(exc), AgentConfig(token_budget=None))
    result = await agent.run("hi")
    events = await _consume(agent, "hi")
    assert isinstance(events[-1], RunFinished)
    detail = f"the chat model raised {type(exc).__name__}: {exc}"
    for outcome in (result, events[-1].result):
        assert (outcome.status, outcome.reason, outcome.detail) == (S.FAILED, R.LLM_ERROR, detail)


async def test_cancelling_the_caller_still_propagates_whatever_the_tool_turns_it_into(llm):
    entered = asyncio.Event()

    @tool
    async def stubborn() -> str:
        """Turns its cancellation into SystemExit."""
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise SystemExit("cleanup failed") from None
        return "never"

    agent = LightweightAgent(llm.client(), AgentConfig(token_budget=None), tools=[stubborn])
    task = asyncio.create_task(agent.run(ask("stubborn")))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    handle = RunHandle()
    entered.clear()
    task = asyncio.create_task(agent.run(ask("stubborn"), handle=handle))
    await entered.wait()
    handle.cancel()
    result = await task
    assert (result.status, result.reason, result.steps[0].tool_results) == (
        S.ABORTED,
        R.CANCELLED,
        [],
    )
    assert agent.breakers["stubborn"].failures == 0  # cancelled calls say nothing of the tool


# -- attack 3: a worker stopped by the caller's request budget is not a failing dependency -----


@pytest.mark.parametrize(
    ("budget", "reason"),
    [
        (Budget(max_steps=2), R.MAX_STEPS),
        (Budget(max_total_tokens=30), R.TOKEN_BUDGET),  # 12 tokens per mocked answer
        (Budget(max_depth=1), R.MAX_DEPTH),
    ],
    ids=["steps", "tokens", "depth"],
)
async def test_tight_request_budgets_do_not_open_a_workers_breaker(llm, budget, reason):
    @tool
    def step() -> str:
        """One step of the worker's job."""
        return "stepped"

    config = AgentConfig(token_budget=None)
    worker = LightweightAgent(
        llm.client(), AgentConfig(name="worker", token_budget=None), tools=[step]
    )
    boss = LightweightAgent(llm.client(), config, tools=[worker.as_tool()])
    question = ask("worker", task=ask("step"))
    for _ in range(3):  # three requests that give the worker too little
        result = await boss.run(question, budget=budget)
        assert (result.status, result.reason) == (S.ABORTED, reason)
    assert boss.breakers["worker"].failures == 0
    result = await boss.run(question)  # a request with room: the worker is still served
    call = result.steps[0].tool_results[0]
    assert (result.status, call.status, call.content) == (S.COMPLETED, "ok", "done: stepped")


async def test_a_worker_that_fails_by_itself_still_counts():
    broken = httpx.AsyncClient(transport=httpx.MockTransport(lambda _: status(400, "bad model")))
    routing = RoutingLLM()
    try:
        worker = LightweightAgent(
            OpenAIChatClient(base_url=BASE_URL, model="m", http_client=broken),
            AgentConfig(name="worker", token_budget=None),
        )
        boss = LightweightAgent(
            routing.client(), AgentConfig(token_budget=None), tools=[worker.as_tool()]
        )
        result = await boss.run(ask("worker", task="anything"))
    finally:
        await broken.aclose()
        await routing.aclose()
    call = result.steps[0].tool_results[0]
    assert (call.status, boss.breakers["worker"].failures) == ("error", 1)
    assert call.content.startswith(
        "Error: tool 'worker' failed: WorkerFailed: worker failed (llm_error)"
    )


# -- attack 4 and the loop stall: bounded, stoppable counting ---------------------------------


def test_no_cl100k_token_is_longer_than_max_token_chars():
    encoding = scheduler.tokens._encoding()
    special = {encoding.encode_single_token(s) for s in encoding.special_tokens_set}
    longest = 0
    for token in range(encoding.max_token_value + 1):
        if token not in special:
            try:
                longest = max(longest, len(encoding.decode_single_token_bytes(token)))
            except KeyError:  # an unassigned id
                continue
    assert longest == T.MAX_TOKEN_CHARS


CORPUS = [
    *"ab cdZ  \n\t\r0123456789's.,!?-_/{}\":;[]()<>|=+*&^%$#@~`\\",
    *"\u00a0\u3000\u4f60\u597d\u3002\uff0c\uff1f\u300c\u300d\u3005\u3007\U0001f600",
    *"\u00e9\u0301\x1c\x85\u00bd\u00b2\u0663\u2028",  # letters, marks, other numerals
    *("<|endoftext|>", "ll", "ve", "RE", "'S"),
]


def test_pieces_add_up_to_the_whole_text_exactly():
    encoding = scheduler.tokens._encoding()
    rng = random.Random(26)
    for _ in range(3_000):
        text = "".join(rng.choice(CORPUS) for _ in range(rng.randint(0, 120)))
        if rng.random() < 0.1:
            text += " \ud800x"  # a lone surrogate
        cut = list(T.pieces(text, rng.randint(1, 12)))
        assert "".join(cut) == text
        whole = len(encoding.encode_ordinary(text))
        assert sum(T.count_piece_tokens(piece) for piece in cut) == whole, repr(text)


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([{"id": i, "note": f"order A{i} shipped on time"} for i in range(20_000)]),
        json.dumps([{"id": i, "sku": f"A{i:07d}"} for i in range(20_000)], separators=(",", ":")),
        "\u4f60\u597d\u4e16\u754c\uff0c" * 100_000,  # Chinese prose: no spaces, CJK commas
        base64.b64encode(bytes(range(256)) * 2_000).decode(),
    ],
    ids=["json", "minified-json", "chinese", "base64"],
)
def test_pieces_are_small_for_real_texts(text):
    sizes = [len(p) for p in T.pieces(text)]
    assert len(text) > 20 * T.PIECE_CHARS and max(sizes) <= T.PIECE_CHARS + 40


def test_a_text_with_no_cut_point_stays_one_piece():
    assert list(T.pieces("x" * 100_000)) == ["x" * 100_000]


class SpyEncoding:
    """The real encoding, recording the length of every text it encodes."""

    def __init__(self) -> None:
        self.real = scheduler.tokens._encoding()
        self.lengths: list[int] = []

    def encode_ordinary(self, text: str) -> list[int]:
        self.lengths.append(len(text))
        return self.real.encode_ordinary(text)


@pytest.fixture
def spy(monkeypatch):
    encoding = SpyEncoding()
    monkeypatch.setattr(scheduler.tokens, "_encoding", lambda: encoding)
    return encoding


def _dump_agent(llm: RoutingLLM, text: str, **config: Any) -> LightweightAgent:
    @tool
    def dump() -> str:
        """A big dump."""
        return text

    return LightweightAgent(llm.client(), AgentConfig(**config), tools=[dump])


@pytest.mark.parametrize("mode", ["bounded", "exact"])
async def test_an_8mb_result_is_refused_without_tokenizing_it(llm, spy, mode):
    agent = _dump_agent(llm, "word " * 1_600_000, token_counting=mode)
    result = await agent.run(ask("dump"))
    assert max(spy.lengths) < 1_000  # the tool schema and the question, never the dump
    floor = sum(T.char_floor(m) for m in result.messages)  # the dump's share: 8 MB / 128
    floor += count_tools_tokens(agent._tool_schemas()) + 3
    assert (result.status, result.reason, result.detail) == (
        S.ABORTED,
        R.TOKEN_BUDGET,
        f"token budget 12000 exceeded (input_tokens={floor}, lower bound)",
    )
    assert floor > 8_000_000 // T.MAX_TOKEN_CHARS


async def test_a_1mb_result_is_counted_only_until_it_is_over_budget(llm, spy):
    agent = _dump_agent(llm, "word " * 200_000)  # 1 MB: its floor (7,813) fits 12,000
    result = await agent.run(ask("dump"))
    assert (result.status, result.reason) == (S.ABORTED, R.TOKEN_BUDGET)
    assert result.detail is not None and result.detail.endswith(", lower bound)")
    assert sum(spy.lengths) < 100_000  # ~60 KB of it counted, not 1 MB


async def test_a_large_message_counted_in_pieces_gives_the_exact_count(llm):
    text = json.dumps([{"id": i, "note": f"order A{i} shipped"} for i in range(30_000)])
    agent = _dump_agent(llm, text, token_budget=10_000_000, token_counting="exact")
    result = await agent.run(ask("dump"))
    request = result.messages[:-1]  # what the second request sent
    assert result.ok and len(text) > 20 * T.PIECE_CHARS
    assert result.steps[1].input_tokens == count_request_tokens(request, agent._tool_schemas())
    assert count_message_tokens(request[-1]) > 100_000


class BlockingEncoding:
    """The real encoding for short texts; a long one counts a token per character, and the
    first long one blocks until released."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.real = scheduler.tokens._encoding()
        self.loop = loop
        self.started = asyncio.Event()
        self.release = threading.Event()
        self.long: list[int] = []

    def encode_ordinary(self, text: str) -> list[int]:
        if len(text) > 1_000:
            self.long.append(len(text))
            if len(self.long) == 1:
                self.loop.call_soon_threadsafe(self.started.set)
                self.release.wait(30)
            return [0] * len(text)
        return self.real.encode_ordinary(text)


async def test_counting_stops_when_the_run_is_cancelled(llm, monkeypatch):
    loop = asyncio.get_running_loop()
    encoding = BlockingEncoding(loop)
    monkeypatch.setattr(scheduler.tokens, "_encoding", lambda: encoding)
    big = "word " * 200_000
    agent = LightweightAgent(
        llm.client(), AgentConfig(token_budget=10_000_000, token_counting="exact")
    )
    handle = RunHandle()
    task = asyncio.create_task(agent.run(big, handle=handle))
    await encoding.started.wait()  # the worker thread is counting the first piece
    handle.cancel()
    result = await task
    assert (result.status, result.reason) == (S.ABORTED, R.CANCELLED)
    encoding.release.set()
    await loop.shutdown_default_executor()  # waits for the counting thread to return
    assert len(encoding.long) == 1  # one piece, then it stopped
    assert encoding.long[0] < len(big) // 50


# -- trace previews are bounded by what they show ----------------------------------------------


def _reference_preview(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def test_preview_reads_only_the_start_of_a_long_text_and_says_the_same():
    rng = random.Random(5)
    texts = ["", "   ", "a" * 500, " " * 5_000 + "late start", "x" + " " * 3_000 + "y" * 400]
    texts += [
        "".join(rng.choice("ab  \n\t.") for _ in range(rng.randint(0, 900))) for _ in range(300)
    ]
    for text in texts:
        for limit in (5, 40, 160):
            assert preview(text, limit) == _reference_preview(text, limit), (text[:50], limit)


class CountedStr(str):
    """A tool result that records whoever splits all of it."""

    splits: ClassVar[list[int]] = []

    def split(self, *args: Any, **kwargs: Any) -> list[str]:
        CountedStr.splits.append(len(self))
        return super().split(*args, **kwargs)


async def test_an_aborted_runs_summary_does_not_process_a_whole_5mb_result(llm):
    CountedStr.splits = []
    text = "rows: " + "word " * 1_000_000
    agent = _dump_agent(
        llm,
        CountedStr(text),
        token_budget=None,
        max_steps=1,
        summarize_on_max_steps=False,
    )
    result = await agent.run(ask("dump"))
    assert (result.status, result.reason) == (S.ABORTED, R.MAX_STEPS)
    assert result.content == (
        "Stopped before a final answer (max_steps: max_steps 1 reached without a final answer).\n"
        f"What was gathered:\n- dump(): {_reference_preview(text, 160)}"
    )
    assert CountedStr.splits == []


async def test_memory_trims_a_huge_turn_without_counting_it_on_the_loop(llm, spy):
    agent = _dump_agent(llm, "word " * 400_000, memory=True, memory_max_tokens=100)
    after: list[int] = []

    def from_step_2(state: Any, step: int) -> None:
        if step == 2:
            spy.lengths.clear()

    agent.on("before_step", from_step_2)
    agent.on("on_complete", lambda state, result: after.extend(spy.lengths))  # after the trim
    result = await agent.run(ask("dump"))
    assert (result.status, result.reason) == (S.ABORTED, R.TOKEN_BUDGET)  # 2 MB > 12,000
    assert [m["role"] for m in agent.memory.messages] == ["user", "assistant", "tool"]
    assert after and max(after) < 1_000  # neither the budget check nor the trim counted 2 MB
