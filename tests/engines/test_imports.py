"""Each engine imports only its own stack: import cost and module counts are measured per
engine, so an AgentExecutor worker must not load LangGraph, nor the scheduler LangChain.

(``scheduler`` itself is loaded everywhere: the mock counts tokens with ``scheduler.tokens``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import asyncio, json, sys
from bench.engines import RunContext, create_engine
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from scenarios import load_scenario
scenario = load_scenario("scenarios/customer_returns.yaml")
engine = create_engine(sys.argv[1])
async def main():
    ctx = RunContext(scenario=scenario, mock=MockLLM({scenario.name: scenario}), base_url=BASE_URL)
    return await engine.run(await engine.prepare(ctx))
record = asyncio.run(main())
stacks = ("langgraph", "langchain_classic", "langchain_core", "openai", "httpx2")
print(json.dumps([record.status, sorted(m for m in stacks if m in sys.modules)]))
"""

EXPECTED = {
    "raw": [],
    "scheduler": [],
    "lc-agentexecutor": ["httpx2", "langchain_classic", "langchain_core", "openai"],
    "lc-react": ["httpx2", "langchain_classic", "langchain_core", "openai"],
    "lc-create-agent": ["httpx2", "langchain_core", "langgraph", "openai"],
}


@pytest.mark.parametrize("engine_name", sorted(EXPECTED))
def test_an_engine_imports_only_its_own_stack(engine_name):
    out = subprocess.run(
        [sys.executable, "-c", PROBE, engine_name],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    assert json.loads(out.stdout.splitlines()[-1]) == ["completed", EXPECTED[engine_name]]
