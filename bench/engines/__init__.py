"""The engines: every contender behind one interface (see ``base.py``).

Each engine is declared once, in ``registry.py``; ``plugins.create_engine`` builds one by name
(plug-ins too). Engines are imported lazily by name, so a worker measuring the scheduler
never imports LangChain (import cost and module counts are part of what we measure).
"""

from __future__ import annotations

from bench.engines.base import Engine, RunContext, RunRecord, ToolCallRecord
from bench.engines.plugins import create_engine
from bench.engines.registry import ENGINE_NAMES, REGISTRY, engines_where
from bench.errors import UnknownEngineError

# engine name -> "module:Class"; the order is the report's order
ENGINES: dict[str, str] = {name: spec.target for name, spec in REGISTRY.items()}
# the engines that run in the harness's own interpreter (the others run in their own
# environments, bench.envs: only their workers can import them)
MAIN_ENGINES: tuple[str, ...] = engines_where(environment="main")


__all__ = [
    "ENGINES",
    "ENGINE_NAMES",
    "MAIN_ENGINES",
    "Engine",
    "RunContext",
    "RunRecord",
    "ToolCallRecord",
    "UnknownEngineError",
    "create_engine",
]
