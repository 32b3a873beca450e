"""What the scheduler's token budget costs, with texts that are new on every run.

For each scenario (default: ``long_conversation``, ``huge_tool_result``, ``customer_returns``)
the scheduler runs with its production guards in three token-counting modes, interleaved round
by round in one process against the in-process mock (zero latency, the scenario's real tools):

- ``off``: no token budget (``token_budget=None``);
- ``bounded``: the default — tokenized only when the request's UTF-8 size does not already
  prove it fits the budget;
- ``exact``: every request tokenized (``token_counting="exact"``).

Every run's user message carries the run's number, so no text repeats across runs anywhere
(the scheduler caches nothing across runs by design, ``scheduler/tokens.py``; the mock's own
caches cannot hit either). Prints per mode the median ms per run, the ratio to ``off`` and how
the runs ended (a budget may stop a run that ``off`` lets through: then the modes do different
work, and the output says so).

    .venv/bin/python benchmarks/token_budget_cost.py [scenario ...] [--rounds N] [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.engines.kit.tools import build_tools
from bench.engines.scheduler_engine import production_guards
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL, mock_async_client
from scenarios import Scenario, load_scenario
from scheduler import AgentConfig, LightweightAgent, OpenAIChatClient, ToolSpec

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ("long_conversation", "huge_tool_result", "customer_returns")
MODES = ("off", "bounded", "exact")


def make_agent(scenario: Scenario, client: Any, mode: str) -> LightweightAgent:
    limits = scenario.limits
    guards = production_guards(limits)
    if mode == "off":
        guards["token_budget"] = None
    llm = OpenAIChatClient(base_url=BASE_URL, model=f"scenario/{scenario.name}", http_client=client)
    config = AgentConfig(
        name=scenario.name,
        system_prompt=scenario.system_prompt,
        temperature=None,
        max_steps=limits.max_steps,
        tool_timeout=limits.tool_timeout_s,
        llm_timeout=limits.llm_timeout_s,
        token_counting="exact" if mode == "exact" else "bounded",
        **guards,
    )
    agent = LightweightAgent(llm, config)
    agent.register_tools(
        ToolSpec(t.name, t.description, t.parameters, t.acall) for t in build_tools(scenario)
    )
    return agent


def measure(name: str, rounds: int, runs: int) -> dict[str, Any]:
    scenario = load_scenario(ROOT / "scenarios" / f"{name}.yaml")
    history = [{"role": m.role, "content": m.content} for m in scenario.history] or None
    loop = asyncio.new_event_loop()
    client = mock_async_client(MockLLM({scenario.name: scenario}, record=False))
    agents = {mode: make_agent(scenario, client, mode) for mode in MODES}
    serial = itertools.count()
    endings: dict[str, Counter[str]] = {mode: Counter() for mode in MODES}

    async def once(mode: str) -> None:
        user = f"{scenario.user} (request {next(serial)})"  # a new text on every run
        result = await agents[mode].run(user, messages=history)
        endings[mode][f"{result.status.value}/{result.reason.value}"] += 1

    for mode in MODES:  # warm-up: tokenizer loaded, pools open
        loop.run_until_complete(once(mode))
    samples: dict[str, list[float]] = {mode: [] for mode in MODES}
    for _ in range(rounds):
        for mode in MODES:
            start = time.perf_counter()
            for _ in range(runs):
                loop.run_until_complete(once(mode))
            samples[mode].append((time.perf_counter() - start) / runs * 1000)
    loop.run_until_complete(client.aclose())
    loop.close()
    medians = {mode: statistics.median(values) for mode, values in samples.items()}
    return {
        "scenario": name,
        "ms_per_run": {m: round(v, 4) for m, v in medians.items()},
        "spread_ms": {m: [round(min(v), 4), round(max(v), 4)] for m, v in samples.items()},
        "ratio_to_off": {m: round(medians[m] / medians["off"], 3) for m in MODES},
        "endings": {m: dict(c) for m, c in endings.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", default=list(SCENARIOS))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    for name in args.scenarios:
        print(json.dumps(measure(name, args.rounds, args.runs)))


if __name__ == "__main__":
    main()
