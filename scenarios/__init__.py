"""Scenario files (one YAML per scenario), their schema and their loader."""

from scenarios.handlers import HandlerError, HandlerPolicy, UntrustedHandler, handler_problems
from scenarios.loader import (
    BUILTIN_DIR,
    ScenarioError,
    load_scenario,
    load_scenarios,
    parse_scenario,
    scenario_files,
)
from scenarios.schema import (
    Expect,
    Fault,
    Limits,
    Needs,
    RecordedResult,
    Scenario,
    ScriptToolCall,
    ToolBehavior,
    ToolDef,
    Turn,
    TurnTiming,
)

__all__ = [
    "BUILTIN_DIR",
    "Expect",
    "Fault",
    "HandlerError",
    "HandlerPolicy",
    "Limits",
    "Needs",
    "RecordedResult",
    "Scenario",
    "ScenarioError",
    "ScriptToolCall",
    "ToolBehavior",
    "ToolDef",
    "Turn",
    "TurnTiming",
    "UntrustedHandler",
    "handler_problems",
    "load_scenario",
    "load_scenarios",
    "parse_scenario",
    "scenario_files",
]
