"""Scenarios as YAML files that load back to exactly the same scenario.

Multi-line text is written as a literal block, lists and mappings of short scalars on one
line (``gaps_ms``, ``required``, ``args``), everything else in block style, fields at their
defaults left out. ``scenario_yaml`` checks
its own output: parsed back, it must give the same scenario, value for value and type for
type (an ``int`` stays an ``int``, so the mock re-serialises arguments to the same bytes).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from scenarios import Scenario, parse_scenario

HEADER = (
    "# Recorded from real traffic (schedbench record / schedbench scenarios import).\n"
    "# Each script turn's timing is what the model took; run with --latency recorded to\n"
    "# play it back. Tool results are what the agent's real tools returned.\n"
)


class _Dumper(yaml.SafeDumper):
    pass


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_SHORT = 40  # characters: a collection of short scalars reads best on one line


def _short(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) <= _SHORT and "\n" not in value
    return value is None or isinstance(value, bool | int | float)


def _sequence(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.SequenceNode:
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    flow = numbers or all(_short(v) for v in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


def _mapping(dumper: yaml.SafeDumper, value: dict[Any, Any]) -> yaml.MappingNode:
    flow = bool(value) and len(value) <= 6 and all(_short(v) for v in value.values())
    return dumper.represent_mapping("tag:yaml.org,2002:map", value, flow_style=flow)


_Dumper.add_representer(str, _text)
_Dumper.add_representer(list, _sequence)
_Dumper.add_representer(dict, _mapping)


def _data(scenario: Scenario) -> dict[str, Any]:
    data = scenario.model_dump(mode="json", exclude_defaults=True)
    # always spelled out, even at their defaults: what a reader looks for first
    data["system_prompt"] = scenario.system_prompt
    data["expect"] = {"status": scenario.expect.status, **data.get("expect", {})}
    order = list(Scenario.model_fields)
    return {key: data[key] for key in order if key in data}


def scenario_yaml(scenario: Scenario) -> str:
    """The scenario as YAML text (a header comment first); raises if it would not round-trip."""
    text = HEADER + yaml.dump(
        _data(scenario), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100
    )
    again = parse_scenario(text)
    # key order and number types included: they decide the bytes the mock sends
    if json.dumps(again.model_dump(mode="json")) != json.dumps(scenario.model_dump(mode="json")):
        raise AssertionError(f"scenario {scenario.name}: its YAML does not load back the same")
    return text


def name_from(text: str, fallback: str = "recorded") -> str:
    """A scenario name (``[a-z0-9_]+``) made from a folder or file name."""
    name = re.sub(r"[^a-z0-9_]+", "_", text.lower()).strip("_")
    return name or fallback


def write_scenario(scenario: Scenario, directory: Path | str) -> Path:
    """Write ``directory/NAME.yaml`` atomically (a reader never sees half a file)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{scenario.name}.yaml"
    write_atomically(target, scenario_yaml(scenario))
    return target


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: a reader sees the old file or the new."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
