"""The catalogue, declared once: every engine × customisation cell, its code, what it leans on.

A ``Cell`` names the function that implements it (``module:function``, one function per
cell so that ``bench.engines.codesize`` counts it), the internals it needs — ``()`` when it uses
only public, documented API, else the kinds of ``bench.catalogue.internals`` it relies on
(a test checks this against the source) — and a note on how it is done. A cell that cannot be
done with public API has no code (``build=None``) and says why in its note: that is a result.

The engines are the registry's names of the engine each family's catalogue is written for:
LangChain 1.x ``create_agent``, ``AgentExecutor`` (the docs' default), and our scheduler.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from bench.catalogue.customisations import CUSTOMISATIONS
from bench.catalogue.internals import Kind

# engine -> the module of its cells (and of its plain agent, ``plain``)
FAMILIES: dict[str, str] = {
    "lc-create-agent": "bench.catalogue.langchain_v1",
    "lc-agentexecutor": "bench.catalogue.agentexecutor",
    "scheduler": "bench.catalogue.scheduler",
    "openai-agents": "bench.catalogue.openai_agents",  # a peer: runs in its own environment
}
BASELINE = "plain"  # every family module's agent without a customisation


@dataclass(frozen=True)
class Cell:
    engine: str
    customisation: str
    note: str
    internals: tuple[Kind, ...] = ()
    implemented: bool = True  # False: not possible with public API (the note says why)

    @property
    def module(self) -> str:
        return FAMILIES[self.engine]

    @property
    def target(self) -> str | None:
        """``file.py::name`` for ``bench.engines.codesize`` (None when there is no code)."""
        if not self.implemented:
            return None
        return f"{self.module.replace('.', '/')}.py::{self.customisation}"

    @property
    def baseline_target(self) -> str:
        return f"{self.module.replace('.', '/')}.py::{BASELINE}"

    def build(self) -> Any:
        """The cell's ``build(kit) -> ask`` function."""
        return getattr(import_module(self.module), self.customisation)

    @property
    def needs_internals(self) -> bool:
        return bool(self.internals)


def _cells(engine: str, notes: dict[str, str]) -> tuple[Cell, ...]:
    return tuple(Cell(engine, c.key, notes[c.key]) for c in CUSTOMISATIONS)


CELLS: tuple[Cell, ...] = (
    *_cells(
        "lc-create-agent",
        {
            "veto_tool": "@wrap_tool_call answers the call with an error ToolMessage",
            "rewrite_args": "@wrap_tool_call with request.override(tool_call=...)",
            "stop_on_keyword": '@before_model(can_jump_to=["end"]) jumps to the end',
            "tool_timeouts": "@wrap_tool_call with asyncio.wait_for, per tool name",
            "inject_message": "@before_model returns the message to add to the state",
            "switch_model": "@wrap_model_call with request.override(model=...)",
            "user_budget": "@before_model / @after_model, the user from the runtime context "
            "(context_schema)",
            "retry_one_class": "built-in ModelRetryMiddleware(retry_on=(RateLimitError,)), "
            "ChatOpenAI(max_retries=0)",
            "redact_trace": "LangSmith's anonymizer on the tracer's Client",
        },
    ),
    *_cells(
        "lc-agentexecutor",
        {
            "veto_tool": "wraps each tool (StructuredTool.from_function): no tool hook",
            "rewrite_args": "wraps each tool (StructuredTool.from_function): no tool hook",
            "stop_on_keyword": "consumes executor.iter() and stops after the step",
            "tool_timeouts": "wraps each tool with asyncio.wait_for: no tool timeout option",
            "inject_message": "create_tool_calling_agent(message_formatter=...)",
            "switch_model": "the agent runnable composed by hand (LCEL), a RunnableLambda "
            "picks the model by step",
            "user_budget": "a call-time AsyncCallbackHandler (raise_error=True), the user in "
            "the config's metadata; the run ends with its exception",
            "retry_one_class": "the agent runnable composed by hand around "
            "model.with_retry(...), and stream_runnable=False (a streamed step is not retried)",
            "redact_trace": "LangSmith's anonymizer on the tracer's Client",
        },
    ),
    *_cells(
        "scheduler",
        {
            "veto_tool": "before_tool hook returns Veto",
            "rewrite_args": "before_tool hook returns Rewrite",
            "stop_on_keyword": "after_tool hook raises, AgentConfig(raise_hook_errors=True): "
            "the run ends FAILED (hook_error). RunHandle.cancel() from the hook is not "
            "enough: it acts at the next suspension, after the next LLM request was sent",
            "tool_timeouts": "ToolSpec.timeout per tool",
            "inject_message": "before_step hook appends to the run's messages",
            "switch_model": "wraps the ChatModel (no per-step model option)",
            "user_budget": "run(budget=Budget(max_total_tokens=left)) per request",
            "retry_one_class": "wraps the ChatModel, client max_retries=0 (the client's "
            "retry policy is one for all errors)",
            "redact_trace": "AgentConfig.trace_redact, a recursive regex over the values",
        },
    ),
    *_cells(
        "openai-agents",
        {
            "veto_tool": "a tool input guardrail (@tool_input_guardrail) returns reject_content",
            "rewrite_args": "wraps each FunctionTool's on_invoke_tool: guardrails cannot rewrite",
            "stop_on_keyword": "Agent(tool_use_behavior=a function) ends the run on the result",
            "tool_timeouts": "FunctionTool.timeout_seconds per tool",
            "inject_message": "RunConfig(call_model_input_filter=...) inserts it in each call",
            "switch_model": "a custom Model (its documented extension point) picks one per step",
            "user_budget": "RunHooks on_llm_start / on_llm_end, the user in the run context; the "
            "run ends with the hook's exception",
            "retry_one_class": "ModelSettings(retry=ModelRetrySettings(policy=retry_policies."
            "http_status([429])))",
            "redact_trace": "a TracingProcessor that exports each span redacted",
        },
    ),
)

BY_CELL: dict[tuple[str, str], Cell] = {(c.engine, c.customisation): c for c in CELLS}
