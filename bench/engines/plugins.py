"""Engine names → engine classes: the built-in registry plus engines named in the environment.

``SCHEDBENCH_EXTRA_ENGINES="name=module:Class,other=module:Class"`` adds (or replaces) engines
for a run, e.g. an experimental engine of your own, or the tests' fake engines. Workers
inherit the variable, so they resolve names exactly as the parent did.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

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
    from bench.engines import ENGINES

    return {**ENGINES, **_extras()}


def builtin_engine_names() -> tuple[str, ...]:
    """The engines ``--engines all`` means: the built-in ones."""
    from bench.engines import ENGINE_NAMES

    return ENGINE_NAMES


def create_engine(name: str) -> Any:
    """Import and instantiate the engine ``name`` (KeyError if unknown)."""
    module_name, class_name = engine_targets()[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)()
