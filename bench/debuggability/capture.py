"""Capture the debug output of one run: engine x scenario x mode, in process, on the mock.

``capture(engine, scenario, mode)`` builds the engine's agent with the mode on (see
``bench.debuggability.modes``), runs the scenario once against the in-process mock LLM, and keeps
everything the mode produced — stdout, stderr, log records, and the structured artefact
(the scheduler's JSON trace, LangChain's collected run tree, LangGraph's debug events) —
together with the engine's ``RunRecord`` and the run's ground truth.

``mode_cost(engine, scenario, mode)`` runs the engine N times with the mode off and N times
with it on (interleaved, after a warm-up, in one process and one event loop) and reports the
median time per run of ``Engine.run`` plus producing the mode's output.

Everything runs on one persistent event loop per process (``run_sync``):
``langchain_openai`` caches its async client process-wide, so a second loop would break it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import io
import json
import logging
import sys
import time
import traceback
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bench.debuggability.modes import ENGINE_MODES, MODES, NONE
from bench.debuggability.truth import GroundTruth, ground_truth
from bench.engines import ENGINE_NAMES, RunContext, RunRecord, create_engine
from bench.errors import UnknownEngineError, UnknownModeError
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from bench.results import stats
from scenarios import Scenario

T = TypeVar("T")

CONSOLE_MODES = ("verbose", "set-debug", "graph-debug")  # what lands on the console

_LOOP: asyncio.AbstractEventLoop | None = None
_ENGINES: dict[str, Any] = {}
_MOCKS: dict[int, MockLLM] = {}


def run_sync(coro: Awaitable[T]) -> T:
    """Run ``coro`` on this process's one debug event loop."""
    global _LOOP
    if _LOOP is None or _LOOP.is_closed():
        _LOOP = asyncio.new_event_loop()
        atexit.register(_close_loop, _LOOP)
    return _LOOP.run_until_complete(coro)


def _close_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Finalise pending async generators (streams) before the interpreter exits."""
    if loop.is_closed():
        return
    try:
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()


def _engine(name: str) -> Any:
    engine = _ENGINES.get(name)
    if engine is None:
        engine = _ENGINES[name] = create_engine(name)
    return engine


def _mock(scenario: Scenario) -> MockLLM:
    mock = _MOCKS.get(id(scenario))
    if mock is None:
        mock = _MOCKS[id(scenario)] = MockLLM(scenarios={scenario.name: scenario}, record=False)
    mock.reset()
    return mock


def check(engine: str, mode: str) -> None:
    """``UnknownEngineError`` / ``UnknownModeError`` (naming the valid ones) for an unknown name."""
    if engine not in ENGINE_NAMES:
        raise UnknownEngineError(engine, ENGINE_NAMES)
    if mode != NONE and mode not in ENGINE_MODES[engine]:
        raise UnknownModeError(engine, mode, ENGINE_MODES[engine])


# -- serialising what LangChain hands back -------------------------------------------------


def to_jsonable(value: Any) -> Any:
    """JSON-able form of run trees, messages and events (pydantic models are dumped)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [to_jsonable(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return to_jsonable(dump())
        except Exception:
            pass
    as_dict = getattr(value, "dict", None)
    if callable(as_dict):
        try:
            return to_jsonable(as_dict())
        except Exception:
            pass
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    return str(value)


def run_tree(run: Any) -> dict[str, Any]:
    """A LangChain ``Run`` with its ``child_runs`` (which ``model_dump()`` leaves out)."""
    data = to_jsonable(run)
    data["child_runs"] = [run_tree(child) for child in getattr(run, "child_runs", None) or ()]
    return data


def dump_json(value: Any) -> str:
    """How structured outputs are written out (and measured): indented, keys sorted."""
    return json.dumps(to_jsonable(value), indent=2, ensure_ascii=False, sort_keys=True)


# -- finding the framework objects inside an engine's prepared run ------------------------


def find_objects(root: Any, predicate: Callable[[Any], bool], depth: int = 3) -> list[Any]:
    """Objects reachable from ``root`` through attributes / dict values that match."""
    found: list[Any] = []
    seen: set[int] = set()

    def visit(obj: Any, level: int) -> None:
        if id(obj) in seen or level > depth:
            return
        seen.add(id(obj))
        if predicate(obj):
            found.append(obj)
            return
        if isinstance(obj, dict):
            children = list(obj.values())
        elif isinstance(obj, (list, tuple)):
            children = list(obj)
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            children = [getattr(obj, f.name, None) for f in dataclasses.fields(obj)]
        else:
            return
        for child in children:
            visit(child, level + 1)

    visit(root, 0)
    return found


def _targets(prepared: Any, predicate: Callable[[Any], bool], mode: str, what: str) -> list[Any]:
    """The objects a mode switches on; an engine that hides them is an error, not a zero."""
    found = find_objects(prepared, predicate)
    if not found:
        raise RuntimeError(
            f"debug mode {mode!r}: no {what} found in {type(prepared).__name__}; "
            "bench/debuggability/capture.py must learn where this engine keeps it"
        )
    return found


def _is_agent_executor(obj: Any) -> bool:
    return type(obj).__name__ == "AgentExecutor"


def _is_lightweight_agent(obj: Any) -> bool:
    return type(obj).__name__ == "LightweightAgent"


def _is_graph(obj: Any) -> bool:
    return type(obj).__name__ in ("CompiledStateGraph", "Pregel", "CompiledGraph")


# -- the modes -----------------------------------------------------------------------------


@dataclass
class _Session:
    """One run's switches and artefacts for one mode."""

    mode: str
    stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    collector: Any = None  # run-tree: the RunCollectorCallbackHandler
    events: list[Any] = field(default_factory=list)  # stream-debug: the debug events
    results: list[Any] = field(default_factory=list)  # tree / json: the scheduler's RunResult

    def before_prepare(self) -> None:
        if self.mode == "set-debug":
            from langchain_core.globals import get_debug, set_debug

            previous = get_debug()
            set_debug(True)
            self.stack.callback(set_debug, previous)

    def after_prepare(self, prepared: Any) -> None:
        if self.mode == "verbose":
            for executor in _targets(prepared, _is_agent_executor, self.mode, "AgentExecutor"):
                executor.verbose = True
        elif self.mode == "graph-debug":
            for graph in _targets(prepared, _is_graph, self.mode, "compiled graph"):
                graph.debug = True
        elif self.mode == "stream-debug":
            for graph in _targets(prepared, _is_graph, self.mode, "compiled graph"):
                self._stream_debug(graph)
        elif self.mode == "run-tree":
            self._collect_runs(prepared)
        elif self.mode in ("tree", "json"):
            for agent in _targets(prepared, _is_lightweight_agent, self.mode, "LightweightAgent"):
                self._keep_results(agent)
        if self.mode in CONSOLE_MODES:
            self._echo_exceptions(prepared)

    def _echo_exceptions(self, prepared: Any) -> None:
        """An exception escaping ``agent.ainvoke`` reaches the user's console as a traceback.

        LangChain lets a tool's or the LLM client's exception escape the agent call; the
        engine catches it, but a user's console would show its traceback right after the
        mode's output, so the traceback is part of what the console mode shows.
        """
        agent = getattr(prepared, "agent", None)
        if agent is None or not hasattr(agent, "ainvoke"):
            return
        prepared.agent = _ExceptionEcho(agent)
        self.stack.callback(setattr, prepared, "agent", agent)

    def _keep_results(self, agent: Any) -> None:
        """Keep the ``RunResult`` that ``agent.run()`` / ``agent.stream()`` hands the caller."""
        results = self.results
        run, stream = agent.run, agent.stream

        async def kept_run(*args: Any, **kwargs: Any) -> Any:
            result = await run(*args, **kwargs)
            results.append(result)
            return result

        async def kept_stream(*args: Any, **kwargs: Any) -> Any:
            async for event in stream(*args, **kwargs):
                result = getattr(event, "result", None)
                if result is not None and hasattr(result, "trace"):
                    results.append(result)
                yield event

        agent.run, agent.stream = kept_run, kept_stream
        self.stack.callback(_restore_attr, agent, "run", run)
        self.stack.callback(_restore_attr, agent, "stream", stream)

    def _stream_debug(self, graph: Any) -> None:
        """Make the engine's ``ainvoke`` stream with ``stream_mode="debug"`` (as a user would)."""
        events = self.events
        original = graph.ainvoke

        async def ainvoke(input: Any, config: Any = None, **kwargs: Any) -> Any:
            final = None
            kwargs.pop("stream_mode", None)
            async for mode, payload in graph.astream(
                input, config, stream_mode=["debug", "values"], **kwargs
            ):
                if mode == "debug":
                    events.append(payload)
                else:
                    final = payload
            return final

        graph.ainvoke = ainvoke
        self.stack.callback(_restore_attr, graph, "ainvoke", original)

    def _collect_runs(self, prepared: Any) -> None:
        """Pass a ``RunCollectorCallbackHandler`` at call time: ``config={"callbacks": [...]}``.

        (Callbacks given to an ``AgentExecutor`` constructor see only chain events; at call
        time they are inherited by every LLM and tool run.) For a prepared run without a
        call config, ``collect_runs()`` installs the same handler through a context var.
        """
        from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

        if not dataclasses.is_dataclass(prepared) or not hasattr(prepared, "config"):
            return
        self.collector = RunCollectorCallbackHandler()
        config = dict(prepared.config or {})
        config["callbacks"] = [*(config.get("callbacks") or []), self.collector]
        original = prepared.config
        prepared.config = config
        self.stack.callback(setattr, prepared, "config", original)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        if self.mode == "run-tree" and self.collector is None:
            from langchain_core.tracers.context import collect_runs

            with collect_runs() as collector:
                self.collector = collector
                yield
        else:
            yield

    def output(self, record: RunRecord, printed: str) -> str:
        mode = self.mode
        if mode == NONE:
            return ""
        if mode in ("verbose", "set-debug", "graph-debug"):
            return printed
        if mode == "run-tree":
            runs = self.collector.traced_runs if self.collector is not None else []
            return dump_json([run_tree(run) for run in runs]) if runs else ""
        if mode == "stream-debug":
            return "\n".join(
                json.dumps(to_jsonable(e), ensure_ascii=False, sort_keys=True) for e in self.events
            )
        if mode in ("tree", "json"):
            trace = self.results[-1].trace if self.results else None
            if trace is None:  # an engine that handed back only the exported dict
                return dump_json(record.trace) if mode == "json" and record.trace else ""
            if mode == "json":
                return trace.to_json()  # what a user exports: indented, keys sorted
            buffer = io.StringIO()
            trace.print_tree(file=buffer)  # what a user prints
            return buffer.getvalue()
        raise ValueError(f"unknown debug mode {mode!r}")


class _ExceptionEcho:
    """Delegates to an agent; prints an escaping exception's traceback as Python would."""

    def __init__(self, inner: Any):
        self._inner = inner

    async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await self._inner.ainvoke(*args, **kwargs)
        except Exception as exc:
            traceback.print_exception(exc, file=sys.stderr)
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _restore_attr(obj: Any, name: str, value: Any) -> None:
    if obj.__dict__.get(name) is not None:
        del obj.__dict__[name]
    if getattr(obj, name, None) is not value:
        setattr(obj, name, value)


class _LogCapture(logging.Handler):
    def __init__(self, sink: io.StringIO):
        super().__init__(logging.NOTSET)
        self.sink = sink
        self.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.sink.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


@contextlib.contextmanager
def captured_output() -> Iterator[io.StringIO]:
    """stdout, stderr and log records (at the loggers' own levels) into one buffer."""
    sink = io.StringIO()
    handler = _LogCapture(sink)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            yield sink
    finally:
        root.removeHandler(handler)
        sys.stdout.flush()


# -- one run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Capture:
    """One engine x scenario x mode: what the mode printed or exported, and the truth."""

    engine: str
    scenario: str
    mode: str
    output: str
    record: RunRecord
    truth: GroundTruth
    elapsed_ms: float  # Engine.run plus producing the mode's output


async def _run_once(
    engine_name: str, scenario: Scenario, mode: str
) -> tuple[RunRecord, str, float]:
    engine = _engine(engine_name)
    ctx = RunContext(
        scenario=scenario,
        mock=_mock(scenario),
        base_url=BASE_URL,
        transport="inprocess",
        debug=None if mode == NONE else mode,
        run_timeout_s=scenario.limits.run_timeout_s,  # as the runner gives it
    )
    session = _Session(mode)
    with session.stack:
        session.before_prepare()
        prepared = await engine.prepare(ctx)
        session.after_prepare(prepared)
        with captured_output() as sink, session.running():
            t0 = time.perf_counter()
            record = await engine.run(prepared)
            output = session.output(record, sink.getvalue())
            elapsed_ms = (time.perf_counter() - t0) * 1000
    return record, output, elapsed_ms


async def acapture(engine: str, scenario: Scenario, mode: str) -> Capture:
    check(engine, mode)
    record, output, elapsed_ms = await _run_once(engine, scenario, mode)
    return Capture(
        engine=engine,
        scenario=scenario.name,
        mode=mode,
        output=output,
        record=record,
        truth=ground_truth(scenario, record),
        elapsed_ms=elapsed_ms,
    )


def capture(engine: str, scenario: Scenario, mode: str) -> Capture:
    """Run ``scenario`` once on ``engine`` with debug ``mode`` on; keep its output."""
    return run_sync(acapture(engine, scenario, mode))


# -- the cost of a mode --------------------------------------------------------------------


@dataclass(frozen=True)
class ModeCost:
    engine: str
    mode: str
    scenario: str
    runs: int
    off_ms: float  # median ms per run, mode off
    on_ms: float  # median ms per run, mode on
    cost_ms: float  # median of the paired differences (on - off, same round): drift cancels


async def amode_cost(
    engine: str, scenario: Scenario, mode: str, runs: int = 10, warmup: int = 2
) -> ModeCost:
    check(engine, mode)
    off: list[float] = []
    on: list[float] = []
    # the mode "none" is the mode off: its cost is zero by definition, not a noise measured
    pairs = ((off, NONE),) if mode == NONE else ((off, NONE), (on, mode))
    for i in range(warmup + runs):
        for target, which in pairs:
            _, _, elapsed = await _run_once(engine, scenario, which)
            if i >= warmup:
                target.append(elapsed)
    if mode == NONE:
        on = off
    paired = [b - a for a, b in zip(off, on, strict=True)]
    return ModeCost(
        engine,
        mode,
        scenario.name,
        runs,
        stats.median(off),
        stats.median(on),
        stats.median(paired),
    )


def mode_cost(
    engine: str, scenario: Scenario, mode: str, runs: int = 10, warmup: int = 2
) -> ModeCost:
    """Median ms per run with ``mode`` off and on (interleaved, one process, one loop)."""
    return run_sync(amode_cost(engine, scenario, mode, runs, warmup))


__all__ = [
    "MODES",
    "Capture",
    "ModeCost",
    "acapture",
    "capture",
    "check",
    "dump_json",
    "mode_cost",
    "run_sync",
    "to_jsonable",
]
