"""Scenario files (one YAML per scenario), their schema and their loader."""

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
    "Limits",
    "RecordedResult",
    "Scenario",
    "ScenarioError",
    "ScriptToolCall",
    "ToolBehavior",
    "ToolDef",
    "Turn",
    "TurnTiming",
    "load_scenario",
    "load_scenarios",
    "parse_scenario",
    "scenario_files",
]
