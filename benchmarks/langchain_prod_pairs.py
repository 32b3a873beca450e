"""What LangChain's production configuration costs, and what it achieves (issue 11).

    .venv/bin/python benchmarks/langchain_prod_pairs.py [--runs 200] [--warmup 20]

1. **Cost**: ms per run of each plain LangChain engine against its production configuration
   (``lc-create-agent`` / ``lc-create-agent-prod``, ``lc-agentexecutor-nostream`` /
   ``lc-agentexecutor-prod``) on ``customer_returns`` and ``tool_flaky``, in-process mock,
   zero latency, the pattern of ``test_bench_engines.py``: each engine in its own fresh
   process, the agent built once, warm-up runs discarded, then the runs back to back; the
   engine's own ``wall_ms`` / ``cpu_ms`` / ``overhead_ms`` per run (median, p95, IQR).
   ``tool_flaky`` is not like for like: the plain engines fail at the first tool error,
   the production ones retry (with backoff sleeps, which CPU time leaves out).
2. **Outcomes**: each of the four new engines once on every fault scenario, judged by
   ``scenarios.expect.misses`` against the base expectation's outcome
   (``Expect.outcome()``), as the report judges the fault matrix.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.runner.offline import offline_env

offline_env(os.environ)

from bench.engines import RunContext, create_engine  # noqa: E402
from bench.referee import MockLLM  # noqa: E402
from bench.referee.transport import BASE_URL  # noqa: E402
from bench.runner.expectations import observed  # noqa: E402
from scenarios import load_scenarios  # noqa: E402
from scenarios.expect import misses  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAIRS = (
    ("lc-create-agent", "lc-create-agent-prod"),
    ("lc-agentexecutor-nostream", "lc-agentexecutor-prod"),
)
SCENARIOS = ("customer_returns", "tool_flaky")
NEW_ENGINES = (
    "lc-create-agent-prod",
    "lc-create-agent-builtins",
    "lc-agentexecutor-prod",
    "lc-agentexecutor-builtins",
)


async def _measure(engine_name: str, scenario_name: str, runs: int, warmup: int) -> dict:
    scenario = load_scenarios()[scenario_name]
    mock = MockLLM({scenario.name: scenario}, record=False)
    engine = create_engine(engine_name)
    prepared = await engine.prepare(RunContext(scenario=scenario, mock=mock, base_url=BASE_URL))
    wall, cpu, overhead, statuses = [], [], [], set()
    for i in range(warmup + runs):
        mock.reset()
        record = await engine.run(prepared)
        if i >= warmup:
            wall.append(record.wall_ms)
            cpu.append(record.cpu_ms)
            overhead.append(record.overhead_ms)
            statuses.add(record.status)
    await engine.aclose()
    q1, _, q3 = statistics.quantiles(wall, n=4)
    return {
        "engine": engine_name,
        "scenario": scenario_name,
        "status": "/".join(sorted(statuses)),
        "median_ms": statistics.median(wall),
        "p95_ms": statistics.quantiles(wall, n=20)[-1],
        "iqr_ms": q3 - q1,
        "cpu_median_ms": statistics.median(cpu),
        "overhead_median_ms": statistics.median(overhead),
    }


def _in_fresh_process(engine: str, scenario: str, runs: int, warmup: int) -> dict[str, Any]:
    argv = [__file__, "--worker", engine, "--scenario", scenario, "--runs", str(runs)]
    out = subprocess.run(
        [sys.executable, *argv, "--warmup", str(warmup)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"worker {engine} {scenario} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cost_table(runs: int, warmup: int) -> str:
    lines = [
        "| scenario | engine | status | median ms | p95 ms | IQR ms | CPU median ms "
        "| overhead median ms | × plain |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for scenario in SCENARIOS:
        for plain, prod in PAIRS:
            rows = [_in_fresh_process(name, scenario, runs, warmup) for name in (plain, prod)]
            for row in rows:
                ratio = row["median_ms"] / rows[0]["median_ms"]
                lines.append(
                    f"| {scenario} | {row['engine']} | {row['status']} | {row['median_ms']:.2f} "
                    f"| {row['p95_ms']:.2f} | {row['iqr_ms']:.2f} | {row['cpu_median_ms']:.2f} "
                    f"| {row['overhead_median_ms']:.2f} | {ratio:.2f} |"
                )
    return "\n".join(lines)


async def _outcomes() -> dict[str, dict[str, list[str]]]:
    scenarios = load_scenarios()
    faults = sorted(name for name, s in scenarios.items() if "fault" in s.tags)
    mock = MockLLM(scenarios, record=False)
    results: dict[str, dict[str, list[str]]] = {}
    for name in NEW_ENGINES:
        engine = create_engine(name)
        for scenario_name in faults:
            scenario = scenarios[scenario_name]
            mock.reset()
            ctx = RunContext(
                scenario=scenario,
                mock=mock,
                base_url=BASE_URL,
                run_timeout_s=scenario.limits.run_timeout_s,
            )
            record = await engine.run(await engine.prepare(ctx))
            seen = observed(record, scenario)
            results.setdefault(scenario_name, {})[name] = misses(scenario.expect.outcome(), seen)
        await engine.aclose()
    return results


def outcome_table() -> str:
    results = asyncio.run(_outcomes())
    lines = [
        "| scenario | " + " | ".join(NEW_ENGINES) + " |",
        "|---" * (len(NEW_ENGINES) + 1) + "|",
    ]
    passed = dict.fromkeys(NEW_ENGINES, 0)
    for scenario, by_engine in results.items():
        cells = []
        for name in NEW_ENGINES:
            missed = by_engine[name]
            passed[name] += not missed
            cells.append("pass" if not missed else "✗ " + "; ".join(missed))
        lines.append(f"| {scenario} | " + " | ".join(cells) + " |")
    total = len(results)
    lines.append("| **passed** | " + " | ".join(f"{passed[n]}/{total}" for n in NEW_ENGINES) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help="measure one engine in this process, print JSON")
    parser.add_argument("--scenario", default="customer_returns")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    if args.worker:
        result = asyncio.run(_measure(args.worker, args.scenario, args.runs, args.warmup))
        print(json.dumps(result))
        return
    print(f"in-process mock, zero latency, {args.runs} runs after {args.warmup} warm-up")
    print(cost_table(args.runs, args.warmup))
    print()
    print("fault scenarios, judged against the base expectation's outcome")
    print(outcome_table())


if __name__ == "__main__":
    main()
