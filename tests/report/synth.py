"""Synthetic benchmark results for the report's tests: every number is a parameter.

Engines are the registry's (those it knows today): the floor, our scheduler in its plain and
production configurations, LangChain's default engines and, where registered, its
production configurations. Runs are spread over rounds like the runner's.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bench.engines.registry import REGISTRY
from bench.report.frames import RunData
from bench.results import metrics
from bench.results.files import dumps_line
from bench.results.rows import CatalogueRecord, LoadRow, ProfileRow

WANTED = (
    "raw",
    "scheduler-plain",
    "scheduler",
    "scheduler-stream",
    "lc-create-agent",
    "lc-create-agent-prod",
    "lc-create-agent-builtins",
    "lc-agentexecutor",
    "lc-agentexecutor-nostream",
    "lc-agentexecutor-prod",
    "lc-react",
)
ENGINES = tuple(e for e in WANTED if e in REGISTRY)
LC_PROD = "lc-create-agent-prod" if "lc-create-agent-prod" in REGISTRY else "lc-create-agent"
HAPPY = {"customer_returns": 3, "single_tool": 2, "long_conversation": 2}
FAULTS = {
    "tool_flaky": 4,
    "tool_timeout": 3,
    "llm_rate_limit": 2,
    "llm_server_error": 2,
    "max_steps": 5,
}
FAULT_KINDS = {
    "tool_flaky": "tool",
    "tool_timeout": "tool",
    "llm_rate_limit": "llm",
    "llm_server_error": "llm",
    "max_steps": "guard",
}
ROUNDS = 4
HOSTILE = '<script>alert(1)</script><img src=x onerror="window.__pwned=true">'


@dataclass
class Params:
    step_ms: dict[str, float] = field(
        default_factory=lambda: {
            "raw": 0.17,
            "scheduler-plain": 0.30,
            "scheduler": 0.35,
            "scheduler-stream": 0.5,
            "lc-create-agent": 2.4,
            "lc-create-agent-prod": 3.0,
            "lc-create-agent-builtins": 2.8,
            "lc-agentexecutor": 4.5,
            "lc-agentexecutor-nostream": 2.3,
            "lc-agentexecutor-prod": 2.6,
            "lc-react": 5.0,
        }
    )
    noise: float = 0.1  # lognormal sigma of each run's step time
    cpu_share: float = 0.95  # CPU ms = share x overhead
    tokens_base: int = 300
    token_overhead: dict[str, float] = field(
        default_factory=lambda: {"lc-react": 160.0, "lc-agentexecutor": 2.0}
    )
    # what each engine adds to the time to first token (the TTFT phase)
    ttft_added_ms: dict[str, float] = field(
        default_factory=lambda: {
            "raw": 0.1,
            "scheduler-plain": 0.4,
            "scheduler": 0.45,
            "lc-create-agent": 3.0,
            "lc-create-agent-prod": 2.6,
            "lc-agentexecutor": 9.0,
        }
    )
    # engine -> scenario -> status; default: completed with the right answer
    fault_status: dict[str, dict[str, str]] = field(
        default_factory=lambda: {
            "raw": {"tool_flaky": "error", "tool_timeout": "error", "llm_rate_limit": "error"},
            "lc-agentexecutor": {"tool_timeout": "error", "tool_flaky": "failed"},
            "lc-agentexecutor-nostream": {"tool_timeout": "error", "tool_flaky": "failed"},
            "lc-react": {"tool_timeout": "error", "tool_flaky": "failed"},
            "lc-create-agent": {"tool_timeout": "error"},
            "lc-create-agent-builtins": {"tool_timeout": "aborted"},
        }
    )
    modules: dict[str, float] = field(
        default_factory=lambda: {
            "raw": 210,
            "scheduler-plain": 260,
            "scheduler": 270,
            "scheduler-stream": 270,
            "lc-create-agent": 1900,
            "lc-create-agent-prod": 1950,
            "lc-agentexecutor": 1640,
            "lc-agentexecutor-nostream": 1640,
            "lc-react": 1650,
        }
    )
    scheduler_lines: int = 2400  # the package
    loop_lines: int = 300  # the core loop file
    config_statements: dict[str, tuple[int, int]] = field(  # engine -> (built-in, custom)
        default_factory=lambda: {"scheduler": (2, 13), "lc-create-agent-prod": (15, 60)}
    )
    peak_rps: dict[str, float] = field(
        default_factory=lambda: {
            "raw": 2000,
            "scheduler-plain": 950,
            "scheduler": 900,
            "scheduler-stream": 700,
            "lc-create-agent": 120,
            "lc-create-agent-prod": 90,
            "lc-agentexecutor": 70,
            "lc-agentexecutor-nostream": 130,
            "lc-react": 60,
        }
    )
    # engine -> {mode: (recall, bytes, failing call localised)}
    debug: dict[str, dict[str, tuple[float, float, bool]]] = field(
        default_factory=lambda: {
            "scheduler": {"tree": (0.65, 1200, True), "json": (0.95, 3000, True)},
            "lc-create-agent": {"set-debug": (0.7, 90000, False)},
            "lc-agentexecutor": {"verbose": (0.6, 40000, False)},
        }
    )
    # the profiling probe: engine -> share of its sampled time in callbacks + runnables
    callback_share: dict[str, float] = field(
        default_factory=lambda: {"raw": 0.0, "scheduler": 0.0, "lc-create-agent": 0.04}
    )
    # the customisation catalogue: engine -> (cells needing internals, cells not possible,
    # statements of each working cell); None: no catalogue.json
    catalogue: dict[str, tuple[int, int, int]] | None = field(
        default_factory=lambda: {
            "scheduler": (0, 0, 6),
            "lc-create-agent": (0, 0, 5),
            "lc-agentexecutor": (1, 0, 6),
        }
    )
    catalogue_cells: int = 9
    # false simplicity: engine -> (statements of the simple program, of the complex one)
    simplicity: dict[str, tuple[int, int]] = field(
        default_factory=lambda: {
            "scheduler": (9, 21),
            "lc-create-agent": (7, 27),
            "lc-agentexecutor": (12, 27),
        }
    )
    repeats: int = 12
    engines: tuple[str, ...] = ENGINES
    final_answer: str = "Order A123 can be returned within 30 days."
    scenario_description: str = "A scenario."
    with_optional: bool = True
    hostile: bool = False  # put HOSTILE into every text field that reaches the report


def load_rows(capacities: dict[str, float], seed: int = 1) -> list[LoadRow]:
    """load.jsonl levels of a sweep per engine at 1 and 2 processes: a level is sustained
    (runs at ~2.1 s, the target 2.4 s) when its rate is within the engine's capacity for
    that many processes (``capacities``: one process), else over the target."""
    rng = np.random.default_rng(seed)
    rows = []
    for engine, one in capacities.items():
        for processes in (1, 2):
            for rate in (25.0, 50.0, 100.0, 200.0, 400.0):
                ok = rate <= one * processes
                n = 50
                base = 2100.0 if ok else 2600.0
                latencies = [
                    round(base + float(v), 3) for v in rng.exponential(40 if ok else 400, n)
                ]
                row = {
                    "kind": "level", "engine": engine, "scenario": "customer_returns",
                    "latency": "realistic", "transport": "loopback", "processes": processes,
                    "rate": rate, "stream": None, "seed": 0, "scripted_ms": 2000.0,
                    "target_ms": 2400.0, "ramp_s": 2.0, "window_s": 1.0, "timeout_s": 4.8,
                    "mock_processes": 2, "scheduled": n, "ok": n, "wrong": 0, "failed": 0,
                    "timeouts": 0, "cut": 0, "not_run": 0, "latencies_ms": latencies,
                    "interval_s": 1.0, "completions": int(rate if ok else rate / 2),
                    "cpu_s": 0.3, "cpu_slices": [[0.03, int(rate) // 10]] * 10,
                    "peak_rss_mb": 100.0, "mock_cpu_per_s": 0.2, "host_cpu_per_s": 1.0,
                    "engine_cpu_total_per_s": 0.7, "mock_cpu_total_per_s": 0.3,
                    "stopped": None, "elapsed_s": 5.0, "pids": [1] * processes,
                }  # fmt: skip
                rows.append(LoadRow.model_validate_json(dumps_line(row)))
    return rows


@functools.cache
def _load_levels(capacities: tuple[tuple[str, float], ...]) -> tuple[metrics.LoadLevel, ...]:
    """``load_rows`` read as levels, once per capacities: their latency bootstraps were most
    of ``make``'s time, and the cases mostly share them (levels are immutable)."""
    return tuple(metrics.load_levels(load_rows(dict(capacities))))


def make(p: Params | None = None, seed: int = 1) -> RunData:
    p = p or Params()
    rng = np.random.default_rng(seed)
    evil = HOSTILE if p.hostile else ""
    happy = dict(HAPPY)
    if p.hostile:
        happy[f"evil_{HOSTILE}"] = happy.pop("single_tool")
    rows = []
    for engine in p.engines:
        for scenario, calls in {**happy, **FAULTS}.items():
            status = p.fault_status.get(engine, {}).get(scenario, "completed")
            for i in range(p.repeats):
                step = p.step_ms[engine] * rng.lognormal(0, p.noise)
                overhead = step * calls
                tool = 0.05 * calls
                tpr = p.tokens_base + p.token_overhead.get(engine, 0.0)
                rows.append(
                    {
                        "engine": engine,
                        "scenario": scenario,
                        "round": i % ROUNDS,
                        "repeat": i,
                        "status": status,
                        "termination": "stop" if status == "completed" else "timeout",
                        "wall_ms": overhead + tool,
                        "cpu_ms": overhead * p.cpu_share,
                        "tool_ms": tool,
                        "mock_latency_ms": 0.0,
                        "llm_calls": calls,
                        "tool_calls": calls - 1,
                        "prompt_tokens": int(tpr * calls),
                        "completion_tokens": 20 * calls,
                        "ttft_ms": None,
                        "final_answer": p.final_answer + evil if status == "completed" else None,
                        "error": None if status == "completed" else "ToolTimeout: slow" + evil,
                        "tools": ["lookup" + evil] * (calls - 1),
                        "expect_ok": status == "completed",
                    }
                )
    runs = pd.DataFrame(rows)
    scen = pd.DataFrame(
        [
            {
                "scenario": name,
                "description": p.scenario_description + evil,
                "tags": ("fault",) if name in FAULTS else ("happy-path", *([evil] if evil else [])),
                "fault": name in FAULTS,
                "fault_kind": FAULT_KINDS.get(name),
                "expect_outcome": {"status": "completed", "final_contains": "30 days"},
                "expect_status": "completed",
                "expect_termination": None,
                "expect_final_contains": "30 days",
                "expect_tools": None,
            }
            for name in {**happy, **FAULTS}
        ]
    )
    if not p.with_optional:
        return RunData(runs=runs, scenarios=scen, meta={"run_id": "synthetic"})
    return RunData(
        runs=runs,
        scenarios=scen,
        meta={
            "run_id": "synthetic",
            "python": "3.11.7",
            "machine": {"cpu": "Synthetic CPU", "cpu_count": 2, "yardstick_ms": 25.0},
            "git": {"sha": "0123abc"},
            "packages": {"langchain": "1.0.0", "httpx": "0.28.1", "zzz": "1" + evil},
            "hostname": "box" + evil,
        },
        footprint=_footprint(p),
        throughput=_throughput(p),
        debuggability=_debuggability(p, evil),
        code_size=_code(p),
        ttft=_ttft(p, rng),
        profile=_profile(p),
        catalogue=_catalogue(p, evil),
        load_levels=_load_levels(
            tuple((e, v / 10) for e, v in p.peak_rps.items() if e in p.engines)
        ),
    )


def _catalogue(p: Params, evil: str) -> CatalogueRecord | None:
    """catalogue.json: the first cells of each engine need internals, the next are not
    possible, the rest work with public API."""
    if p.catalogue is None:
        return None
    keys = [f"custom_{i}" for i in range(p.catalogue_cells)]
    cells = []
    for engine, (internals, impossible, statements) in p.catalogue.items():
        for i, key in enumerate(keys):
            implemented = not internals <= i < internals + impossible
            cells.append(
                {
                    "engine": engine,
                    "customisation": key,
                    "works": implemented,
                    "implemented": implemented,
                    "statements": statements if implemented else None,
                    "needs_internals": i < internals,
                    "internals": ["monkeypatching"] if i < internals else [],
                    "note": "how it is done" + evil,
                    "failures": [] if implemented else ["not possible" + evil],
                }
            )
    programs = [
        {"engine": e, "case": case, "statements": n, "works": True}
        for e, sizes in p.simplicity.items()
        for case, n in zip(("simple", "complex"), sizes, strict=True)
    ]
    record = {
        "schema_version": 1,
        "customisations": [{"key": k, "title": f"customisation {k}" + evil} for k in keys],
        "cells": cells,
        "simplicity": programs,
    }
    return CatalogueRecord.model_validate_json(json.dumps(record))


def _footprint(p: Params) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"engine": e, "import_ms": m * 0.45, "modules": m, "rss_mb": 20 + m / 25}
            for e, m in p.modules.items()
            if e in p.engines
        ]
    )


def _throughput(p: Params) -> pd.DataFrame:
    tp = []
    for e, peak in p.peak_rps.items():
        if e not in p.engines:
            continue
        for c in (1, 10, 50):
            rps = min(peak * c / 5, peak)
            tp.append(
                {
                    "engine": e,
                    "latency_profile": "zero",
                    "concurrency": c,
                    "runs_per_s": rps,
                    "p50_ms": 1000 * c / rps,
                    "p95_ms": 1300 * c / rps,
                    "p99_ms": 1500 * c / rps,
                }
            )
    return pd.DataFrame(tp)


def _debuggability(p: Params, evil: str) -> pd.DataFrame:
    rows = []
    for e, modes in p.debug.items():
        for mode, (recall, nbytes, localised) in modes.items():
            for s in ("tool_flaky", "tool_timeout"):
                rows.append(
                    {
                        "engine": e,
                        "mode": mode + evil,
                        "scenario": s,
                        "recall": recall,
                        "bytes": nbytes,
                        "bytes_per_fact": nbytes / max(recall * 8, 1e-9),
                        "localised": localised,
                        "mode_cost_ms": 0.1,
                    }
                )
    return pd.DataFrame(rows)


def _code(p: Params) -> pd.DataFrame:
    rows = [
        ("scheduler", "code", "scheduler", p.scheduler_lines),
        ("scheduler core loop", "code", "scheduler/loop.py", p.loop_lines),
        ("langchain_baseline", "code", "langchain_baseline", 150),
    ]
    for engine, (builtin, custom) in p.config_statements.items():
        rows.append((f"{engine} configuration", "built-in", f"{engine}::builtin", builtin))
        rows.append((f"{engine} configuration", "custom", f"{engine}::custom", custom))
    return pd.DataFrame(
        [
            {
                "component": c,
                "part": part,
                "path": path,
                "files": 1,
                "statements": n,
                "nodes": n * 8,
                "logical_lines": n,
            }
            for c, part, path, n in rows
        ]
    )


def _ttft(p: Params, rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for engine, added in p.ttft_added_ms.items():
        if engine not in p.engines:
            continue
        for _ in range(10):
            own = added * rng.lognormal(0, p.noise)
            rows.append(
                {
                    "engine": engine,
                    "scenario": "streaming_long_answer",
                    "latency_profile": "ttft",
                    "status": "completed",
                    "ttft_ms": 200.0 + own,
                    "floor_ttft_ms": 200.0,
                    "scripted_ttft_ms": 200.0,
                    "ttft_overhead_ms": own,
                }
            )
    return pd.DataFrame(rows)


def _profile(p: Params) -> tuple[ProfileRow, ...]:
    rows = []
    for engine, share in p.callback_share.items():
        if engine not in p.engines:
            continue
        callbacks = round(1000 * share)
        samples = {"langchain_core.callbacks": callbacks, "httpx": 600, "asyncio": 400 - callbacks}
        samples = {g: n for g, n in samples.items() if n > 0}
        rows.append(
            ProfileRow.model_validate(
                {
                    "engine": engine,
                    "scenario": "customer_returns",
                    "kind": "scenario",
                    "status": "ok",
                    "llm_calls": 3,
                    "tool_calls": 2,
                    "calls_per_run": (3000, 3000),
                    "wall_ms": (4.0,),
                    "sampled_wall_ms": (4.4,),
                    "cprofile_wall_ms": (10.0,),
                    "mock_ms": (0.4,),
                    "send_depths": (15, 15),
                    "send_modules": (5, 5),
                    "send_classes": (4, 4),
                    "tool_depths": (7,),
                    "tool_modules": (4,),
                    "tool_classes": (3,),
                    "samples": sum(samples.values()),
                    "samples_by_group": samples,
                    "leaf_samples_by_group": samples,
                    "cprofile_ms_by_group": {g: float(n) for g, n in samples.items()},
                    "samples_in_mock": 1,
                }
            )
        )
    return tuple(rows)
