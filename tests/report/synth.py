"""Synthetic benchmark results for the report's tests: every number is a parameter."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from bench.report.model import RunData
from bench.results import metrics
from bench.results.files import dumps_line
from bench.results.rows import LoadRow

ENGINES = (
    "raw",
    "scheduler",
    "scheduler-stream",
    "lc-agentexecutor",
    "lc-agentexecutor-nostream",
    "lc-react",
    "lc-create-agent",
)
HAPPY = {"customer_returns": 3, "single_tool": 2, "long_conversation": 2}
FAULTS = {
    "tool_flaky": 4,
    "tool_timeout": 3,
    "llm_rate_limit": 2,
    "llm_server_error": 2,
    "max_steps": 5,
}
HOSTILE = '<script>alert(1)</script><img src=x onerror="window.__pwned=true">'


@dataclass
class Params:
    step_ms: dict[str, float] = field(
        default_factory=lambda: {
            "raw": 0.17,
            "scheduler": 0.35,
            "scheduler-stream": 0.5,
            "lc-agentexecutor": 4.5,
            "lc-agentexecutor-nostream": 2.3,
            "lc-react": 5.0,
            "lc-create-agent": 2.4,
        }
    )
    cpu_share: float = 0.95  # CPU ms = share x overhead
    tokens_base: int = 300
    token_overhead: dict[str, float] = field(
        default_factory=lambda: {"lc-react": 160.0, "lc-agentexecutor": 2.0}
    )
    ttft_ms: dict[str, float] = field(
        default_factory=lambda: {
            "scheduler-stream": 0.4,
            "lc-agentexecutor": 3.0,
            "lc-create-agent": 2.0,
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
        }
    )
    modules: dict[str, float] = field(
        default_factory=lambda: {
            "raw": 210,
            "scheduler": 260,
            "scheduler-stream": 260,
            "lc-agentexecutor": 1640,
            "lc-agentexecutor-nostream": 1640,
            "lc-react": 1650,
            "lc-create-agent": 1900,
        }
    )
    scheduler_lines: int = 480
    baseline_lines: int = 150
    peak_rps: dict[str, float] = field(
        default_factory=lambda: {
            "raw": 2000,
            "scheduler": 900,
            "scheduler-stream": 700,
            "lc-agentexecutor": 70,
            "lc-agentexecutor-nostream": 130,
            "lc-react": 60,
            "lc-create-agent": 120,
        }
    )
    # engine -> (mode, recall, bytes, failing step localised)
    debug: dict[str, tuple[str, float, float, bool]] = field(
        default_factory=lambda: {
            "scheduler": ("trace", 0.95, 3000, True),
            "lc-agentexecutor": ("verbose", 0.6, 40000, False),
            "lc-create-agent": ("debug", 0.7, 90000, False),
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
            for _ in range(p.repeats):
                step = p.step_ms[engine] * rng.lognormal(0, 0.1)
                overhead = step * calls
                tool = 0.05 * calls
                tpr = p.tokens_base + p.token_overhead.get(engine, 0.0)
                ttft = p.ttft_ms.get(engine)
                rows.append(
                    {
                        "engine": engine,
                        "scenario": scenario,
                        "status": status,
                        "termination": "stop" if status == "completed" else "tool_timeout",
                        "wall_ms": overhead + tool,
                        "cpu_ms": overhead * p.cpu_share,
                        "tool_ms": tool,
                        "mock_latency_ms": 0.0,
                        "llm_calls": calls,
                        "tool_calls": calls - 1,
                        "prompt_tokens": int(tpr * calls),
                        "completion_tokens": 20 * calls,
                        "ttft_ms": None if ttft is None else ttft * rng.lognormal(0, 0.1),
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
    footprint = pd.DataFrame(
        [
            {"engine": e, "import_ms": m * 0.45, "modules": m, "rss_mb": 20 + m / 25}
            for e, m in p.modules.items()
            if e in p.engines
        ]
    )
    tp = []
    for e, peak in p.peak_rps.items():
        if e not in p.engines:
            continue
        for profile, scale in (("zero", 1.0), ("realistic", 0.05)):
            for c in (1, 10, 50):
                rps = min(peak * scale * c / 5, peak * scale) if profile == "zero" else c * 0.9
                rps = min(rps, peak)
                tp.append(
                    {
                        "engine": e,
                        "latency_profile": profile,
                        "concurrency": c,
                        "runs_per_s": rps,
                        "p50_ms": 1000 * c / rps,
                        "p95_ms": 1300 * c / rps,
                        "p99_ms": 1500 * c / rps,
                    }
                )
    dbg = []
    for e, (mode, recall, nbytes, localised) in p.debug.items():
        for s in ("tool_flaky", "tool_timeout"):
            dbg.append(
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
        dbg.append(
            {
                "engine": e,
                "mode": "off",
                "scenario": "tool_flaky",
                "recall": 0.0,
                "bytes": 0,
                "bytes_per_fact": None,
                "localised": False,
                "mode_cost_ms": 0.0,
            }
        )
    code = pd.DataFrame(
        [
            {"component": "scheduler", "path": "scheduler", "files": 9, "lines": p.scheduler_lines},
            {
                "component": "scheduler core loop",
                "path": "scheduler/agent.py",
                "files": 1,
                "lines": min(p.scheduler_lines, 250),
            },
            {
                "component": "langchain_baseline",
                "path": "langchain_baseline",
                "files": 4,
                "lines": p.baseline_lines,
            },
        ]
    )
    return RunData(
        runs=runs,
        scenarios=scen,
        meta={
            "run_id": "synthetic",
            "python": "3.11.7",
            "machine": {"cpu": "Synthetic CPU", "cpu_count": 2},
            "git": {"sha": "0123abc"},
            "packages": {"langchain": "1.0.0", "httpx": "0.28.1", "zzz": "1" + evil},
            "hostname": "box" + evil,
        },
        footprint=footprint,
        throughput=pd.DataFrame(tp),
        debuggability=pd.DataFrame(dbg),
        code_size=code,
        load_levels=tuple(
            metrics.load_levels(
                load_rows({e: v / 10 for e, v in p.peak_rps.items() if e in p.engines})
            )
        ),
    )
