"""Scheduler tests run against the scripted mock LLM, in-process (no sockets).

``scenario(...)`` builds a Scenario in code; ``Harness`` wires a MockLLM, an
``OpenAIChatClient`` over the in-process transport, and agents whose tools do what the
scenario says (or what a test hands in).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from bench.referee import LatencyProfile, MockLLM
from bench.referee.transport import BASE_URL, mock_async_client
from scenarios import Scenario, load_scenario
from scenarios.loader import BUILTIN_DIR
from scheduler import AgentConfig, LightweightAgent, OpenAIChatClient, ToolSpec

SEARCH = {
    "name": "search",
    "description": "Search the knowledge base.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    },
    "behavior": {"returns": {"hits": 3}},
}


def scenario(
    name: str = "t",
    *,
    script: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    user: str = "hello",
    system_prompt: str = "You are a test agent.",
    **extra: Any,
) -> Scenario:
    """A scenario built in code (the YAML format of docs/scenarios.md, as a dict)."""
    return Scenario.model_validate(
        {
            "name": name,
            "description": "built by a test",
            "system_prompt": system_prompt,
            "user": user,
            "tools": [SEARCH] if tools is None else tools,
            "script": script,
            "expect": {"status": extra.pop("status", "completed")},
            **extra,
        }
    )


def builtin(name: str) -> Scenario:
    return load_scenario(BUILTIN_DIR / f"{name}.yaml")


class FakeClock:
    """A monotonic clock that moves only when told (breakers) or by a fixed tick (traces)."""

    def __init__(self, tick: float = 0.0):
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class Harness:
    """One MockLLM serving any number of scenarios, and agents talking to it."""

    def __init__(self, *scenarios: Scenario, latency: LatencyProfile | None = None):
        self.scenarios = {s.name: s for s in scenarios}
        self.mock = MockLLM(self.scenarios, latency=latency or LatencyProfile())
        self.http = mock_async_client(self.mock)
        self.sleeps: list[float] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []  # (tool, arguments) actually executed

    def client(self, name: str, **kwargs: Any) -> OpenAIChatClient:
        return OpenAIChatClient(
            base_url=BASE_URL, model=f"scenario/{name}", http_client=self.http, **kwargs
        )

    def recording_sleep(self) -> Callable[[float], Any]:
        async def sleep(delay: float) -> None:
            self.sleeps.append(delay)
            await asyncio.sleep(delay)

        return sleep

    def tools(
        self, name: str, overrides: dict[str, Callable[..., Any]] | None = None, **spec_options: Any
    ) -> list[ToolSpec]:
        """The scenario's tools: each records its call and returns its ``returns`` value."""
        overrides = overrides or {}
        specs = []
        for tool in self.scenarios[name].tools:
            handler = overrides.get(tool.name) or self._returns(tool.name, tool.behavior.returns)
            options = spec_options.get(tool.name, {})
            specs.append(
                ToolSpec(
                    tool.name,
                    tool.description,
                    tool.parameters,
                    handler,
                    require_confirmation=tool.require_confirmation,
                    **options,
                )
            )
        return specs

    def _returns(self, tool_name: str, value: Any) -> Callable[..., Any]:
        async def handler(**kwargs: Any) -> Any:
            self.calls.append((tool_name, kwargs))
            return value

        return handler

    def agent(
        self,
        name: str,
        config: AgentConfig | None = None,
        *,
        client: dict[str, Any] | None = None,
        overrides: dict[str, Callable[..., Any]] | None = None,
        **kwargs: Any,
    ) -> LightweightAgent:
        sc = self.scenarios[name]
        config = config or AgentConfig()
        if config.system_prompt is None:
            import dataclasses

            config = dataclasses.replace(config, system_prompt=sc.system_prompt)
        return LightweightAgent(
            self.client(name, **(client or {})), config, tools=self.tools(name, overrides), **kwargs
        )

    def bodies(self, name: str | None = None) -> list[dict[str, Any]]:
        return [r.body for r in self.mock.requests if name is None or r.scenario == name]


@pytest.fixture
async def harness_factory():
    made: list[Harness] = []

    def make(*scenarios: Scenario, **kwargs: Any) -> Harness:
        made.append(Harness(*scenarios, **kwargs))
        return made[-1]

    yield make
    for h in made:
        await h.http.aclose()
