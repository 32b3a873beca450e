"""Which import packages belong to which framework, and the package groups of the breakdowns.

One table, read by the profiling probe (``bench.probe.groups`` applies ``RULES``), the
metrics (``GROUPS``, ``CALLBACK_RUNNABLE_GROUPS``), the report, the customisation catalogue
(``FRAMEWORK_IMPORTS``: whose internals a cell may reach into) and the run's metadata
(``FRAMEWORK_DISTRIBUTIONS``: whose versions a number depends on). A leaf module.
"""

from __future__ import annotations

# each framework family's top-level import packages (the registry's ``family`` names)
FRAMEWORK_MODULES: dict[str, tuple[str, ...]] = {
    "langchain": (
        "langchain",
        "langchain_classic",
        "langchain_core",
        "langchain_openai",
        "langgraph",
        "langsmith",
    ),
    "scheduler": ("scheduler",),
    "openai-sdk": ("openai",),
    "openai-agents": ("agents",),
    "pydantic-ai": ("pydantic_ai", "pydantic_graph"),
    "agno": ("agno",),
    "strands": ("strands",),
    "llamaindex": ("llama_index",),
    "autogen": ("autogen_agentchat", "autogen_core", "autogen_ext"),
    "agent-framework": ("agent_framework", "agent_framework_openai"),
}
# the peer frameworks: each runs in its own virtualenv (bench.envs)
PEERS: tuple[str, ...] = (
    "openai-agents",
    "pydantic-ai",
    "agno",
    "strands",
    "llamaindex",
    "autogen",
    "agent-framework",
)
# every framework's import packages (the catalogue's "framework internals")
FRAMEWORK_IMPORTS: frozenset[str] = frozenset(m for ms in FRAMEWORK_MODULES.values() for m in ms)
# the distributions of the main environment's frameworks whose versions move a number
FRAMEWORK_DISTRIBUTIONS: tuple[str, ...] = (
    "langchain",
    "langchain-core",
    "langchain-classic",
    "langchain-openai",
    "langchain-text-splitters",
    "langgraph",
    "langgraph-prebuilt",
    "langgraph-checkpoint",
    "langsmith",
    "openai",
)

HARNESS = "harness"
ENGINE_CODE = "engine code"
HELPER = "(helper)"  # not a group: charged to the caller
OTHER = "other"
PEER = "peer framework"  # the Agents SDK, Pydantic AI, Agno, Strands, LlamaIndex, AutoGen, MAF

# (module prefix, group), first match wins; a prefix matches the module itself and its children
RULES: tuple[tuple[str, str], ...] = (
    ("bench.probe", "probe"),
    ("bench.referee", HARNESS),
    ("bench.engines.kit", HARNESS),  # the run log, the scenario tools, TTFT accounting
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
    *((module, PEER) for family in PEERS for module in FRAMEWORK_MODULES[family]),
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
# to (the event stream, run trees), the Runnable plumbing around every component, and
# langsmith — LangChain's tracing SDK: with tracing off, what runs of it is the tracing
# machinery, above all the ``traceable`` span that ``create_agent`` wraps around every
# ``wrap_model_call`` / ``wrap_tool_call`` layer (its setup and teardown run in executor
# threads, which the probe follows; the hand-off itself is charged to asyncio)
CALLBACK_RUNNABLE_GROUPS: tuple[str, ...] = (
    "langchain_core.callbacks",
    "langchain_core.tracers",
    "langchain_core.runnables",
    "langsmith",
)
# the same claim on inclusive time: a sample counts when one of these is anywhere on its
# stack (what they call is their cost too), or when its own frame is a runnable's
# (``RUNNABLE_GROUP``: every LangChain sample has a runnable somewhere on its stack, so
# runnables count by their own time only)
CALLBACK_STACK_GROUPS: tuple[str, ...] = (
    "langchain_core.callbacks",
    "langchain_core.tracers",
    "langsmith",
)
RUNNABLE_GROUP = "langchain_core.runnables"

# the over-abstraction claim: each family's own code (its engine glue, the provider SDK it
# wraps, httpx, pydantic and the standard library are left out: a hand-written loop pays them too)
FRAMEWORK_GROUPS: dict[str, tuple[str, ...]] = {
    "langchain": tuple(g for g in GROUPS if g.startswith("lang")),
    "scheduler": ("scheduler",),
    **{peer: (PEER,) for peer in PEERS},
}
