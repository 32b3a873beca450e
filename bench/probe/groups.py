"""Which package a function belongs to: the groups of the probe's breakdowns.

The tables (``RULES``, ``GROUPS``, …) live in ``bench.engines.packages``, which the metrics and
the catalogue read too; this module applies them. A frame is grouped by the module its function was defined in (``frame.f_globals["__name__"]``),
by the first rule of ``RULES`` whose prefix matches. Two kinds of group are not final:

- **helpers** — the standard library's general-purpose modules (``typing``, ``copy``, ``uuid``,
  ``inspect``, ``contextlib``, ``functools``, ``dataclasses``, ``abc``, ``enum``, ``re``, …) and
  ``typing_extensions``: work a package *asks for*, charged to the nearest caller that is not a
  helper (``uuid.uuid4`` called by LangChain's callback manager is callback-manager time);
- **C functions** (no module of their own in a profile): charged to their Python caller.

``asyncio`` and ``json`` are groups of their own (the claims are about them), as is everything of
the harness: ``harness`` is the mock LLM and the scenario tools (and, by subtree, everything
they call — ``bench.probe.edges.HARNESS_ROOTS``); ``engine code`` is the engine adapters
(``bench.engines``) and ``langchain_baseline`` — for ``raw`` and ``openai-sdk`` that *is* the
loop, for the others the few lines that call the framework.
"""

from __future__ import annotations

import sys

from bench.engines.packages import (
    CALLBACK_RUNNABLE_GROUPS,
    ENGINE_CODE,
    FRAMEWORK_GROUPS,
    GROUPS,
    HARNESS,
    HELPER,
    OTHER,
    PEER,
    RULES,
)

__all__ = [
    "CALLBACK_RUNNABLE_GROUPS",
    "ENGINE_CODE",
    "FRAMEWORK_GROUPS",
    "GROUPS",
    "HARNESS",
    "HELPER",
    "OTHER",
    "PEER",
    "RULES",
    "class_of",
    "group_of",
    "owner_group",
]

_STDLIB = frozenset(sys.stdlib_module_names)
_cache: dict[str, str] = {}


def _matches(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def group_of(module: str | None) -> str:
    """The group of a module name (``HELPER`` for a standard-library helper module)."""
    if not module:
        return OTHER
    cached = _cache.get(module)
    if cached is not None:
        return cached
    group = None
    for prefix, name in RULES:
        if _matches(module, prefix):
            group = name
            break
    if group is None:
        group = HELPER if module.split(".", 1)[0] in _STDLIB else OTHER
    _cache[module] = group
    return group


def owner_group(modules: list[str | None]) -> str:
    """The group charged for a stack, given its modules from the innermost frame outwards:
    the first frame that is not a helper (a stack of helpers only: ``other``)."""
    for module in modules:
        group = group_of(module)
        if group != HELPER:
            return group
    return OTHER


def class_of(qualname: str) -> str | None:
    """The class a function is defined in, from its ``__qualname__`` (None for a function):
    ``RunnableSequence.ainvoke`` → ``RunnableSequence``; ``f.<locals>.Cls.m`` → ``Cls``."""
    parts = qualname.split(".")
    if len(parts) < 2:
        return None
    owner = parts[-2]
    return None if owner.startswith("<") else owner
