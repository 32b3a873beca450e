"""The worker's side of the load phase: one prepared agent, open-loop levels, honest outcomes.

``LoadSession`` is what ``bench.runner.run_worker`` hands the ``load_prepare`` and ``load``
commands to. It prepares the engine's agent once per scenario and latency profile (one agent
shared by every concurrent run, as a service shares one), warms it up with a few runs, and
plays each level with ``bench.runner.phases.load.openloop``.

Two things keep the harness out of the engine's numbers:

- **token accounting is switched off**: after every run the shared machinery replays the
  recorded request bodies through a private mock and counts their tokens with tiktoken
  (``bench.engines.common.Accounting``, ~0.4 ms of CPU per run of ``customer_returns``) —
  harness work that would load the event loop under test. Here a counter that only counts
  the LLM requests replaces it (``CallCounter``), so the outcome check still sees
  ``llm_calls``; a scenario's ``max_request_tokens`` is therefore not judged in this phase;
- **outcomes are judged after the level** (``classify``: the run's status and the scenario's
  expectations for the engine, ``scenarios.expect``), never while the load runs.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
import resource
import sys
import time
from typing import Any

from bench.engines.kit.runlog import set_ordinal
from bench.runner.expectations import expectation_failures
from bench.runner.phases.load.openloop import OpenLoop, Schedule, summarize

LOAD_WARMUP_RUNS = 3  # untimed concurrent runs after preparing the agent


class CallCounter:
    """Stands in for ``Accounting`` in the load phase: counts LLM requests, nothing else."""

    def account(self, log: Any, *, ttft: bool = False) -> dict[str, Any]:
        calls = sum(1 for x in log.exchanges if x.path.endswith("/chat/completions"))
        return {
            "llm_calls": calls,
            "requests": [],
            "request_tokens": [],
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "mock_latency_ms": 0.0,
        }


def without_token_accounting(prepared: Any) -> Any:
    """The prepared run with its token accounting replaced by ``CallCounter`` (engines that
    keep no ``accounting`` are left as they are)."""
    if hasattr(prepared, "accounting"):
        prepared.accounting = CallCounter()
    return prepared


def classify(scenario: Any, engine: str, record: Any) -> str:
    """``ok`` (completed as the scenario expects for this engine), ``wrong`` (completed, but
    not as expected) or ``failed`` (any other status)."""
    if getattr(record, "status", None) != "completed":
        return "failed"
    return "wrong" if expectation_failures(scenario, engine, record) else "ok"


def reset_peak_rss() -> bool:
    """Reset this process's peak RSS (Linux: ``/proc/self/clear_refs``); False if it cannot."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb(since_reset: bool) -> float | None:
    """Peak RSS in MiB since ``reset_peak_rss`` (``VmHWM``), or over the process's life."""
    if since_reset:
        try:
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def schedule_from(command: dict[str, Any]) -> Schedule:
    s = command["schedule"]
    return Schedule(
        offsets=tuple(float(v) for v in s["offsets"]),
        window=(float(s["window"][0]), float(s["window"][1])),
        interval=(float(s["interval"][0]), float(s["interval"][1])),
        timeout_s=float(s["timeout_s"]),
        target_s=float(s["target_s"]),
        late_limit=int(s["late_limit"]),
        error_limit=int(s["error_limit"]),
        tick_s=float(s.get("tick_s", 0.1)),
    )


class LoadSession:
    """The load phase in one worker: ``prepare`` once, then ``level`` per offered rate."""

    def __init__(self, engine_name: str, engine: Any, scenarios: dict[str, Any], context: Any):
        self.engine_name = engine_name
        self.engine = engine
        self.scenarios = scenarios
        self.context = context  # (scenario, latency) -> RunContext, the worker's
        self._prepared: dict[tuple[str, str], Any] = {}
        self._arrivals = itertools.count(1)  # numbers the runs: their tools' failure draws

    async def _numbered_run(self, prepared: Any) -> Any:
        # each arrival runs in its own task: the ordinal set here is that run's alone
        set_ordinal(next(self._arrivals))
        return await self.engine.run(prepared)

    async def prepare(self, scenario_name: str, latency: str, warmup: int) -> None:
        key = (scenario_name, latency)
        if key in self._prepared:
            return
        scenario = self.scenarios[scenario_name]
        prepared = await self.engine.prepare(self.context(scenario, latency))
        without_token_accounting(prepared)
        await asyncio.gather(*(self.engine.run(prepared) for _ in range(warmup)))
        self._prepared[key] = prepared

    async def level(self, command: dict[str, Any]) -> dict[str, Any]:
        scenario_name, latency = command["scenario"], command["latency"]
        await self.prepare(scenario_name, latency, int(command.get("warmup", LOAD_WARMUP_RUNS)))
        prepared = self._prepared[(scenario_name, latency)]
        scenario = self.scenarios[scenario_name]
        schedule = schedule_from(command)
        gc.collect()
        reset = reset_peak_rss()
        wait = float(command.get("start_at", 0.0)) - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
        played = await OpenLoop(lambda: self._numbered_run(prepared), schedule).play()
        peak = peak_rss_mb(reset)
        row = summarize(played, schedule, lambda r: classify(scenario, self.engine_name, r))
        return {**row, "peak_rss_mb": peak, "pid": os.getpid()}


__all__ = [
    "LOAD_WARMUP_RUNS",
    "CallCounter",
    "LoadSession",
    "classify",
    "peak_rss_mb",
    "reset_peak_rss",
    "schedule_from",
    "without_token_accounting",
]
