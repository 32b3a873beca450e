"""Scenarios from real traffic: a recording proxy, log import, and the scenario they build.

An agent's chat-completion traffic — live through ``schedbench record`` (``proxy``), or from a
gateway's JSONL log (``logs``) — becomes a list of ``Exchange``\\s (``exchange``), masked by a
``Redactor`` (``redact``); the agent reports what its tools did as ``ToolRun``\\s
(``observe``). ``build`` turns both into validated scenarios (``toolruns``: the tools'
behaviour) and ``write`` into YAML files; ``importer`` and ``record`` are the two commands.
Like the mock, this package is part of the referee: it never imports ``scheduler/`` or any
agent framework.
"""

from bench.traffic.build import BuildError, Built, build_scenarios
from bench.traffic.exchange import Exchange, ToolRun
from bench.traffic.logs import LogError, Traffic, read_log, read_traffic
from bench.traffic.redact import MASK, Redactor
from bench.traffic.write import scenario_yaml, write_scenario

__all__ = [
    "MASK",
    "BuildError",
    "Built",
    "Exchange",
    "LogError",
    "Redactor",
    "ToolRun",
    "Traffic",
    "build_scenarios",
    "read_log",
    "read_traffic",
    "scenario_yaml",
    "write_scenario",
]
