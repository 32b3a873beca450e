"""What every LangChain engine shares: the chat model, the tools, the limits' knobs."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Protocol

from langchain_core.tools import StructuredTool, Tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field, StringConstraints, WithJsonSchema, create_model


class ToolLike(Protocol):
    """What a tool must offer to be wrapped: a name, a description, a JSON Schema and code."""

    name: str
    description: str
    parameters: dict[str, Any]

    def call(self, **kwargs: Any) -> Any: ...

    def acall(self, **kwargs: Any) -> Awaitable[Any]: ...


@dataclass(frozen=True)
class AgentSettings:
    """The framework knobs one scenario's limits map to (see the module docstring)."""

    max_iterations: int = 15
    request_timeout_s: float = 20.0
    max_retries: int = 3
    max_execution_time_s: float | None = None
    # what only the production configurations use (``production_agent``, ``production_executor``)
    tool_timeout_s: float = 30.0
    max_same_tool_calls: int = 2
    token_budget: int | None = 12000
    breaker_threshold: int = 3

    @classmethod
    def from_limits(cls, limits: Any, run_timeout_s: float | None = None) -> AgentSettings:
        """Map a scenario's ``limits`` (the same names, see the package docstring)."""
        return cls(
            max_iterations=limits.max_steps,
            request_timeout_s=limits.llm_timeout_s,
            max_retries=limits.max_retries,
            max_execution_time_s=run_timeout_s,
            tool_timeout_s=limits.tool_timeout_s,
            max_same_tool_calls=limits.max_same_tool_calls,
            token_budget=limits.token_budget,
            breaker_threshold=limits.breaker_threshold,
        )

    @property
    def recursion_limit(self) -> int:
        """LangGraph supersteps for ``max_iterations`` steps (model + tools per step)."""
        return 2 * self.max_iterations


def make_chat_model(
    *,
    model: str,
    base_url: str,
    settings: AgentSettings,
    api_key: str = "sk-schedbench-mock",
    http_async_client: Any = None,
) -> ChatOpenAI:
    """``ChatOpenAI`` pointed at an OpenAI-compatible server."""
    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=api_key,
        timeout=settings.request_timeout_s,
        max_retries=settings.max_retries,
        stream_usage=True,
        http_async_client=http_async_client,
    )


def structured_tools(tools: Sequence[ToolLike]) -> list[StructuredTool]:
    """One ``StructuredTool`` per tool, its JSON Schema dict passed as ``args_schema``."""
    return [
        StructuredTool.from_function(
            func=tool.call,
            coroutine=tool.acall,
            name=tool.name,
            description=tool.description,
            args_schema=tool.parameters,
        )
        for tool in tools
    ]


def _annotation(schema: dict[str, Any]) -> Any:
    """The Python type that validates one JSON Schema property (the keywords scenarios use)."""
    if "enum" in schema:
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "string":
        constraints = StringConstraints(
            pattern=schema.get("pattern"),
            min_length=schema.get("minLength"),
            max_length=schema.get("maxLength"),
        )
        return Annotated[str, constraints]
    if kind in ("integer", "number"):
        bounds = Field(
            ge=schema.get("minimum"),
            le=schema.get("maximum"),
            gt=schema.get("exclusiveMinimum"),
            lt=schema.get("exclusiveMaximum"),
        )
        number = int if kind == "integer" else float
        return Annotated[number, bounds]
    if kind == "array":
        size = Field(min_length=schema.get("minItems"), max_length=schema.get("maxItems"))
        return Annotated[list[_annotation(schema.get("items") or {})], size]  # type: ignore[misc]
    return {"boolean": bool, "object": dict[str, Any]}.get(kind, Any)  # type: ignore[arg-type]


def args_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model of a tool's JSON Schema, as ``@tool`` derives one from a signature.

    Each property keeps its JSON Schema (``WithJsonSchema``); an optional property defaults
    to ``None`` without allowing it (pydantic does not validate defaults), so an explicit
    ``null`` is refused as the schema says, and a missing argument stays missing
    (``validated_tools`` drops the defaults before calling the tool).
    """
    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {
        key: (
            Annotated[_annotation(prop), WithJsonSchema(prop)],
            ... if key in required else Field(default_factory=lambda: None),
        )
        for key, prop in (schema.get("properties") or {}).items()
    }
    return create_model(name, **fields)


class ValidatedTool(StructuredTool):
    """A ``StructuredTool`` that LangChain validates with a pydantic ``args_schema`` (as for
    ``@tool``), and that shows the model its scenario JSON Schema unchanged."""

    json_schema: dict[str, Any]

    @property
    def tool_call_schema(self) -> dict[str, Any]:  # type: ignore[override]
        # pydantic's own schema sorts keys and moves a token on 39 of the 87 scenario tools;
        # every engine must send the model the same bytes (tests/engines/test_fairness.py)
        return {**self.json_schema, "description": self.description}


def validated_tool(
    tool: ToolLike, coroutine: Callable[..., Awaitable[Any]] | None = None
) -> StructuredTool:
    """``tool`` with its arguments validated by pydantic before the call (an invalid call is
    answered with the validation error, never run): the docs' way. ``coroutine`` runs the
    call (default: the tool itself); the optional arguments the model left out stay out."""
    run = coroutine or tool.acall

    async def acall(**kwargs: Any) -> Any:
        return await run(**{k: v for k, v in kwargs.items() if v is not None})

    def call(**kwargs: Any) -> Any:
        return tool.call(**{k: v for k, v in kwargs.items() if v is not None})

    return ValidatedTool(
        name=tool.name,
        description=tool.description,
        args_schema=args_model(tool.name, tool.parameters),
        json_schema=tool.parameters,
        func=None if coroutine else call,
        coroutine=acall,
    )


def validated_tools(tools: Sequence[ToolLike]) -> list[StructuredTool]:
    """One ``validated_tool`` per scenario tool."""
    return [validated_tool(tool) for tool in tools]


def react_tools(tools: Sequence[ToolLike]) -> list[Tool]:
    """Single-input ``Tool``\\s for ReAct: the ``Action Input`` text is a JSON object.

    ``create_react_agent`` hands a tool the raw ``Action Input`` string, and a
    ``StructuredTool`` with a JSON Schema refuses strings, so ReAct users write single-input
    tools that parse their input, and put the expected input in the description (here: the
    tool's JSON Schema, so the model sees the same schema as with tool calling). Input that
    is not a JSON object is answered as such a tool answers it: with an observation telling
    the model what was wrong (the parsing is this adapter's, so its failure must not decide
    how the framework handles malformed calls).
    """

    def parse(tool_input: str) -> dict[str, Any] | str:
        try:
            args = json.loads(tool_input)
        except ValueError as exc:
            return f"Error: the Action Input is not valid JSON ({exc}); send a JSON object."
        return args if isinstance(args, dict) else "Error: the Action Input must be a JSON object."

    def wrap(tool: ToolLike) -> Tool:
        def run(tool_input: str) -> Any:
            args = parse(tool_input)
            return args if isinstance(args, str) else tool.call(**args)

        async def arun(tool_input: str) -> Any:
            args = parse(tool_input)
            return args if isinstance(args, str) else await tool.acall(**args)

        description = (
            f"{tool.description} Input: a JSON object with this JSON Schema: "
            f"{json.dumps(tool.parameters)}"
        )
        return Tool(name=tool.name, description=description, func=run, coroutine=arun)

    return [wrap(tool) for tool in tools]
