"""The LangChain lines: the reference agent as each line's docs wrote it, and today's baseline
back-ported to each line.

**Programs** (``PROGRAMS``): ``bench/envs/langchain-<line>/agent.py`` is the reference agent
(``customer_returns``) written the way that line's own docs wrote an agent — its imports,
idioms and calls. ``bench.runner.phases.version_probe`` runs each one *unchanged* on its own line and on
every newer one (the upgrade direction). Where it fails, ``Program.fixes`` holds the edits
that make it run there; the fix's size is measured on the program as written and the
program that runs (``bench.runner.phases.version_probe.statements_changed``), not declared.

**Engines** (``lc-agentexecutor@0.1`` … ``@1``): today's AgentExecutor baseline
(``bench.engines.langchain_engines.AgentExecutorEngine``) run in each line's environment, so
the same code's per-step cost can be compared across lines. Where today's code does not run
on an older line, the smallest back-port is a function here, applied before the baseline is
imported (the registry's ``adapter_code`` names them). Back-porting is the harness's
business, not a measure of LangChain's stability.

One more difference is the harness's, not the user's: openai 1.x and 2.x send through
``httpx`` (3.x through ``httpx2``), so the recording client is built for the installed
openai (``bench.engines.peers.openai_http_lib``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.engines.langchain_engines import AgentExecutorEngine
from bench.engines.peers import openai_http_lib


def agent_executor_from_langchain_agents() -> None:
    """LangChain 0.1-0.3: AgentExecutor and create_tool_calling_agent are in
    ``langchain.agents`` (1.0 moved them to ``langchain_classic.agents``)."""
    import langchain
    import langchain.agents

    sys.modules.setdefault("langchain_classic", langchain)
    sys.modules.setdefault("langchain_classic.agents", langchain.agents)


def args_schema_as_pydantic_v1_model() -> None:
    """LangChain 0.1-0.2: ``StructuredTool``'s ``args_schema`` must be a pydantic (v1) model
    with real fields, not a JSON Schema dict (0.3 accepts dicts): the model a user would
    write for the tool — each property a typed field with its description and constraints
    (an ``enum`` a ``Literal``), optional unless required — so the LLM sees the same schema
    (for the keywords the matrix's scenarios use)."""
    from typing import Literal

    from langchain_core.pydantic_v1 import Field, confloat, conint, conlist, constr, create_model
    from langchain_core.tools import StructuredTool

    import langchain_baseline.common as common

    # JSON Schema keyword → the argument of pydantic v1's constrained type that emits it
    keywords = {"minimum": "ge", "maximum": "le", "exclusiveMinimum": "gt", "minItems": "min_items"}
    keywords |= {"minLength": "min_length", "maxLength": "max_length", "pattern": "regex"}
    types = {"string": constr, "integer": conint, "number": confloat}

    def python_type(spec: dict[str, Any]) -> Any:
        limits = {keywords[k]: v for k, v in spec.items() if k in keywords}
        if "enum" in spec:
            return Literal[tuple(spec["enum"])]
        if spec["type"] == "array":
            return conlist(python_type(spec.get("items", {"type": "object"})), **limits)
        if spec["type"] in types:
            return types[spec["type"]](**limits)
        return {"boolean": bool, "object": dict}[spec["type"]]

    def field(spec: dict[str, Any], required: bool) -> tuple[Any, Any]:
        default = ... if required else None
        return python_type(spec), Field(default, description=spec.get("description"))

    def model_of(name: str, schema: dict[str, Any]) -> Any:
        required = set(schema.get("required", ()))
        properties = schema.get("properties", {}).items()
        return create_model(name, **{k: field(v, k in required) for k, v in properties})

    def structured_tools(tools: Any) -> list[StructuredTool]:
        return [
            StructuredTool.from_function(
                func=tool.call,
                coroutine=tool.acall,
                name=tool.name,
                description=tool.description,
                args_schema=model_of(tool.name, tool.parameters),
            )
            for tool in tools
        ]

    common.structured_tools = structured_tools


def chat_model_without_stream_usage() -> None:
    """langchain-openai 0.1.7 (the last that LangChain 0.1 accepts) has no ``stream_usage``
    (it would go to the request as an unknown argument): the same ``ChatOpenAI`` without it."""
    from langchain_openai import ChatOpenAI

    import langchain_baseline.common as common

    def make_chat_model(
        *, model: str, base_url: str, settings: Any, api_key: Any = "sk-schedbench-mock",
        **client: Any,
    ) -> Any:  # fmt: skip
        return ChatOpenAI(
            model=model,
            base_url=base_url,
            api_key=api_key,
            timeout=settings.request_timeout_s,
            max_retries=settings.max_retries,
            http_async_client=client.get("http_async_client"),
        )

    common.make_chat_model = make_chat_model


class _VersionedExecutor(AgentExecutorEngine):
    """The baseline engine, with its line's changes applied first (``adapt``)."""

    adapt: tuple[Any, ...] = ()  # the line's changes to today's code, in order

    def __init__(self) -> None:
        super().__init__()
        for change in self.adapt:
            change()

    def http_client(self, ctx: Any, lib: str) -> Any:
        # the harness's instrument, not the user's code: the openai the line installs
        return super().http_client(ctx, openai_http_lib() if lib == "httpx2" else lib)


class AgentExecutor01Engine(_VersionedExecutor):
    adapt = (
        agent_executor_from_langchain_agents,
        args_schema_as_pydantic_v1_model,
        chat_model_without_stream_usage,
    )


class AgentExecutor02Engine(_VersionedExecutor):
    adapt = (agent_executor_from_langchain_agents, args_schema_as_pydantic_v1_model)


class AgentExecutor03Engine(_VersionedExecutor):
    adapt = (agent_executor_from_langchain_agents,)


class AgentExecutor1Engine(_VersionedExecutor):
    """AgentExecutor on LangChain 1 (``langchain-classic``), as its docs write it."""


# -- the programs, as each line's docs wrote them ------------------------------------------

PROGRAM_DIR = Path(__file__).resolve().parents[1] / "envs"


@dataclass(frozen=True)
class Edit:
    """One change to a program's source: ``old`` (found exactly once) becomes ``new``."""

    old: str
    new: str

    def __str__(self) -> str:
        return f"{' '.join(self.old.split())} → {' '.join(self.new.split())}"


@dataclass(frozen=True)
class Program:
    """The reference agent as LangChain ``line``'s docs wrote it."""

    line: str
    # newer line → the edits that make the program run there (only where it fails as is)
    fixes: Mapping[str, tuple[Edit, ...]] = field(default_factory=dict)
    # the distributions its users installed, where no environment of the line is declared
    # (otherwise: bench/envs/langchain-<line>/constraints.txt, the line's whole install)
    installed: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return PROGRAM_DIR / f"langchain-{self.line}" / "agent.py"

    def source(self, fixed_for: str | None = None) -> str:
        """The program as written, or with the fix for line ``fixed_for`` applied."""
        text = self.path.read_text(encoding="utf-8")
        for edit in self.fixes[fixed_for] if fixed_for is not None else ():
            if text.count(edit.old) != 1:
                raise ValueError(
                    f"{self.path}: fix for {fixed_for}: {edit.old!r} is not there once"
                )
            text = text.replace(edit.old, edit.new)
        return text

    def installed_distributions(self) -> set[str]:
        """What a user of this line had installed (normalised distribution names)."""
        constraints = self.path.with_name("constraints.txt")
        if not constraints.exists():
            return {normal_name(name) for name in self.installed}
        names = set()
        for line in constraints.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                names.add(normal_name(line.split("==", 1)[0]))
        return names


def normal_name(name: str) -> str:
    """A distribution's name as pip compares it (``langchain_core`` → ``langchain-core``)."""
    return name.strip().lower().replace("_", "-").replace(".", "-")


# the edits each program needs on a newer line, as the warnings of the line before (or the
# 1.0 migration guide) tell a user to make them
_CLASSIC = "langchain_classic.agents"  # 1.0 moved the legacy agents to langchain-classic
_CHAT_MODEL_0_0 = Edit(
    "from langchain.chat_models import ChatOpenAI", "from langchain_openai import ChatOpenAI"
)
_EXECUTOR = "from langchain.agents import AgentExecutor, "

PROGRAMS: tuple[Program, ...] = (
    Program(
        "0.0",
        fixes={
            "0.2": (_CHAT_MODEL_0_0,),
            "0.3": (_CHAT_MODEL_0_0,),
            # the imports alone are not enough: langchain-classic 1.0.8's OpenAIFunctionsAgent
            # (behind initialize_agent) passes callbacks twice and raises a TypeError, so the
            # agent is rebuilt the way the deprecation warning says, with its default prompt
            "1": (
                Edit(
                    "from langchain.agents import AgentType, initialize_agent",
                    f"from {_CLASSIC} import AgentExecutor, create_openai_functions_agent\n"
                    "from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder",
                ),
                _CHAT_MODEL_0_0,
                Edit(
                    "    agent = initialize_agent(tools, llm, agent=AgentType.OPENAI_FUNCTIONS,"
                    " verbose=True)\n    return agent.run(harness.question)",
                    "    prompt = ChatPromptTemplate.from_messages(\n"
                    '        [("system", "You are a helpful AI assistant."), ("human", "{input}"),\n'
                    '         MessagesPlaceholder(variable_name="agent_scratchpad")]\n'
                    "    )\n"
                    "    agent = create_openai_functions_agent(llm, tools, prompt)\n"
                    "    agent_executor = AgentExecutor(agent=agent, tools=tools, verbose=True)\n"
                    '    return agent_executor.invoke({"input": harness.question})["output"]',
                ),
            ),
        },
        installed=("langchain", "openai", "pydantic"),
    ),
    Program(
        "0.1",
        fixes={
            "1": (
                Edit(
                    _EXECUTOR + "create_openai_functions_agent",
                    f"from {_CLASSIC} import AgentExecutor, create_openai_functions_agent",
                ),
                Edit(
                    "from langchain.pydantic_v1 import BaseModel, Field",
                    "from pydantic import BaseModel, Field",
                ),
            )
        },
    ),
    Program(
        "0.2",
        fixes={
            "1": (
                Edit(
                    _EXECUTOR + "create_tool_calling_agent",
                    f"from {_CLASSIC} import AgentExecutor, create_tool_calling_agent",
                ),
                Edit(
                    "from langchain_core.pydantic_v1 import BaseModel, Field",
                    "from pydantic import BaseModel, Field",
                ),
            )
        },
    ),
    Program(
        "0.3",
        fixes={
            "1": (
                Edit(
                    _EXECUTOR + "create_tool_calling_agent",
                    f"from {_CLASSIC} import AgentExecutor, create_tool_calling_agent",
                ),
            )
        },
    ),
)
