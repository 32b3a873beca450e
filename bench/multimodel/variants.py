"""What switching an engine from OpenAI to Anthropic takes: the provider-specific code,
written once per provider, and the engines built with it.

Each engine family builds its chat model in one function per provider, written as that
framework's users write it: ``langchain_openai`` / ``langchain_anthropic`` (``ChatOpenAI``
/ ``ChatAnthropic`` from ``langchain-anthropic``) and ``scheduler_openai`` /
``scheduler_anthropic`` (``OpenAIChatClient`` / ``AnthropicChatClient``). Everything else
is the benchmark's own engine (``bench.engines``) unchanged — the agent, its prompt, its
tools, its limits, how its answer is read — so a variant answers one question: does the
same code base run on the other provider, with only these lines changed?

Where it does not, a **fixed** variant adds the code it took, written as a copy of the
engine method it changes plus the change (``executor_answer``: ``AgentExecutor`` returns
the last message's ``content``, which ``ChatAnthropic`` streams as a list of content
blocks, not a string), so that the statement diff (``bench.engines.statement_diff``) of
every pair in ``Variant.code`` is exactly what a user changes.

The endpoint a provider lives at is configuration, not code: the check passes each variant
the mock's base URL in the shape its client takes (``…/v1`` for OpenAI clients, the host
for Anthropic's).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import langchain_baseline as lcb
from bench.engines.base import Engine
from bench.engines.common import Outcome
from bench.engines.langchain_engines import (
    AgentExecutorEngine,
    AgentExecutorNoStreamEngine,
    CreateAgentEngine,
    _answered,
)
from bench.engines.scheduler_engine import SchedulerEngine, SchedulerStreamEngine
from bench.model.mock import PLACEHOLDER_KEY

API_KEY = PLACEHOLDER_KEY  # the mock accepts any key
HERE = "bench/multimodel/variants.py"
EXECUTOR_ANSWER = "bench/engines/langchain_engines.py::_ExecutorEngine.answer"

# -- the provider-specific code, once per provider -----------------------------------------


def langchain_openai(model: str, base_url: str, timeout_s: float, max_retries: int) -> Any:
    """LangChain's chat model on OpenAI (as ``langchain_baseline.make_chat_model``)."""
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=API_KEY,
        timeout=timeout_s,
        max_retries=max_retries,
        stream_usage=True,
    )


def langchain_anthropic(model: str, base_url: str, timeout_s: float, max_retries: int) -> Any:
    """LangChain's chat model on Anthropic (``langchain-anthropic``)."""
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(
        model=model,
        base_url=base_url,
        api_key=API_KEY,
        timeout=timeout_s,
        max_retries=max_retries,
    )


def scheduler_openai(model: str, base_url: str, timeout_s: float, max_retries: int) -> Any:
    """Our scheduler's chat client on OpenAI."""
    from scheduler import OpenAIChatClient

    return OpenAIChatClient(
        base_url=base_url,
        model=model,
        api_key=API_KEY,
        timeout=timeout_s,
        max_retries=max_retries,
    )


def scheduler_anthropic(model: str, base_url: str, timeout_s: float, max_retries: int) -> Any:
    """Our scheduler's chat client on Anthropic (``scheduler.anthropic``)."""
    from scheduler import AnthropicChatClient

    return AnthropicChatClient(
        base_url=base_url,
        model=model,
        api_key=API_KEY,
        timeout=timeout_s,
        max_retries=max_retries,
    )


def executor_answer(self: Any, result: Any, elapsed_s: float, p: Any) -> Outcome:
    """``_ExecutorEngine.answer`` with the change ChatAnthropic needs: the executor's
    ``output`` is the last message's content, a list of content blocks when it streamed."""
    output = result.get("output")
    if isinstance(output, list):
        output = "".join(block.get("text", "") for block in output if block.get("type") == "text")
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


# -- the engines built with it -------------------------------------------------------------

ModelFactory = Callable[[str, str, float, int], Any]


def answer_shape(result: Any) -> str:
    """What the agent returned as its answer, in words: ``text``, or e.g. ``a list of 1
    content block (text)`` (the executor's ``output``; create_agent's last message)."""
    if isinstance(result, dict) and "output" in result:
        value = result["output"]
    elif isinstance(result, dict) and result.get("messages"):
        value = getattr(result["messages"][-1], "content", None)
    else:
        value = result
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        kinds = sorted({str(b.get("type")) for b in value if isinstance(b, dict)})
        plural = "s" if len(value) != 1 else ""
        return f"a list of {len(value)} content block{plural} ({', '.join(kinds)})"
    return type(value).__name__


def _langchain(base: type[Engine], factory: ModelFactory, **methods: Any) -> type[Engine]:
    def chat_model(self: Any, ctx: Any, settings: Any) -> Any:
        model = f"scenario/{ctx.scenario.name}"
        return factory(model, ctx.base_url, settings.request_timeout_s, settings.max_retries)

    reader = methods.get("answer", base.answer)  # type: ignore[attr-defined]

    def answer(self: Any, result: Any, elapsed_s: float, p: Any) -> Outcome:
        # instrumentation, not the user's code: note the shape of what the agent returned
        outcome = reader(self, result, elapsed_s, p)
        outcome.extra["answer_shape"] = answer_shape(result)
        return outcome

    name = f"{base.__name__}Via{factory.__name__}"
    return type(name, (base,), {"chat_model": chat_model, "answer": answer})


def _scheduler(base: type[Engine], factory: ModelFactory) -> type[Engine]:
    def chat_model(self: Any, ctx: Any) -> Any:
        limits = ctx.scenario.limits
        model = f"scenario/{ctx.scenario.name}"
        return factory(model, ctx.base_url, limits.llm_timeout_s, limits.max_retries)

    return type(f"{base.__name__}Via{factory.__name__}", (base,), {"chat_model": chat_model})


@dataclass(frozen=True)
class Variant:
    """One engine on one provider. ``code``: (the OpenAI code, this variant's code) pairs of
    targets whose statement diff is the switch; empty for the OpenAI baseline."""

    engine: str  # the benchmark engine it is (registry name: its expectations apply)
    provider: str  # openai | anthropic
    build: type[Engine]
    fixed: bool = False  # True: more than the chat model changed
    code: tuple[tuple[str, str], ...] = ()
    note: str = ""

    @property
    def label(self) -> str:
        return f"{self.engine} on {self.provider}" + (" (fixed)" if self.fixed else "")


_LC_SWITCH = ((f"{HERE}::langchain_openai", f"{HERE}::langchain_anthropic"),)
_SCHEDULER_SWITCH = ((f"{HERE}::scheduler_openai", f"{HERE}::scheduler_anthropic"),)
_ANSWER_FIX = ((EXECUTOR_ANSWER, f"{HERE}::executor_answer"),)
_FIX_NOTE = "reads the answer from ChatAnthropic's content blocks (the executor streams)"


def _pair(
    engine: str,
    base: type[Engine],
    wrap: Callable[..., type[Engine]],
    factories: tuple[ModelFactory, ModelFactory],
    switch: tuple[tuple[str, str], ...],
) -> list[Variant]:
    openai, anthropic = factories
    return [
        Variant(engine, "openai", wrap(base, openai)),
        Variant(engine, "anthropic", wrap(base, anthropic), code=switch),
    ]


_LC = (langchain_openai, langchain_anthropic)
_SCHED = (scheduler_openai, scheduler_anthropic)

VARIANTS: tuple[Variant, ...] = (
    *_pair("lc-create-agent", CreateAgentEngine, _langchain, _LC, _LC_SWITCH),
    *_pair("lc-agentexecutor", AgentExecutorEngine, _langchain, _LC, _LC_SWITCH),
    Variant(
        "lc-agentexecutor",
        "anthropic",
        _langchain(AgentExecutorEngine, langchain_anthropic, answer=executor_answer),
        fixed=True,
        code=_LC_SWITCH + _ANSWER_FIX,
        note=_FIX_NOTE,
    ),
    *_pair("lc-agentexecutor-nostream", AgentExecutorNoStreamEngine, _langchain, _LC, _LC_SWITCH),
    *_pair("scheduler", SchedulerEngine, _scheduler, _SCHED, _SCHEDULER_SWITCH),
    *_pair("scheduler-stream", SchedulerStreamEngine, _scheduler, _SCHED, _SCHEDULER_SWITCH),
)
ENGINES = tuple(dict.fromkeys(v.engine for v in VARIANTS))
