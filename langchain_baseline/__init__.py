"""LangChain agents, each built the way LangChain's own docs build it: four with their
defaults (below), and two production configurations (``production_agent`` /
``production_executor``: the built-in middleware and options, configured; ``custom_middleware``
/ ``custom_executor`` + ``guards``: the short custom code their users write where LangChain
has no built-in; ``docs/engines.md`` maps every setting to its scenario limit).

1. ``build_tool_calling_executor`` — ``AgentExecutor`` + ``create_tool_calling_agent`` from
   ``langchain_classic.agents``, with the docs' prompt (system, ``chat_history``
   placeholder, human, ``agent_scratchpad`` placeholder) and default settings. The
   executor streams its agent runnable by default (``stream_runnable=True``).
2. The same with ``stream_runnable=False`` — what a careful user picks for lower latency.
3. ``build_react_executor`` — ``AgentExecutor`` + ``create_react_agent`` with the standard
   ReAct prompt (``hwchase17/react``), inlined below because the hub is unreachable.
4. ``build_create_agent`` — LangChain 1.x ``langchain.agents.create_agent`` (a LangGraph
   graph), no middleware.

The model is ``ChatOpenAI(model=..., base_url=..., api_key=..., stream_usage=True,
timeout=..., max_retries=...)``; the caller may pass its own ``httpx2.AsyncClient`` as
``http_async_client`` (the openai SDK 3.x sends through httpx2). Tools are
``StructuredTool``\\s whose ``args_schema`` is the tool's JSON Schema dict, passed through
unchanged, so the LLM sees exactly that schema (``structured_tools``: LangChain then
validates nothing); the production configurations define them the docs' way instead, with a
pydantic ``args_schema`` generated from that schema (``validated_tools``: arguments checked
before the tool runs, the same schema bytes shown to the model). ReAct gets single-input
``Tool``\\s (see ``react_tools``).

How the scenario limits map onto LangChain's knobs with the defaults (``AgentSettings.from_limits``)
----------------------------------------------------------------------------------------------

=====================  ==============================  =================================
scenario limit         AgentExecutor (1-3)             create_agent (4)
=====================  ==============================  =================================
max_steps = N          ``max_iterations=N`` (N LLM     ``recursion_limit=2*N`` in the
                       calls, then a sentinel          run config (a model and a tools
                       string such as "Agent stopped   superstep per step: N LLM calls,
                       due to max iterations.")        then ``GraphRecursionError``)
llm_timeout_s          ``ChatOpenAI(timeout=...)``, per HTTP attempt (openai SDK)
max_retries            ``ChatOpenAI(max_retries=...)``: the openai SDK retries 408, 409,
                       429, 5xx, timeouts and connection errors, honouring Retry-After
run_timeout_s          ``max_execution_time`` (the     none; LangGraph's
(the run deadline)     only time knob; returns the     ``step_timeout`` bounds each
                       same sentinel string)           superstep, not the run
tool_timeout_s         **none**                        **none**
max_same_tool_calls    **none** (no loop guard)        **none** (``ToolCallLimitMiddleware``
                                                       caps calls per tool, not repeats)
breaker_threshold      **none** (no circuit breaker)   **none**
token_budget           **none**                        **none** (``SummarizationMiddleware``
                                                       shrinks context; it is no budget)
require_confirmation   **none** (the tool just runs)   ``HumanInTheLoopMiddleware`` needs a
                                                       checkpointer and a resume round
                                                       trip; not used
=====================  ==============================  =================================

Behaviour at the edges, with the defaults kept:

- A tool that raises: ``AgentExecutor`` re-raises anything that is not a ``ToolException``
  (``handle_tool_error`` only converts those), so the run ends with the exception;
  ``create_agent``'s ``ToolNode`` re-raises everything except argument-binding errors.
- A hung tool: nothing cuts it but the run deadline. Our tools are coroutines, so the
  deadline's cancellation stops them. A *sync* tool would run in an executor thread, and
  no timeout can stop that thread: it stays blocked (holding a pool slot) after the run
  has given up.
- An unknown tool: ``AgentExecutor`` answers with ``InvalidTool``'s observation ("X is not
  a valid tool, try one of [...]"); ``ToolNode`` with an error ``ToolMessage``.
- ReAct text that does not parse: ``handle_parsing_errors`` stays at its default (False),
  so the executor raises.

Modules: ``common`` (the model, the tools, the settings), ``executors`` (1-3, imports
``langchain_classic``), ``graph_agent`` (4, imports ``langchain.agents`` and LangGraph),
``production_executor`` + ``custom_executor`` (imports ``langchain_classic``),
``production_agent`` + ``custom_middleware`` (imports ``langchain.agents``), ``guards``
(neither). Each engine imports only its own stack, so import cost and module counts stay per
framework.
Importing the package forces LangSmith tracing off *before* LangChain is imported: with
tracing on and no network, LangChain blocks at exit trying to flush its traces. This
package imports LangChain only; it never imports ``scheduler`` (or ``bench``).
"""

import os
from importlib import import_module
from typing import Any

for _var in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING"):
    os.environ[_var] = "false"

_EXPORTS = {
    "AgentSettings": "common",
    "ToolLike": "common",
    "make_chat_model": "common",
    "react_tools": "common",
    "structured_tools": "common",
    "validated_tool": "common",
    "validated_tools": "common",
    "REACT_TEMPLATE": "executors",
    "STOPPED_SENTINELS": "executors",
    "build_react_executor": "executors",
    "build_tool_calling_executor": "executors",
    "react_inputs": "executors",
    "tool_calling_inputs": "executors",
    "build_create_agent": "graph_agent",
    "create_agent_config": "graph_agent",
    "create_agent_inputs": "graph_agent",
    "agent_config": "production_agent",
    "ainvoke_reviewed": "production_agent",
    "build_create_agent_prod": "production_agent",
    "builtin_middleware": "production_agent",
    "review": "production_agent",
    "make_custom_middleware": "custom_middleware",
    "inline_traceable_hops": "tracing",
    "build_tool_calling_executor_prod": "production_executor",
    "executor_config": "production_executor",
    "ExecutorGuards": "custom_executor",
    "RepeatedToolCallError": "guards",
    "TokenBudgetExceededError": "guards",
}


def __getattr__(name: str) -> Any:
    # lazy: an AgentExecutor engine must not pay for importing LangGraph, nor the reverse
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_baseline' has no attribute {name!r}")
    return getattr(import_module(f"langchain_baseline.{module}"), name)


__all__ = sorted(_EXPORTS)
