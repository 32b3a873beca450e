"""The LangChain engines: ``langchain_baseline`` agents behind the engine interface.

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
- LangChain's limit exceptions and those of the production engines' custom guards →
  ``aborted`` with the harness's termination (``_LIMIT_EXCEPTIONS``):
  ``GraphRecursionError`` (create_agent past ``recursion_limit``) and
  ``ModelCallLimitExceededError`` → ``max_steps``; ``ToolCallLimitExceededError`` and
  ``RepeatedToolCallError`` (a loop guard) → ``tool_limit``; ``TokenBudgetExceededError``
  → ``token_budget``; the run deadline → ``aborted`` / ``timeout``;
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
``Final Answer:``), ``create_agent`` through ``astream(..., stream_mode=["messages",
"values"])`` (the first content of the last ``AIMessageChunk``). The answer is read from the
stream too: the executor's ``on_chain_end`` output, and create_agent's final state (the last
``values`` chunk, what ``ainvoke`` returns).

``lc-create-agent-prod-stream`` always runs that way (its ordinary run is the stream a UI
reads: ``stream_mode=["messages", "updates"]``, the answer from the last update), and so
records a TTFT on every run, as ``scheduler-stream`` does. ``lc-create-agent-prod-inline``
inlines langsmith's ``traceable`` thread hops for its runs (``lcb.inline_traceable_hops``).

The production engines (``-prod``, and their ``-builtins`` variants without the custom code)
answer a confirmation with the tool's scripted ``approval``: ``lc-create-agent-prod`` resumes
the paused graph with ``Command(resume=...)`` (``ainvoke_reviewed``; in a stream, the
interrupt arrives in ``"updates"``), ``lc-agentexecutor-prod``'s tools ask an approver. Their
breakers are closed before every run (a run stands for a fresh request).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import langchain_baseline as lcb
from bench.engines.common import Outcome, Prepared, RecordingEngine, run_timeout_s
from bench.engines.kit.runlog import current_log
from bench.engines.kit.tools import build_tools
from bench.engines.kit.ttft import react_answer_started
from bench.referee.transport import BASE_URL

# the harness's own guard, past the framework's deadline: only hit if the framework's fails
_GUARD_FACTOR, _GUARD_EXTRA_S = 1.5, 1.0


@dataclass
class Built:
    """What an engine's ``build`` makes of one scenario."""

    agent: Any
    inputs: dict[str, Any]
    config: dict[str, Any] | None = None
    # called before every run: close the breakers (a run stands for a fresh request)
    resets: tuple[Callable[[], None], ...] = ()


@dataclass
class LangChainPrepared(Prepared):
    agent: Any
    inputs: dict[str, Any]
    config: dict[str, Any] | None
    deadline_s: float
    approve: Callable[[str, dict[str, Any]], bool]  # the simulated user's scripted answer
    resets: tuple[Callable[[], None], ...] = ()


def approver(scenario: Any) -> Callable[[str, dict[str, Any]], bool]:
    """The simulated user: answers a confirmation with the tool's scripted ``approval``."""
    approvals = {tool.name: tool.approval == "approve" for tool in scenario.tools}
    return lambda name, _args: approvals[name]


# LangChain's limit exceptions and those of langchain_baseline's custom guards, by the
# termination they mean (base.TERMINATIONS); the modules are looked up only once loaded,
# so an AgentExecutor engine never imports LangGraph for it
_LIMIT_EXCEPTIONS = {
    ("langchain.agents.middleware.model_call_limit", "ModelCallLimitExceededError"): "max_steps",
    ("langchain.agents.middleware.tool_call_limit", "ToolCallLimitExceededError"): "tool_limit",
    ("langchain_baseline.guards", "RepeatedToolCallError"): "tool_limit",
    ("langchain_baseline.guards", "TokenBudgetExceededError"): "token_budget",
    ("langgraph.errors", "GraphRecursionError"): "max_steps",
}


def _limit_termination(exc: BaseException) -> str | None:
    for (module_name, class_name), termination in _LIMIT_EXCEPTIONS.items():
        module = sys.modules.get(module_name)
        if module is not None and isinstance(exc, getattr(module, class_name)):
            return termination
    return None


def _is_cut_answer(exc: BaseException) -> bool:
    guards = sys.modules.get("langchain_baseline.guards")
    return guards is not None and isinstance(exc, guards.TruncatedResponseError)


def classify_exception(exc: BaseException) -> Outcome:
    """Map an exception that escaped a LangChain agent onto a status and termination."""
    import openai
    from langchain_core.exceptions import OutputParserException

    text = f"{type(exc).__name__}: {exc}"[:2000]
    termination = _limit_termination(exc)
    if termination is not None:
        return Outcome("aborted", None, termination, error=text)
    if isinstance(exc, openai.APIError) or _is_cut_answer(exc):
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
        llm = self.chat_model(ctx, settings)
        history = [(m.role, m.content) for m in scenario.history]
        built = self.build(llm, build_tools(scenario), scenario, settings, history)
        return LangChainPrepared(
            ctx=ctx,
            accounting=self.accounting(ctx),
            agent=built.agent,
            inputs=built.inputs,
            config=built.config,
            deadline_s=deadline,
            approve=approver(scenario),
            resets=built.resets,
        )

    def chat_model(self, ctx: Any, settings: Any) -> Any:
        """The chat model, on a recording client (the one provider-specific step)."""
        base_url = ctx.base_url if ctx.transport == "loopback" else (ctx.base_url or BASE_URL)
        return lcb.make_chat_model(
            model=f"scenario/{ctx.scenario.name}",
            base_url=base_url,
            settings=settings,
            http_async_client=self.http_client(ctx, "httpx2"),
        )

    def build(
        self, llm: Any, tools: list[Any], scenario: Any, settings: Any, history: list[Any]
    ) -> Built:
        raise NotImplementedError

    def before_run(self, p: LangChainPrepared) -> None:
        for reset in p.resets:
            reset()

    async def invoke(self, p: LangChainPrepared) -> Any:
        """The ordinary call, as a user makes it."""
        return await p.agent.ainvoke(p.inputs, config=p.config)

    def answer(self, result: Any, elapsed_s: float, p: LangChainPrepared) -> Outcome:
        raise NotImplementedError

    async def execute(self, p: LangChainPrepared) -> Outcome:
        guard = p.deadline_s * _GUARD_FACTOR + _GUARD_EXTRA_S if self.framework_deadline else None
        started = time.perf_counter()
        ttft_ms = None
        try:
            async with asyncio.timeout(guard or p.deadline_s) as deadline:
                if p.ctx.stream_tokens or self.token_stream:
                    result, ttft_ms = await self.stream(p, started)
                else:
                    result = await self.invoke(p)
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
    token_stream = False  # True: every run consumes the user-facing stream (and has a TTFT)


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
    stream_runnable = True

    def build(
        self, llm: Any, tools: list[Any], scenario: Any, settings: Any, history: list[Any]
    ) -> Built:
        executor = lcb.build_tool_calling_executor(
            llm,
            lcb.structured_tools(tools),
            scenario.system_prompt,
            settings,
            stream_runnable=self.stream_runnable,
        )
        return Built(executor, lcb.tool_calling_inputs(scenario.user, history))


class AgentExecutorNoStreamEngine(AgentExecutorEngine):
    stream_runnable = False


class ReactEngine(_ExecutorEngine):
    react = True

    def build(
        self, llm: Any, tools: list[Any], scenario: Any, settings: Any, history: list[Any]
    ) -> Built:
        executor = lcb.build_react_executor(
            llm,
            lcb.react_tools(tools),
            scenario.system_prompt,
            settings,
            with_history=bool(history),
        )
        return Built(executor, lcb.react_inputs(scenario.user, history))


class _FirstToken:
    """When the first content of the latest AI message arrived (one message per LLM call;
    its chunks share the message id)."""

    def __init__(self) -> None:
        from langchain_core.messages import AIMessage, AIMessageChunk

        self.message_id: str | None = None
        self.at: float | None = None
        self._chunk, self._message = AIMessageChunk, AIMessage

    def see(self, message: Any) -> None:
        if isinstance(message, self._chunk):
            if message.id != self.message_id:
                self.message_id, self.at = message.id, None
            if self.at is None and message.content:
                self.at = time.perf_counter()
        elif isinstance(message, self._message) and message.id != self.message_id:
            # a model that did not stream: the whole message at once
            self.message_id, self.at = message.id, time.perf_counter()


def _last_message(update: dict[str, Any]) -> dict[str, Any] | None:
    """``{"messages": [m]}`` for the last message of an ``"updates"`` chunk (None: none)."""
    last = None
    for node_update in update.values():
        for values in node_update if isinstance(node_update, list) else [node_update]:
            messages = values.get("messages") if isinstance(values, dict) else None
            if messages:
                last = messages[-1]
    return None if last is None else {"messages": [last]}


class CreateAgentEngine(_LangChainEngine):
    framework_deadline = False  # LangGraph has no run deadline: the engine applies it
    # the token stream, and the final state after every step (the last one is the answer)
    stream_modes: tuple[str, ...] = ("messages", "values")

    def build(
        self, llm: Any, tools: list[Any], scenario: Any, settings: Any, history: list[Any]
    ) -> Built:
        agent = lcb.build_create_agent(llm, lcb.structured_tools(tools), scenario.system_prompt)
        return Built(
            agent,
            lcb.create_agent_inputs(scenario.user, history),
            lcb.create_agent_config(settings),
        )

    @contextlib.contextmanager
    def run_config(self, p: LangChainPrepared) -> Iterator[dict[str, Any] | None]:
        """The config of one run (the prepared one; a checkpointed agent adds its thread)."""
        yield p.config

    async def invoke(self, p: LangChainPrepared) -> Any:
        with self.run_config(p) as config:
            return await p.agent.ainvoke(p.inputs, config=config)

    async def stream(self, p: LangChainPrepared, started: float) -> tuple[Any, float | None]:
        """``astream(stream_mode=[...])``: tokens as they arrive (``"messages"``), and the
        graph's final state (the last ``"values"`` chunk) or, without ``"values"``, its last
        message (from the ``"updates"``, as a UI renders them); paused runs are resumed."""
        first_token = _FirstToken()
        final = None
        payload: Any = p.inputs
        with self.run_config(p) as config:
            while payload is not None:
                interrupts = None
                stream = p.agent.astream(payload, config, stream_mode=list(self.stream_modes))
                async for mode, chunk in stream:
                    if mode == "messages":
                        first_token.see(chunk[0])
                    elif mode == "values":
                        final = chunk
                    elif "__interrupt__" in chunk:  # "updates": a human-review interrupt
                        interrupts = chunk["__interrupt__"]
                    elif "values" not in self.stream_modes:
                        final = _last_message(chunk) or final
                payload = lcb.review(interrupts, p.approve) if interrupts else None
        if final is None:
            raise RuntimeError("the stream carried no state and no message")
        at = first_token.at
        return final, None if at is None else (at - started) * 1000

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


class CreateAgentProdEngine(CreateAgentEngine):
    custom = True  # False: the built-ins alone
    stream_modes: tuple[str, ...] = ("messages", "updates", "values")  # updates: interrupts

    def build(
        self, llm: Any, tools: list[Any], scenario: Any, settings: Any, history: list[Any]
    ) -> Built:
        tools = lcb.validated_tools(tools)
        prompt = scenario.system_prompt
        custom = lcb.make_custom_middleware(settings, tools, prompt) if self.custom else []
        confirm = [tool.name for tool in scenario.tools if tool.require_confirmation]
        agent = lcb.build_create_agent_prod(
            llm, tools, prompt, settings, confirm=confirm, custom=custom, streaming=self.streams
        )
        resets = tuple(m.reset for m in custom if hasattr(m, "reset"))
        config = lcb.agent_config(agent, settings)
        return Built(agent, lcb.create_agent_inputs(scenario.user, history), config, resets)

    @contextlib.contextmanager
    def run_config(self, p: LangChainPrepared) -> Iterator[dict[str, Any] | None]:
        """A checkpointed agent (human review) runs each request on a thread of its own;
        the finished thread is dropped, as a service expires them, so memory stays flat."""
        checkpointer = p.agent.checkpointer
        if checkpointer is None:
            yield p.config
            return
        thread_id = uuid.uuid4().hex
        try:
            yield {**(p.config or {}), "configurable": {"thread_id": thread_id}}
        finally:
            checkpointer.delete_thread(thread_id)

    async def invoke(self, p: LangChainPrepared) -> Any:
        with self.run_config(p) as config:
            return await lcb.ainvoke_reviewed(p.agent, p.inputs, config, p.approve)


class CreateAgentProdInlineEngine(CreateAgentProdEngine):
    async def invoke(self, p: LangChainPrepared) -> Any:
        with _langsmith_inlined():
            return await super().invoke(p)

    async def stream(self, p: LangChainPrepared, started: float) -> tuple[Any, float | None]:
        with _langsmith_inlined():
            return await super().stream(p, started)


_inlined_runs = 0  # runs of this process inside _langsmith_inlined


@contextlib.contextmanager
def _langsmith_inlined() -> Iterator[None]:
    """``lcb.inline_traceable_hops()`` for the duration of the runs that want it.

    A service calls it once at startup; the harness scopes it (counting the runs inside, so
    concurrent runs share it) because its tests run every engine in one process."""
    global _inlined_runs
    if _inlined_runs == 0:
        lcb.inline_traceable_hops()
    _inlined_runs += 1
    try:
        yield
    finally:
        _inlined_runs -= 1
        if _inlined_runs == 0:
            import langsmith

            langsmith.set_runtime_overrides()  # langsmith's default again


class CreateAgentProdStreamEngine(CreateAgentProdEngine):
    token_stream = True
    # the docs' stream to a UI: the tokens, and each step's update (interrupts included)
    stream_modes = ("messages", "updates")


class CreateAgentBuiltinsEngine(CreateAgentProdEngine):
    custom = False


class AgentExecutorProdEngine(_ExecutorEngine):
    custom = True  # False: the executor's own options alone

    def build(
        self, llm: Any, tools: list[Any], scenario: Any, settings: Any, history: list[Any]
    ) -> Built:
        guards = None
        if self.custom:
            confirm = [tool.name for tool in scenario.tools if tool.require_confirmation]
            guards = lcb.ExecutorGuards(settings, approver(scenario), confirm)
        executor = lcb.build_tool_calling_executor_prod(
            llm, tools, scenario.system_prompt, settings, guards=guards
        )
        return Built(
            executor,
            lcb.tool_calling_inputs(scenario.user, history),
            lcb.executor_config(guards),
            (guards.reset,) if guards else (),
        )


class AgentExecutorBuiltinsEngine(AgentExecutorProdEngine):
    custom = False
