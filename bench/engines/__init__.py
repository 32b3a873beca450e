"""The engines: every contender behind one interface (see ``base.py``).

Engines are imported lazily by name, so a worker measuring the scheduler never imports
LangChain (import cost and module counts are part of what we measure).
"""

from __future__ import annotations

import importlib

from bench.engines.base import Engine, RunContext, RunRecord, ToolCallRecord

# engine name -> "module:Class"; the order is the report's order
ENGINES: dict[str, str] = {
    "raw": "bench.engines.raw:RawEngine",
    "scheduler": "bench.engines.scheduler_engine:SchedulerEngine",
    "scheduler-stream": "bench.engines.scheduler_engine:SchedulerStreamEngine",
    "lc-agentexecutor": "bench.engines.langchain_engines:AgentExecutorEngine",
    "lc-agentexecutor-nostream": "bench.engines.langchain_engines:AgentExecutorNoStreamEngine",
    "lc-react": "bench.engines.langchain_engines:ReactEngine",
    "lc-create-agent": "bench.engines.langchain_engines:CreateAgentEngine",
}
ENGINE_NAMES: tuple[str, ...] = tuple(ENGINES)


class UnknownEngineError(ValueError):
    def __init__(self, name: str):
        super().__init__(f"unknown engine {name!r}; valid engines: {', '.join(ENGINE_NAMES)}")


def create_engine(name: str) -> Engine:
    """Import and build the engine called ``name``."""
    if name not in ENGINES:
        raise UnknownEngineError(name)
    module_name, class_name = ENGINES[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)()


__all__ = [
    "ENGINES",
    "ENGINE_NAMES",
    "Engine",
    "RunContext",
    "RunRecord",
    "ToolCallRecord",
    "UnknownEngineError",
    "create_engine",
]
