"""Every engine on ``customer_returns`` (3 LLM calls, 2 tools), in-process mock, zero latency.

Two ways to run it:

    .venv/bin/python benchmarks/test_bench_engines.py            # the table (authoritative)
    .venv/bin/pytest benchmarks/test_bench_engines.py --benchmark-enable

The script measures each engine in its **own fresh process** (``--worker ENGINE``): one
event loop, the agent built once (``prepare``, untimed), warm-up runs discarded, then
``--runs`` runs awaited back to back inside one coroutine. Per run it keeps the engine's
own ``RunRecord.wall_ms`` / ``cpu_ms`` (``perf_counter`` / ``process_time`` around
``execute``; the accounting that follows is not timed) and prints median, p95 and the
IQR. Engines run one after the other; run it twice if the machine is noisy.

The pytest-benchmark tests run all engines in the pytest process, one
``loop.run_until_complete`` per round: that adds the same few tens of microseconds to
every engine, so use them for regressions, the script for the table.
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

import pytest  # noqa: E402

from bench.engines import MAIN_ENGINES, RunContext, create_engine  # noqa: E402
from bench.referee import MockLLM  # noqa: E402
from bench.referee.transport import BASE_URL  # noqa: E402
from scenarios import load_scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = "customer_returns"


async def _prepare(engine_name: str) -> tuple[Any, Any, Any]:
    scenario = load_scenario(ROOT / "scenarios" / f"{SCENARIO}.yaml")
    mock = MockLLM({scenario.name: scenario}, record=False)
    engine = create_engine(engine_name)
    prepared = await engine.prepare(RunContext(scenario=scenario, mock=mock, base_url=BASE_URL))
    return engine, prepared, scenario


def _check(record: Any, scenario: Any) -> None:
    expect = scenario.expect.for_engine(record.engine)
    got = (record.status, record.llm_calls, record.tool_calls)
    want = (expect["status"], expect["llm_calls"], expect["tool_calls"])
    if got != want:
        raise AssertionError(f"{record.engine}: {got} != {want} ({record.error})")


async def _measure(engine_name: str, runs: int, warmup: int) -> dict[str, Any]:
    engine, prepared, scenario = await _prepare(engine_name)
    for _ in range(warmup):
        _check(await engine.run(prepared), scenario)
    wall, cpu = [], []
    for _ in range(runs):
        record = await engine.run(prepared)
        _check(record, scenario)
        wall.append(record.wall_ms)
        cpu.append(record.cpu_ms)
    await engine.aclose()
    q1, _, q3 = statistics.quantiles(wall, n=4)
    return {
        "engine": engine_name,
        "runs": runs,
        "median_ms": statistics.median(wall),
        "p95_ms": statistics.quantiles(wall, n=20)[-1],
        "iqr_ms": q3 - q1,
        "cpu_median_ms": statistics.median(cpu),
        "modules": len(sys.modules),
    }


def measure_in_fresh_processes(
    engines: list[str], runs: int = 300, warmup: int = 30
) -> list[dict[str, Any]]:
    results = []
    for name in engines:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--worker",
                name,
                "--runs",
                str(runs),
                "--warmup",
                str(warmup),
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
        if out.returncode != 0:
            raise RuntimeError(f"worker {name} failed:\n{out.stderr[-3000:]}")
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return results


def table(results: list[dict[str, Any]]) -> str:
    raw = next((r["median_ms"] for r in results if r["engine"] == "raw"), None)
    lines = [
        "| engine | median ms | p95 ms | IQR ms | CPU median ms | × raw | modules |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        ratio = f"{r['median_ms'] / raw:.1f}" if raw else "-"
        lines.append(
            f"| {r['engine']} | {r['median_ms']:.3f} | {r['p95_ms']:.3f} | {r['iqr_ms']:.3f} "
            f"| {r['cpu_median_ms']:.3f} | {ratio} | {r['modules']} |"
        )
    return "\n".join(lines)


# -- pytest-benchmark ------------------------------------------------------------------


@pytest.fixture(scope="module")
def loop():
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.mark.benchmark(group="engines-customer_returns")
@pytest.mark.parametrize("engine_name", MAIN_ENGINES)
def test_engine_customer_returns(benchmark, loop, engine_name):
    engine, prepared, scenario = loop.run_until_complete(_prepare(engine_name))
    for _ in range(10):  # warm-up: imports, tokenizer, caches, pools
        _check(loop.run_until_complete(engine.run(prepared)), scenario)
    record = benchmark.pedantic(
        lambda: loop.run_until_complete(engine.run(prepared)), rounds=200, warmup_rounds=5
    )
    _check(record, scenario)
    loop.run_until_complete(engine.aclose())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help="measure one engine in this process, print JSON")
    parser.add_argument("--engines", default=",".join(MAIN_ENGINES))
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()
    if args.worker:
        result = asyncio.run(_measure(args.worker, args.runs, args.warmup))
        print(json.dumps(result))
        return
    results = measure_in_fresh_processes(args.engines.split(","), args.runs, args.warmup)
    print(
        f"{SCENARIO}, in-process mock, zero latency, {args.runs} runs after {args.warmup} warm-up"
    )
    print(table(results))


if __name__ == "__main__":
    main()
