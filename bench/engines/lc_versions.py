"""``lc-agentexecutor@0.1`` … ``@1``: today's AgentExecutor baseline on each LangChain line.

Each engine is ``bench.engines.langchain_engines.AgentExecutorEngine`` — today's
``langchain_baseline`` code, unchanged — run in the environment of one LangChain line
(``bench/envs/langchain-<line>/``). Where that code does not import or run on the line, the
smallest change that makes it run is a function here, applied before the baseline is
imported; the registry's ``adapter_code`` names those functions, so their size is counted
(``bench.engines.codesize``) and nothing else is. ``bench.runner.phases.version_probe`` probes, in each
environment, whether the unchanged code runs and what it warns.

One more difference is the harness's, not the user's, and is not counted: openai 1.x and
2.x send through ``httpx`` (3.x through ``httpx2``), so the recording client is built for the
installed openai (``bench.engines.peers.openai_http_lib``).
"""

from __future__ import annotations

import sys
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

    def make_chat_model(*, model, base_url, settings, api_key="sk-schedbench-mock", **client):
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
    name = "lc-agentexecutor@0.1"
    description = "today's AgentExecutor baseline on LangChain 0.1 (langchain.agents)"
    adapt = (
        agent_executor_from_langchain_agents,
        args_schema_as_pydantic_v1_model,
        chat_model_without_stream_usage,
    )


class AgentExecutor02Engine(_VersionedExecutor):
    name = "lc-agentexecutor@0.2"
    description = "today's AgentExecutor baseline on LangChain 0.2 (langchain.agents)"
    adapt = (agent_executor_from_langchain_agents, args_schema_as_pydantic_v1_model)


class AgentExecutor03Engine(_VersionedExecutor):
    name = "lc-agentexecutor@0.3"
    description = "today's AgentExecutor baseline on LangChain 0.3 (langchain.agents)"
    adapt = (agent_executor_from_langchain_agents,)


class AgentExecutor1Engine(_VersionedExecutor):
    name = "lc-agentexecutor@1"
    description = "today's AgentExecutor baseline on LangChain 1.x (langchain_classic), as is"


class UnchangedExecutor(_VersionedExecutor):
    """Today's baseline with no change at all (only the harness's recording client): what
    ``bench.runner.phases.version_probe`` tries first on every line."""

    name = "lc-agentexecutor"
    description = "today's AgentExecutor baseline, unchanged"
