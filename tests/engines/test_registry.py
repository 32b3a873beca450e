"""The engine registry is the one place an engine is declared: every part must know each
engine from it, so a new entry cannot be missing anywhere."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from bench.debuggability.modes import ENGINE_MODES, MODES
from bench.engines import ENGINES, create_engine
from bench.engines.registry import ENGINE_NAMES, REGISTRY, counterpart, engines_where, spec
from bench.envs import MAIN, environments
from bench.report.frames import ENGINE_ORDER, family, is_langchain
from bench.report.palette import STYLES
from bench.runner.phases.footprint import ENGINE_STACKS

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_every_part_knows_the_engine(name: str) -> None:
    entry = spec(name)
    assert ENGINES[name] == entry.target
    assert name in ENGINE_ORDER and name in STYLES and name in ENGINE_STACKS
    assert set(ENGINE_MODES[name]) <= set(MODES)
    # the debug capture runs in this interpreter: every main-environment engine has a mode
    assert bool(ENGINE_MODES[name]) == (entry.environment == MAIN)
    assert family(name) == entry.family_label
    assert is_langchain(name) == (entry.family == "langchain")
    assert entry.environment == MAIN or entry.environment in environments()
    if entry.outcome_only:
        assert spec(entry.variant_of).environment == entry.environment
    module = entry.target.split(":")[0]
    assert importlib.util.find_spec(module) is not None  # its adapter module exists
    if entry.environment != MAIN:
        return  # its own environment builds it: tests/engines/test_peers.py
    engine = create_engine(name)
    assert engine.name == name  # the adapter says the same name
    assert engine.spec is entry and engine.streams == entry.streams
    assert engine.description == entry.description
    for module in entry.stack:
        assert importlib.util.find_spec(module) is not None  # the probe's imports exist here


def test_no_adapter_restates_what_the_registry_declares() -> None:
    """An adapter names its engine; its description and streaming are the registry's only."""
    restated = []
    for path in sorted((ROOT / "bench" / "engines").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ClassDef):
                continue
            for statement in node.body:
                targets = statement.targets if isinstance(statement, ast.Assign) else []
                names = {t.id for t in targets if isinstance(t, ast.Name)}
                if names & {"description", "streams"}:
                    restated.append(f"{path.name}:{statement.lineno} {node.name}")
    assert restated == []


def test_styles_are_distinct_per_engine() -> None:
    # outcome-only variants appear in the fault matrix only, which colours by outcome
    styles = [REGISTRY[n].style for n in ENGINE_NAMES if not REGISTRY[n].outcome_only]
    for field in ("color", "marker", "hatch"):
        values = [getattr(s, field) for s in styles]
        assert len(set(values)) == len(values), field


def test_every_framework_engine_is_paired_with_a_self_built_one_of_the_same_streaming() -> None:
    for name in engines_where(role="framework"):
        pair = counterpart(name)
        assert pair is not None
        assert spec(pair.other).role == "self-built"
        assert spec(pair.other).streams == spec(name).streams
        assert pair.exact == (spec(pair.other).configuration == spec(name).configuration)
        assert pair.exact or "does more work" in pair.caveat


def test_the_production_scheduler_is_paired_like_for_like() -> None:
    assert counterpart("lc-create-agent").other == "scheduler-plain"
    assert counterpart("lc-agentexecutor-nostream").other == "scheduler-plain"
    assert counterpart("lc-agentexecutor").other == "scheduler-stream"
    assert not counterpart("lc-agentexecutor").exact


def test_every_production_configuration_declares_its_built_in_and_custom_code():
    # the report splits a production score into what built-ins and custom code achieve, with
    # the statements of each: a production engine without its code would read "0 statements"
    from bench.engines.codesize import measure_target
    from bench.engines.registry import SPECS

    for engine in SPECS:
        if (
            engine.configuration != "production"
            or engine.outcome_only
            or engine.environment != "main"
        ):
            continue
        if engine.family not in ("langchain", "scheduler"):
            continue
        parts = {part for part, _ in engine.config_code}
        assert parts == {"built-in", "custom"}, engine.name
        for _, target in engine.config_code:
            assert measure_target(target).statements > 0, (engine.name, target)
