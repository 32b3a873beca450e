"""Engine names → engine classes: the registry's engines plus plug-ins named in the environment.

``SCHEDBENCH_EXTRA_ENGINES="name=module:Class,other=module:Class"`` adds (or replaces) engines
for a run, e.g. an experimental engine of your own, or the tests' fake engines. Workers
inherit the variable, so they resolve names exactly as the parent did. ``create_engine`` is
the one way to build an engine by name.
"""

from __future__ import annotations

import importlib
import os

from bench.engines.base import Engine
from bench.engines.registry import ENGINE_NAMES, REGISTRY
from bench.errors import UnknownEngineError

ENV_VAR = "SCHEDBENCH_EXTRA_ENGINES"


def _extras() -> dict[str, str]:
    extras: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in os.environ.get(ENV_VAR, "").split(","))):
        name, sep, target = item.partition("=")
        if not sep or ":" not in target:
            raise ValueError(f"{ENV_VAR}: expected name=module:Class, not {item!r}")
        extras[name.strip()] = target.strip()
    return extras


def engine_targets() -> dict[str, str]:
    """Every known engine name → ``module:Class``, built-ins first, in the report's order."""
    return {**{name: spec.target for name, spec in REGISTRY.items()}, **_extras()}


def builtin_engine_names() -> tuple[str, ...]:
    """The engines ``--engines all`` means: the built-in ones."""
    return ENGINE_NAMES


def create_engine(name: str) -> Engine:
    """Import and build the engine called ``name`` (``UnknownEngineError`` if none is)."""
    targets = engine_targets()
    if name not in targets:
        raise UnknownEngineError(name, targets)
    module_name, class_name = targets[name].split(":")
    engine: Engine = getattr(importlib.import_module(module_name), class_name)()
    return engine
