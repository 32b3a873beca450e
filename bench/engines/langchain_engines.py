"""The four LangChain engines: ``langchain_baseline`` agents behind the engine interface.

Each ``prepare`` builds the scenario's tools, a ``ChatOpenAI`` on a recording ``httpx2``
client (in-process: served by the mock, no sockets; loopback: a socket transport to the
mock server) and the agent — all outside the timed region. ``execute`` invokes the agent
once with ``ainvoke``, exactly as a user would, and maps how it ended onto an honest
status:

- an answer → ``completed`` / ``stop``; an empty answer (what both executors and
  create_agent return when the model's tool call had malformed JSON arguments and was
  dropped as an ``invalid_tool_call``) → ``failed`` / ``empty_answer`` (create_agent:
  ``invalid_tool_call``, it keeps the message);
- ``AgentExecutor``'s sentinel strings ("Agent stopped due to max iterations.", ...) →
  ``aborted`` with ``max_steps``, or ``timeout`` when the run deadline had passed
  (the sentinel is the same string for both; the clock tells them apart);
- ``GraphRecursionError`` (create_agent past ``recursion_limit``) → ``aborted`` /
  ``max_steps``; the run deadline → ``aborted`` / ``timeout``;
- an openai SDK error after its retries → ``failed`` / ``llm_error``;
- a tool's own exception escaping the agent (LangChain's default) → ``failed`` /
  ``tool_error``; unparseable ReAct text → ``failed`` / ``parse_error``;
- anything else → ``error`` with the exception text.

LLM calls, tool calls and tokens come from the recording transport and the tools, never
from LangChain's own account (intermediate steps, callbacks).

With ``RunContext.stream_tokens``, ``execute`` consumes the framework's user-facing token
stream instead, as a chat UI would, and records the time to the first token of the final
answer (``ttft_ms``): the executors through ``astream_events(..., version="v2")`` (the
``on_chat_model_stream`` chunks of the last LLM call; for ReAct, the first token after
``Final Answer:``), ``create_agent`` through ``astream(..., stream_mode="messages")`` (the
first content of the last ``AIMessageChunk``). The answer is read from the stream too: the
executor's ``on_chain_end`` output, and create_agent's last message rebuilt from its chunks.
"""

from __future__ import annotations

import asyncio
import functools
import operator
import sys
import time
from dataclasses import dataclass
from typing import Any

import langchain_baseline as lcb
from bench.engines.common import Outcome, Prepared, RecordingEngine, run_timeout_s
from bench.mockllm.transport import BASE_URL
from bench.recording import current_log
from bench.tools import build_tools
from bench.ttft import react_answer_started

# the harness's own guard, past the framework's deadline: only hit if the framework's fails
_GUARD_FACTOR, _GUARD_EXTRA_S = 1.5, 1.0


@dataclass
class LangChainPrepared(Prepared):
    agent: Any
    inputs: dict[str, Any]
    config: dict[str, Any] | None
    deadline_s: float


def classify_exception(exc: BaseException) -> Outcome:
    """Map an exception that escaped a LangChain agent onto a status and termination."""
    import openai
    from langchain_core.exceptions import OutputParserException

    text = f"{type(exc).__name__}: {exc}"[:2000]
    # only a LangGraph engine can raise it; the executors' engines never import LangGraph
    graph_errors = sys.modules.get("langgraph.errors")
    if graph_errors is not None and isinstance(exc, graph_errors.GraphRecursionError):
        return Outcome("aborted", None, "max_steps", error=text)
    if isinstance(exc, openai.APIError):
        return Outcome("failed", None, "llm_error", error=text)
    failed_tools = {t.error for t in current_log().tools if not t.ok}
    if text in failed_tools:
        return Outcome("failed", None, "tool_error", error=text)
    if isinstance(exc, OutputParserException) or (
        isinstance(exc, ValueError) and "output parsing error" in str(exc)
    ):
        return Outcome("failed", None, "parse_error", error=text)
    return Outcome("error", None, type(exc).__name__, error=text)


class _LangChainEngine(RecordingEngine):
    """Shared prepare/execute; subclasses build their agent and read its answer."""

    uses_history_text = False

    async def prepare(self, ctx: Any) -> LangChainPrepared:
        scenario = ctx.scenario
        deadline = run_timeout_s(ctx)
        settings = lcb.AgentSettings.from_limits(scenario.limits, run_timeout_s=deadline)
        base_url = ctx.base_url if ctx.transport == "loopback" else (ctx.base_url or BASE_URL)
        llm = lcb.make_chat_model(
            model=f"scenario/{scenario.name}",
            base_url=base_url,
            settings=settings,
            http_async_client=self.http_client(ctx, "httpx2"),
        )
        history = [(m.role, m.content) for m in scenario.history]
        agent, inputs, config = self.build(llm, build_tools(scenario), scenario, settings, history)
        return LangChainPrepared(
            ctx=ctx,
            accounting=self.accounting(ctx),
            agent=agent,
            inputs=inputs,
            config=config,
            deadline_s=deadline,
        )

    def build(
        self, llm: Any, tools: list[Any], scenario: Any, settings: Any, history: list[Any]
    ) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
        raise NotImplementedError

    def answer(self, result: Any, elapsed_s: float, p: LangChainPrepared) -> Outcome:
        raise NotImplementedError

    async def execute(self, p: LangChainPrepared) -> Outcome:
        guard = p.deadline_s * _GUARD_FACTOR + _GUARD_EXTRA_S if self.framework_deadline else None
        started = time.perf_counter()
        ttft_ms = None
        try:
            async with asyncio.timeout(guard or p.deadline_s) as deadline:
                if p.ctx.stream_tokens:
                    result, ttft_ms = await self.stream(p, started)
                else:
                    result = await p.agent.ainvoke(p.inputs, config=p.config)
        except TimeoutError as exc:
            if deadline.expired():
                return Outcome(
                    "aborted",
                    None,
                    "timeout",
                    error=f"run deadline {p.deadline_s:g}s exceeded",
                    extra={"cut_by": "harness"},
                )
            return classify_exception(exc)
        except Exception as exc:
            return classify_exception(exc)
        outcome = self.answer(result, time.perf_counter() - started, p)
        if outcome.status == "completed":
            outcome.ttft_ms = ttft_ms
        return outcome

    async def stream(self, p: LangChainPrepared, started: float) -> tuple[Any, float | None]:
        """Run through the user-facing token stream: (what ``ainvoke`` returns, TTFT ms)."""
        raise NotImplementedError

    framework_deadline = True  # the framework enforces the run deadline itself


def _answered(text: Any) -> Outcome:
    """A normal return: completed, unless the "answer" is empty (nothing was answered)."""
    if not isinstance(text, str) or not text.strip():
        return Outcome(
            "failed",
            text if isinstance(text, str) else None,
            "empty_answer",
            error="the agent returned an empty answer",
        )
    return Outcome("completed", text, "stop")


class _ExecutorEngine(_LangChainEngine):
    react = False  # the answer is the text after "Final Answer:" of the last LLM call

    async def stream(self, p: LangChainPrepared, started: float) -> tuple[Any, float | None]:
        first = None  # when the first answer token of the latest LLM call arrived
        text = ""  # ReAct: that call's text so far
        output = None
        events = p.agent.astream_events(p.inputs, config=p.config, version="v2")
        async for event in events:
            kind = event["event"]
            if kind == "on_chat_model_stream":
                if first is None:
                    content = event["data"]["chunk"].content
                    if not isinstance(content, str):
                        content = event["data"]["chunk"].text
                    if content:
                        if not self.react:
                            first = time.perf_counter()
                        else:
                            text += content
                            if react_answer_started(text):
                                first = time.perf_counter()
            elif kind == "on_chat_model_start":
                first, text = None, ""  # a new LLM call: only the last one's answer counts
            elif kind == "on_chain_end" and not event["parent_ids"]:
                output = event["data"]["output"]
        if output is None:
            raise RuntimeError("astream_events ended without the executor's on_chain_end")
        return output, None if first is None else (first - started) * 1000

    def answer(self, result: Any, elapsed_s: float, p: LangChainPrepared) -> Outcome:
        output = result.get("output")
        if output in lcb.STOPPED_SENTINELS:
            timed_out = elapsed_s >= p.deadline_s
            return Outcome(
                "aborted",
                None,
                "timeout" if timed_out else "max_steps",
                error=output,
                extra={"cut_by": "framework"},
            )
        return _answered(output)


class AgentExecutorEngine(_ExecutorEngine):
    name = "lc-agentexecutor"
    description = "langchain_classic AgentExecutor + create_tool_calling_agent, defaults (streams)"
    streams = True
    stream_runnable = True

    def build(self, llm, tools, scenario, settings, history):
        executor = lcb.build_tool_calling_executor(
            llm,
            lcb.structured_tools(tools),
            scenario.system_prompt,
            settings,
            stream_runnable=self.stream_runnable,
        )
        return executor, lcb.tool_calling_inputs(scenario.user, history), None


class AgentExecutorNoStreamEngine(AgentExecutorEngine):
    name = "lc-agentexecutor-nostream"
    description = "the same AgentExecutor with stream_runnable=False (LangChain tuned)"
    streams = False
    stream_runnable = False


class ReactEngine(_ExecutorEngine):
    name = "lc-react"
    description = (
        "langchain_classic AgentExecutor + create_react_agent (text ReAct, hwchase17/react)"
    )
    react = True
    streams = True  # AgentExecutor streams its agent by default (stream_runnable=True)

    def build(self, llm, tools, scenario, settings, history):
        executor = lcb.build_react_executor(
            llm,
            lcb.react_tools(tools),
            scenario.system_prompt,
            settings,
            with_history=bool(history),
        )
        return executor, lcb.react_inputs(scenario.user, history), None


class CreateAgentEngine(_LangChainEngine):
    name = "lc-create-agent"
    description = "LangChain 1.x langchain.agents.create_agent (LangGraph), no middleware"
    framework_deadline = False  # LangGraph has no run deadline: the engine applies it

    def build(self, llm, tools, scenario, settings, history):
        agent = lcb.build_create_agent(llm, lcb.structured_tools(tools), scenario.system_prompt)
        return (
            agent,
            lcb.create_agent_inputs(scenario.user, history),
            lcb.create_agent_config(settings),
        )

    async def stream(self, p: LangChainPrepared, started: float) -> tuple[Any, float | None]:
        from langchain_core.messages import AIMessage, AIMessageChunk

        message_id = None  # the latest AI message (one per LLM call)
        chunks: list[Any] = []  # its chunks
        first = None  # when its first content arrived
        stream = p.agent.astream(p.inputs, config=p.config, stream_mode="messages")
        async for message, _metadata in stream:
            if isinstance(message, AIMessageChunk):
                if message.id != message_id:
                    message_id, chunks, first = message.id, [], None
                chunks.append(message)
                if first is None and message.content:
                    first = time.perf_counter()
            elif isinstance(message, AIMessage) and message.id != message_id:
                # a model that did not stream: the whole message at once
                message_id, chunks, first = message.id, [message], time.perf_counter()
        if not chunks:
            raise RuntimeError("the messages stream carried no AI message")
        last = chunks[0] if len(chunks) == 1 else functools.reduce(operator.add, chunks)
        return {"messages": [last]}, None if first is None else (first - started) * 1000

    def answer(self, result: Any, elapsed_s: float, p: LangChainPrepared) -> Outcome:
        last = result["messages"][-1]
        if getattr(last, "invalid_tool_calls", None):
            # the model's tool call did not parse: LangGraph ends the run as if answered
            return Outcome(
                "failed",
                last.text,
                "invalid_tool_call",
                error=f"run ended on an invalid tool call: {last.invalid_tool_calls[0]}"[:2000],
            )
        if getattr(last, "tool_calls", None):
            return Outcome("error", None, "unexpected_end", error="ended on a tool call")
        return _answered(last.text)
