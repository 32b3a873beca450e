"""The scheduler against a bare httpx loop: ``customer_returns`` (3 LLM calls, 2 tools),
in-process mock, zero latency, in the same process and on the same event loop.

The scheduler runs with every production feature on: trace, a registered hook, circuit
breakers, the bulkhead, the repeated-call guard, the request budget, the token budget (its
default ``bounded`` check: tokenized only when the request's size does not prove it fits),
timeouts and the LLM deadline. The interleaved run also measures ``token_counting="exact"``
(every request tokenized, nothing cached across runs) to show what exact counting costs.

    .venv/bin/pytest benchmarks/test_bench_scheduler.py --benchmark-enable
    .venv/bin/python benchmarks/test_bench_scheduler.py     # interleaved rounds + the ratio

The issue's target: scheduler median <= 1.3x the bare loop's median.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.referee import MockLLM
from bench.referee.transport import BASE_URL, mock_async_client
from scenarios import Scenario, load_scenario
from scheduler import AgentConfig, LightweightAgent, OpenAIChatClient, ToolSpec

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "customer_returns"


def _scenario() -> Scenario:
    return load_scenario(ROOT / "scenarios" / f"{SCENARIO}.yaml")


def _handlers(scenario: Scenario) -> dict[str, Callable[..., Any]]:
    """The same async handler for both contenders: return the scenario's value."""

    def make(value: Any) -> Callable[..., Any]:
        async def handler(**_: Any) -> Any:
            return value

        return handler

    return {t.name: make(t.behavior.returns) for t in scenario.tools}


class Bare:
    """The floor: post, run the tools, append, repeat. No trace, hooks, budget or retries."""

    def __init__(self, scenario: Scenario, client: httpx.AsyncClient):
        self.client = client
        self.url = BASE_URL + "/chat/completions"
        self.model = f"scenario/{scenario.name}"
        self.system, self.user = scenario.system_prompt, scenario.user
        self.schemas = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in scenario.tools
        ]
        self.handlers = _handlers(scenario)

    async def run(self) -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user},
        ]
        body = {"model": self.model, "messages": messages, "tools": self.schemas}
        while True:
            response = await self.client.post(self.url, json=body)
            response.raise_for_status()
            message = response.json()["choices"][0]["message"]
            messages.append(message)
            calls = message.get("tool_calls")
            if not calls:
                return message["content"]
            for call in calls:
                function = call["function"]
                result = await self.handlers[function["name"]](**json.loads(function["arguments"]))
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(result)}
                )


def make_agent(scenario: Scenario, client: httpx.AsyncClient, **overrides: Any) -> LightweightAgent:
    """The scheduler with every feature on (trace, hook, breaker, loop guard, budgets)."""
    llm = OpenAIChatClient(base_url=BASE_URL, model=f"scenario/{scenario.name}", http_client=client)
    config = AgentConfig(
        name="support",
        system_prompt=scenario.system_prompt,
        max_steps=scenario.limits.max_steps,
        token_budget=scenario.limits.token_budget,
        max_same_tool_calls=scenario.limits.max_same_tool_calls,
        breaker_threshold=scenario.limits.breaker_threshold,
        tool_timeout=scenario.limits.tool_timeout_s,
        llm_timeout=scenario.limits.llm_timeout_s,
        **overrides,
    )
    handlers = _handlers(scenario)
    tools = [
        ToolSpec(t.name, t.description, t.parameters, handlers[t.name]) for t in scenario.tools
    ]
    agent = LightweightAgent(llm, config, tools=tools)
    tool_log: list[str] = []
    agent.on(
        "after_tool",
        lambda *, state, result: tool_log.append(result.name) if len(tool_log) < 8 else None,
    )
    return agent


@pytest.fixture(scope="module")
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(scope="module")
def contenders(loop):
    scenario = _scenario()
    mock = MockLLM({scenario.name: scenario}, record=False)
    client = mock_async_client(mock)
    bare, agent = Bare(scenario, client), make_agent(scenario, client)
    expected = scenario.script[-1].content
    assert loop.run_until_complete(bare.run()) == expected  # warm: tokenizer, caches, pool
    result = loop.run_until_complete(agent.run(scenario.user))
    assert (result.status.value, result.reason.value, result.content) == (
        "completed",
        "stop",
        expected,
    )
    yield bare, agent, expected
    loop.run_until_complete(client.aclose())


@pytest.mark.benchmark(group="customer_returns")
def test_bare_httpx_loop(benchmark, loop, contenders):
    bare, _, expected = contenders
    assert benchmark(lambda: loop.run_until_complete(bare.run())) == expected


@pytest.mark.benchmark(group="customer_returns")
def test_scheduler_all_features(benchmark, loop, contenders):
    _, agent, expected = contenders
    result = benchmark(lambda: loop.run_until_complete(agent.run(_scenario_user)))
    assert (result.llm_calls, result.tool_calls, result.content) == (3, 2, expected)


_scenario_user = _scenario().user


def interleaved(rounds: int = 30, runs: int = 100) -> dict[str, float]:
    """Median per-run times, contenders interleaved round by round (drift hits both)."""
    loop = asyncio.new_event_loop()
    scenario = _scenario()
    client = mock_async_client(MockLLM({scenario.name: scenario}, record=False))
    bare, agent = Bare(scenario, client), make_agent(scenario, client)
    exact = make_agent(scenario, client, token_counting="exact")
    contenders = {
        "bare": bare.run,
        "scheduler": lambda: agent.run(scenario.user),
        "scheduler_exact": lambda: exact.run(scenario.user),
    }
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(3):  # warm-up
        for run in contenders.values():
            loop.run_until_complete(run())
    for _ in range(rounds):
        for name, run in contenders.items():
            start = time.perf_counter()
            for _ in range(runs):
                loop.run_until_complete(run())
            samples[name].append((time.perf_counter() - start) / runs * 1000)
    loop.close()
    out = {f"{name}_median_ms": statistics.median(values) for name, values in samples.items()}
    out["ratio"] = out["scheduler_median_ms"] / out["bare_median_ms"]
    out["ratio_exact"] = out["scheduler_exact_median_ms"] / out["bare_median_ms"]
    return out


def import_cost() -> dict[str, float]:
    """``import scheduler`` in a fresh interpreter: milliseconds and modules loaded."""
    code = (
        "import sys, time; t = time.perf_counter(); import scheduler; "
        "a = (time.perf_counter() - t) * 1000; n = len(sys.modules); "
        "t = time.perf_counter(); scheduler.OpenAIChatClient; "
        "b = (time.perf_counter() - t) * 1000; print(a, n, a + b, len(sys.modules))"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        )
        for _ in range(7)
    ]
    values = [list(map(float, r.stdout.split())) for r in runs]
    return {
        "import_scheduler_ms": statistics.median(v[0] for v in values),
        "import_scheduler_modules": values[0][1],
        "with_client_ms": statistics.median(v[2] for v in values),
        "with_client_modules": values[0][3],
    }


if __name__ == "__main__":
    figures = {**interleaved(), **import_cost()}
    print(json.dumps({k: round(v, 4) for k, v in figures.items()}, indent=2))
