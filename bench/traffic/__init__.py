"""Scenarios from real traffic: a recording proxy, log import, and the scenario they build.

An agent's chat-completion traffic — live through ``schedbench record`` (``proxy``), or from a
gateway's JSONL log (``logs``) — becomes a list of ``Exchange``\\s (``exchange``), masked by a
``Redactor`` (``redact``); ``build`` turns the exchanges into validated scenarios and
``write`` into YAML files. Like the mock, this package is part of the referee: it never
imports ``scheduler/`` or any agent framework.
"""

from bench.traffic.build import BuildError, Built, build_scenarios
from bench.traffic.exchange import Exchange
from bench.traffic.logs import LogError, read_log
from bench.traffic.redact import MASK, Redactor
from bench.traffic.write import scenario_yaml, write_scenario

__all__ = [
    "MASK",
    "BuildError",
    "Built",
    "Exchange",
    "LogError",
    "Redactor",
    "build_scenarios",
    "read_log",
    "scenario_yaml",
    "write_scenario",
]
