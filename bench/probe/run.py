"""The parent side of the probe: one fresh worker process per engine, rows into profile.jsonl.

``probe_engines`` runs ``python -m bench.probe.probe_worker`` for each engine in turn (never two at
once: the machine has two cores and the probe times things), reads its rows and appends them
to ``profile.jsonl`` in the run folder (``bench.results.files.PROFILE``), each line flushed as
it arrives. A worker that dies, hangs or cannot start leaves an ``error`` row for its engine
and the probe goes on with the next one. An engine that runs in another virtualenv (a peer
framework) or is measured for its outcomes only is listed with ``status: skipped``.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.engines.registry import ENGINE_NAMES, REGISTRY, SPECS
from bench.envs.build import ensure
from bench.errors import EnvironmentUnavailable
from bench.probe.variants import MARGINAL_SCENARIO
from bench.results.files import PROFILE
from bench.results.store import RunStore
from bench.runner.channel import FATAL, GARBAGE, read_message
from bench.runner.process import worker_env
from scenarios import Scenario

QUICK_SCENARIOS = ("customer_returns", "single_tool")
WORKER_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class ProbeConfig:
    """What to probe: engines, scenarios, the marginal scenario, and the plan's size."""

    engines: tuple[str, ...]
    scenarios: tuple[str, ...]
    marginal: str | None
    quick: bool = False
    scenario_dir: str | None = None


def probed_engines() -> tuple[tuple[str, ...], dict[str, str]]:
    """(engines the probe measures, engine → why it is skipped), from the registry."""
    measured, skipped = [], {}
    for spec in SPECS:
        if spec.outcome_only:
            skipped[spec.name] = "measured for its outcomes only (a reduced variant)"
        elif spec.version_line:
            skipped[spec.name] = (
                "a LangChain line of the version matrix (probed as lc-agentexecutor)"
            )
        else:
            measured.append(spec.name)
    return tuple(measured), skipped


def happy_path(scenarios: dict[str, Scenario], *, quick: bool = False) -> tuple[str, ...]:
    """The performance scenarios (``Scenario.is_performance``; with ``quick``: only the two
    smallest of them)."""
    names = tuple(n for n, s in scenarios.items() if s.is_performance)
    return tuple(n for n in names if n in QUICK_SCENARIOS) if quick else names


def default_config(
    scenarios: dict[str, Scenario],
    *,
    engines: Iterable[str] | None = None,
    quick: bool = False,
    scenario_dir: str | None = None,
) -> ProbeConfig:
    measured, _ = probed_engines()
    return ProbeConfig(
        engines=tuple(engines) if engines is not None else measured,
        scenarios=happy_path(scenarios, quick=quick),
        marginal=MARGINAL_SCENARIO if MARGINAL_SCENARIO in scenarios else None,
        quick=quick,
        scenario_dir=scenario_dir,
    )


def _env() -> dict[str, str]:
    return worker_env()


def _interpreter(engine: str) -> str:
    """The Python of ``engine``'s environment (built or reused; the harness's own for main).
    Raises ``EnvironmentUnavailable`` when it cannot be built."""
    spec = REGISTRY.get(engine)
    return sys.executable if spec is None else ensure(spec.environment).python


def engine_plan(engine: str) -> str:
    """The probe plan of ``engine`` (``bench.probe.measure.plan_for``): the full one for the
    engines the report judges (``headline_engines``), with longer sampling for LangChain's,
    whose callback share claim 2 judges; the brief one for every other engine."""
    from bench.engines.registry import headline_engines
    from bench.probe.measure import plan_for

    judged = set(headline_engines(ENGINE_NAMES))
    langchain = {e for e in judged if REGISTRY[e].family == "langchain"}
    return plan_for(engine, judged, langchain)


def _worker_command(engine: str, config: ProbeConfig) -> list[str]:
    command = [_interpreter(engine), "-m", "bench.probe.probe_worker", "--engine", engine]
    command += ["--plan", engine_plan(engine)]
    command += ["--scenarios", ",".join(config.scenarios)]
    if config.marginal:
        command += ["--marginal", config.marginal]
    if config.scenario_dir:
        command += ["--scenario-dir", config.scenario_dir]
    if config.quick:
        command.append("--quick")
    return command


def _run_worker(
    engine: str, config: ProbeConfig, log: Path, emit: Callable[[dict[str, Any]], None]
) -> str | None:
    """Run one engine's worker, passing each row to ``emit``; the error text, or None."""
    try:
        command = _worker_command(engine, config)
    except EnvironmentUnavailable as exc:  # its row says why; the other engines go on
        return f"its environment could not be built: {exc.reason}"
    with log.open("w", encoding="utf-8") as err:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            encoding="utf-8",
            env=_env(),
        )
        timer = threading.Timer(WORKER_TIMEOUT_S, process.kill)
        timer.start()
        done, fatal = False, None
        try:
            assert process.stdout is not None
            for line in process.stdout:
                message = read_message(line)
                if message["type"] == GARBAGE:
                    fatal = f"the worker broke the protocol: {line[:200]!r}"
                    break
                if message["type"] == "row":
                    emit(message["row"])
                elif message["type"] == FATAL:
                    fatal = message["error"].strip()
                elif message["type"] == "done":
                    done = True
        finally:
            timer.cancel()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
    if done:
        return None
    tail = log.read_text(encoding="utf-8", errors="replace")[-2000:].strip()
    return fatal or f"the worker ended (exit code {process.returncode}) before it was done\n{tail}"


def probe_engines(
    out: Path | str,
    config: ProbeConfig,
    *,
    progress: Callable[[str], None] = lambda _: None,
    jobs: int | None = None,
) -> Path:
    """Probe every engine of ``config`` into ``out/profile.jsonl`` (replaced); its path.

    ``jobs`` engines at a time (default 1: with two at once a test saw the depth figures
    change, not yet understood)."""
    if jobs is None:
        jobs = 1
    store = RunStore(out)
    store.create()
    path = store.path(PROFILE)
    path.unlink(missing_ok=True)
    default, skipped = probed_engines()
    with store:
        # the registry's engines the probe cannot run are listed when it probes them all
        for engine, reason in skipped.items() if set(default) <= set(config.engines) else ():
            if engine in config.engines:
                continue
            store.append(PROFILE, {"engine": engine, "status": "skipped", "error": reason})

        def probe_one(engine: str) -> None:
            started = time.monotonic()
            progress(f"probe: {engine} ({len(config.scenarios)} scenarios)")

            def emit(row: dict[str, Any]) -> None:
                store.append(PROFILE, {"engine": engine, **row})

            error = _run_worker(engine, config, store.logs / f"probe.{engine}.log", emit)
            if error is not None:
                store.append(PROFILE, {"engine": engine, "status": "error", "error": error})
                progress(f"probe: {engine} failed: {error.splitlines()[0] if error else ''}")
            else:
                progress(f"probe: {engine} done in {time.monotonic() - started:.1f} s")
            store.sync()

        # one engine per core: each probe is one process whose figures are counts and shares
        # of its own time, which a neighbour on the other core does not move
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(config.engines)))) as pool:
            for future in [pool.submit(probe_one, engine) for engine in config.engines]:
                future.result()
        _drop_empty(store.logs)
    return path


def _drop_empty(logs: Path) -> None:
    for log in logs.glob("probe.*.log"):
        if log.stat().st_size == 0:
            log.unlink()
