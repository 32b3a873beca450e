"""Which package a function belongs to: the groups of the probe's breakdowns.

A frame is grouped by the module its function was defined in (``frame.f_globals["__name__"]``),
by the first rule of ``RULES`` whose prefix matches. Two kinds of group are not final:

- **helpers** — the standard library's general-purpose modules (``typing``, ``copy``, ``uuid``,
  ``inspect``, ``contextlib``, ``functools``, ``dataclasses``, ``abc``, ``enum``, ``re``, …) and
  ``typing_extensions``: work a package *asks for*, charged to the nearest caller that is not a
  helper (``uuid.uuid4`` called by LangChain's callback manager is callback-manager time);
- **C functions** (no module of their own in a profile): charged to their Python caller.

``asyncio`` and ``json`` are groups of their own (the brief asks for them), as is everything of
the harness: ``harness`` is the mock LLM and the scenario tools (and, by subtree, everything
they call — ``bench.probe.edges.HARNESS_ROOTS``); ``engine code`` is the engine adapters
(``bench.engines``) and ``langchain_baseline`` — for ``raw`` and ``openai-sdk`` that *is* the
loop, for the others the few lines that call the framework.
"""

from __future__ import annotations

import sys

HARNESS = "harness"
ENGINE_CODE = "engine code"
HELPER = "(helper)"  # not a group: charged to the caller
OTHER = "other"
PEER = "peer framework"  # the OpenAI Agents SDK, Pydantic AI, Agno, Strands, LlamaIndex

# (module prefix, group), first match wins; a prefix matches the module itself and its children
RULES: tuple[tuple[str, str], ...] = (
    ("bench.probe", "probe"),
    ("bench.mockllm", HARNESS),
    ("bench.recording", HARNESS),
    ("bench.tools", HARNESS),
    ("scenarios", HARNESS),
    ("bench.engines", ENGINE_CODE),
    ("langchain_baseline", ENGINE_CODE),
    ("bench", HARNESS),
    ("langchain_core.callbacks", "langchain_core.callbacks"),
    ("langchain_core.tracers", "langchain_core.tracers"),
    ("langchain_core.runnables", "langchain_core.runnables"),
    ("langchain_core", "langchain_core (rest)"),
    ("langchain_classic", "langchain_classic"),
    ("langchain_openai", "langchain_openai"),
    ("langchain", "langchain"),
    ("langgraph", "langgraph"),
    ("langsmith", "langsmith"),
    ("scheduler", "scheduler"),
    # the peer frameworks, each in its own virtualenv (one group: a run has one of them)
    ("agents", PEER),
    ("pydantic_ai", PEER),
    ("pydantic_graph", PEER),
    ("agno", PEER),
    ("strands", PEER),
    ("llama_index", PEER),
    ("autogen_agentchat", PEER),
    ("autogen_core", PEER),
    ("autogen_ext", PEER),
    ("agent_framework", PEER),
    ("agent_framework_openai", PEER),
    ("openai", "openai"),
    ("httpx", "httpx"),
    ("httpx2", "httpx"),
    ("httpcore", "httpx"),
    ("h11", "httpx"),
    ("anyio", "httpx"),
    ("sniffio", "httpx"),
    ("pydantic", "pydantic"),
    ("pydantic_core", "pydantic"),
    ("asyncio", "asyncio"),
    ("json", "json"),
    ("typing_extensions", HELPER),
)

# the groups in the order of every table and chart (``probe`` never appears: the probe's
# own frames are left out of every count)
GROUPS: tuple[str, ...] = (
    "langchain_core.callbacks",
    "langchain_core.tracers",
    "langchain_core.runnables",
    "langchain_core (rest)",
    "langchain_classic",
    "langchain",
    "langgraph",
    "langchain_openai",
    "langsmith",
    "scheduler",
    PEER,
    ENGINE_CODE,
    "openai",
    "httpx",
    "pydantic",
    "asyncio",
    "json",
    HARNESS,
    OTHER,
)

# claim 2 ("long callback chains"): LangChain's callback managers, the tracers they dispatch
# to (the event stream, run trees) and the Runnable plumbing around every component
CALLBACK_RUNNABLE_GROUPS: tuple[str, ...] = (
    "langchain_core.callbacks",
    "langchain_core.tracers",
    "langchain_core.runnables",
)

# the over-abstraction claim: each family's own code (its engine glue, the provider SDK it
# wraps, httpx, pydantic and the standard library are left out: a hand-written loop pays them too)
FRAMEWORK_GROUPS: dict[str, tuple[str, ...]] = {
    "langchain": tuple(g for g in GROUPS if g.startswith("lang")),
    "scheduler": ("scheduler",),
    **{
        peer: (PEER,)
        for peer in (
            "openai-agents",
            "pydantic-ai",
            "agno",
            "strands",
            "llamaindex",
            "autogen",
            "agent-framework",
        )
    },
}

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
