"""The peer frameworks, each in its own environment: every adapter builds there under its
registry name; every peer engine plays four happy-path scenarios with each scenario's expected
outcome, and a transport error mid-stream as raw does; each production peer handles the guard
scenarios, run after run of one prepared agent. One process per environment builds the
adapters and plays all of that in-process (a framework's import is seconds of CPU); one
``schedbench run`` of each environment's production peer shows the same through the workers.

The environments are built once (``bench.envs``, cached in ``<project>/.envs``: ~20 s with a
warm uv cache, a few minutes on a machine that has never downloaded the wheels) and reused
by every later test and ``make bench``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.engines.registry import REGISTRY, REPRESENTATIVE, SPECS
from bench.envs import MAIN, ensure
from tests.once import once

ROOT = Path(__file__).resolve().parents[2]
# every peer framework's engine with its defaults (the -retries variants run faults only)
PEERS = tuple(
    s.name
    for s in SPECS
    if s.environment != MAIN and s.family != "langchain" and not s.outcome_only
)
QUICK = ("customer_returns", "single_tool", "sequential_chain", "parallel_tool_calls")
# every engine of every peer framework, its variants too
ALL_PEER_ENGINES = tuple(s.name for s in SPECS if s.environment != MAIN and s.family != "langchain")
# a connection dropped mid-answer, a stream that stalls past the read timeout: the openai SDK
# does not wrap what breaks after the headers, so the httpx error escapes (Strands wraps it
# in EventLoopException, LlamaIndex raises it as is)
TRANSPORT_FAULTS = ("llm_stream_dropped", "llm_stream_stall")

# the guard scenarios a production configuration must handle with its built-ins and its
# custom code (every -prod engine handles all 24 fault scenarios: docs/engines.md)
GUARD_SCENARIOS = (
    "confirmation_required",
    "huge_tool_result",
    "loop_detection",
    "malformed_tool_args",
    "max_steps",
    "tool_circuit_breaker",
    "tool_flaky",
    "unknown_tool",
)
CHECKS_AT_ONCE = 3  # environments checked side by side
PROD_PEERS = tuple(name for name in PEERS if REGISTRY[name].configuration == "production")
# the older LangChain lines' environments (their engines: tests/envs/test_versions.py)
LANGCHAIN_LINES = {
    s.environment for s in SPECS if s.environment != MAIN and s.family == "langchain"
}

# one process per environment: every adapter built there; every peer engine's quick run of
# each happy path and transport fault (its row as the worker writes it); each production
# peer's guard scenarios run three times on one prepared agent (what each run showed)
ENV_CHECK = """
import asyncio, importlib.util, json, sys, time
from bench.engines import RunContext, create_engine
from bench.engines.registry import REGISTRY
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from bench.runner.expectations import observed
from bench.runner.measured import error_row, record_row
from scenarios import load_scenarios

async def main(names, played, guarded, quick, guards):
    built, rows, runs = {}, {}, {}
    scenarios = load_scenarios()
    mock = MockLLM(scenarios=scenarios)
    for name in names:
        engine = create_engine(name)
        stack = all(importlib.util.find_spec(m) is not None for m in REGISTRY[name].stack)
        built[name] = [engine.name, bool(engine.streams), stack]
        for scenario in quick if name in played else ():
            ctx = RunContext(scenario=scenarios[scenario], mock=mock, base_url=BASE_URL)
            mock.reset()
            start = time.perf_counter()
            try:
                record = await engine.run(await engine.prepare(ctx))
                row = record_row(record, scenarios[scenario], name, time.perf_counter() - start, 0)
            except Exception as exc:  # as the worker writes it
                row = error_row(f"engine.run raised: {exc!r}")
            rows[f"{name} {scenario}"] = row.model_dump(include={"status", "termination", "error", "expect_ok"})
        for scenario in guards if name in guarded else ():
            ctx = RunContext(scenario=scenarios[scenario], mock=mock, base_url=BASE_URL)
            prepared = await engine.prepare(ctx)  # once: a service's agent, reused
            seen = []
            for _ in range(3):
                mock.reset()
                seen.append(observed(await engine.run(prepared), scenarios[scenario]))
            runs[f"{name} {scenario}"] = seen
        await engine.aclose()
    print(json.dumps({"built": built, "rows": rows, "runs": runs}))

asyncio.run(main(*(arg.split(",") if arg else [] for arg in sys.argv[1:6])))
"""


def quick_run(tmp_path: Path, engines: tuple[str, ...], scenarios: tuple[str, ...]) -> list[dict]:
    """``schedbench run`` of ``engines`` × ``scenarios``, one run each: its timed rows."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "bench.cli", "run", "--engines", ",".join(engines)]
    command += ["--scenarios", ",".join(scenarios), "--repeat", "1", "--warmup", "0"]
    command += ["--rounds", "1", "--no-throughput", "--no-ttft", "--no-footprint", "--no-load"]
    command += ["--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=850)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    return [r for r in rows if r["phase"] == "timed"]


@pytest.fixture(scope="module")
def peer_run(tmp_path_factory) -> tuple[list[dict], dict]:
    """Each environment's production peer on the quick happy paths, through ``schedbench
    run`` (its timed rows and meta.json): the worker path and every environment's record.
    Every other peer engine plays them in ``env_checks`` (a worker's start is its
    framework's import, seconds each)."""

    def build(base: Path) -> tuple[list[dict], dict]:
        rows = quick_run(base, PROD_PEERS, QUICK)
        return rows, json.loads((base / "run" / "meta.json").read_text())

    return tuple(once(tmp_path_factory, "peer-run", build))


def environments() -> dict[str, list[str]]:
    """Every engine outside the main environment, by its environment."""
    by_env: dict[str, list[str]] = {}
    for spec in SPECS:
        if spec.environment != MAIN:
            by_env.setdefault(spec.environment, []).append(spec.name)
    return by_env


@pytest.fixture(scope="module")
def env_checks(tmp_path_factory) -> dict[str, dict]:
    """``ENV_CHECK`` in every environment (a framework's import is seconds: one per env)."""

    def check(env_name: str, names: list[str]) -> dict:
        played = [n for n in names if n in ALL_PEER_ENGINES]
        guarded = [n for n in names if n in PROD_PEERS]
        lists = (names, played, guarded, QUICK + TRANSPORT_FAULTS, GUARD_SCENARIOS)
        done = subprocess.run(
            [ensure(env_name).python, "-c", ENV_CHECK, *(",".join(x) for x in lists)],
            capture_output=True, text=True, cwd=ROOT, timeout=600,
        )  # fmt: skip
        assert done.returncode == 0, f"{env_name}: {done.stderr[-3000:]}"
        return json.loads(done.stdout.splitlines()[-1])

    def build(_folder: Path) -> dict[str, dict]:
        # three at a time: much of a check waits on scripted faults and deadlines (one after
        # another: 139 s of wall time for 55 s of CPU)
        envs = environments()
        with ThreadPoolExecutor(max_workers=CHECKS_AT_ONCE) as pool:
            return dict(zip(envs, pool.map(check, envs, envs.values()), strict=True))

    return once(tmp_path_factory, "peer-env-checks", build)


def test_the_peers_are_the_frameworks_users_expect_with_their_configurations():
    families = {REGISTRY[name].family for name in PEERS}
    expected = {"openai-agents", "pydantic-ai", "llamaindex", "agno", "strands"}
    assert expected | {"autogen", "agent-framework"} <= families
    for family in families:
        default = REPRESENTATIVE[family]
        variant = REGISTRY[f"{default}-retries"]
        assert variant.variant_of == default and variant.outcome_only
        # every peer has a production configuration with its built-in and custom code
        prod = REGISTRY[f"{default}-prod"]
        assert (prod.configuration, prod.environment) == (
            "production",
            REGISTRY[default].environment,
        )
        assert {part for part, _ in prod.config_code} == {"built-in", "custom"}
    # the streaming defaults have their documented non-streaming variant
    for name in ("llamaindex", "strands"):
        assert REGISTRY[name].streams and not REGISTRY[f"{name}-nostream"].streams


@pytest.mark.timeout(900)
def test_every_non_main_adapter_builds_in_its_environment(env_checks):
    for env_name, names in environments().items():
        built = env_checks[env_name]["built"]
        assert built == {n: [n, REGISTRY[n].streams, True] for n in names}, env_name


@pytest.mark.timeout(900)
def test_every_peer_meets_each_happy_paths_expectations(env_checks):
    rows = {k: v for check in env_checks.values() for k, v in check["rows"].items()}
    outcomes = {
        (engine, scenario): (row["status"], row["termination"], row["expect_ok"])
        for (engine, scenario), row in ((key.split(), row) for key, row in rows.items())
        if engine in PEERS and scenario in QUICK
    }
    assert outcomes == {
        (engine, scenario): ("completed", "stop", True) for engine in PEERS for scenario in QUICK
    }


@pytest.mark.timeout(900)
def test_a_quick_run_of_each_production_peer_meets_them_through_its_worker(peer_run):
    rows, meta = peer_run
    outcomes = {
        (r["engine"], r["scenario"]): (r["status"], r["termination"], r["expect_ok"]) for r in rows
    }
    assert outcomes == {
        (engine, scenario): ("completed", "stop", True)
        for engine in PROD_PEERS
        for scenario in QUICK
    }
    assert {REGISTRY[e].environment for e in PROD_PEERS} == set(environments()) - LANGCHAIN_LINES
    for engine in PROD_PEERS:
        env = meta["environments"][REGISTRY[engine].environment]
        assert env["status"] == "ok"
        assert env["packages"]["schedbench"] == "0.1.0"  # the harness, installed editable


@pytest.mark.timeout(900)
def test_a_transport_error_mid_stream_is_an_llm_error_on_every_peer(env_checks):
    """The httpx error that ends a run is scored as ``raw`` scores it: ``failed`` /
    ``llm_error`` — never ``error`` (a framework that retried the call completes; one whose
    retries outlast the run deadline is ``aborted`` / ``timeout``)."""
    rows = {k: v for check in env_checks.values() for k, v in check["rows"].items()}
    endings = {
        tuple(key.split()): (row["status"], row["termination"], row["error"])
        for key, row in rows.items()
        if key.split()[1] in TRANSPORT_FAULTS
    }
    assert set(endings) == {(e, s) for e in ALL_PEER_ENGINES for s in TRANSPORT_FAULTS}
    allowed = {("completed", "stop"), ("failed", "llm_error"), ("aborted", "timeout")}
    wrong = {key: ending for key, ending in endings.items() if ending[:2] not in allowed}
    assert wrong == {}


@pytest.mark.timeout(900)
def test_every_production_peer_handles_the_guard_scenarios(env_checks):
    from scenarios import load_scenarios
    from scenarios.expect import misses

    scenarios = load_scenarios()
    judged = {}
    for check in env_checks.values():
        for key, seen in check["runs"].items():
            engine, scenario = key.split()
            judged[(engine, scenario)] = misses(scenarios[scenario].expect.outcome(), seen[0])
    assert judged == {(e, s): [] for e in PROD_PEERS for s in GUARD_SCENARIOS}


@pytest.mark.timeout(900)
def test_runs_of_one_prepared_production_peer_keep_their_own_guard_counts(env_checks):
    """The loop guard's counts, the breaker and the step count belong to the run: the third
    run of one prepared agent ends as the first did (an agent built once per service)."""
    ending = ("status", "termination", "llm_calls", "tool_calls", "tools")
    for check in env_checks.values():
        runs = {key: [[r[k] for k in ending] for r in seen] for key, seen in check["runs"].items()}
        assert {key: [r == rs[0] for r in rs] for key, rs in runs.items()} == {
            key: [True] * 3 for key in runs
        }, runs
