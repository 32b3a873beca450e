"""Scenario tools as Python callables, shared by every engine, recording every execution.

A ``ToolDef`` from a scenario becomes a ``ScenarioTool``: its JSON Schema is exactly what the
LLM sees, and its behaviour is the scenario's:

- ``returns`` — the value, serialised once to JSON text (``ensure_ascii=False``), so that
  every engine puts the *same string* into its tool message;
- ``raises: message`` — raises ``ToolFailure(message)`` (a plain ``RuntimeError``, as a real
  backend would raise: not LangChain's ``ToolException``);
- ``hangs: true`` — never returns. The async variant awaits forever and is cut by the
  engine's timeout (``asyncio`` cancellation). The sync variant blocks its thread on an
  event: a framework that runs sync tools in worker threads cannot kill that thread, so a
  "timed-out" sync tool keeps its thread (and its pool slot) until ``release_hung_threads()``
  — which is what a hung thread means in production too. Engines use the async variant;
- ``latency_ms`` — sleeps first (``asyncio.sleep`` / ``time.sleep``);
- ``fail_times: N`` — the first N calls *of this run* raise ``ToolFailure(fail_message)``;
- ``fail_rate: p`` — a call raises ``ToolFailure(fail_message)`` with probability ``p``: the
  draw is a golden-ratio (Weyl) sequence over the run's ``RunLog.ordinal``, started at a hash
  of the tool, its arguments and how many calls with them succeeded before. So the n-th run
  of a cell draws alike in every engine, and any n consecutive runs fail a call site within
  about one of ``p × n`` times (independent random draws would spread it by ``√(p n)``). The
  failure is transient: a call repeating the arguments of one that just failed gets through;
- ``returns_size_kb`` — the JSON result is padded with a ``padding`` text field to that size;
- ``handler: module:function`` — called as ``function(**args)`` (sync or async); its return
  value (a string, or anything JSON-able) is the result, its exceptions are the tool's.
- ``results`` (recorded scenarios) — what the real tool returned, by arguments: the n-th call
  of a run with given arguments gets the n-th result recorded with them (the last repeats);
  arguments never recorded raise ``ToolFailure``.
  value (a string, or anything JSON-able) is the result, its exceptions are the tool's. A
  handler is code: it is imported only when ``allow_handlers()`` allowed its module, else
  building the tool raises ``ValueError``.

Every execution — success, exception or cancellation — is recorded in the current run's
``RunLog`` (``bench.engines.kit.runlog``) with its name, arguments, outcome and duration. Engines
count tool calls there, never from the framework's own account.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from bench.engines.kit import runlog
from bench.engines.kit.runlog import ToolExecution, current_log
from scenarios import Scenario, ToolDef
from scenarios.tool_results import pad_to_size, result_text

__all__ = ["ScenarioTool", "ToolFailure", "build_tools", "pad_to_size", "release_hung_threads"]
from scenarios.handlers import HandlerError, HandlerPolicy

_HUNG_THREADS = threading.Event()
_GOLDEN = (math.sqrt(5) - 1) / 2  # the Weyl step: n × it mod 1 spreads evenly for every n


class ToolFailure(RuntimeError):
    """A scenario tool failing the way its behaviour says (``raises``, ``fail_times``,
    ``fail_rate``)."""


class ToolHangReleased(RuntimeError):
    """A hung sync tool thread was released by ``release_hung_threads()``."""


def release_hung_threads() -> None:
    """Wake every thread blocked in a hanging sync tool (they then raise ToolHangReleased)."""
    _HUNG_THREADS.set()
    _HUNG_THREADS.clear()


_policy = HandlerPolicy()


def allow_handlers(policy: HandlerPolicy) -> None:
    """Set which ``handler:`` modules this process may import (default: none; see
    ``scenarios.handlers``). The CLI and the worker set it from the user's options."""
    global _policy
    _policy = policy


def _resolve(handler: str) -> Callable[..., Any]:
    try:
        return _policy.resolve(handler)
    except HandlerError as exc:
        raise ValueError(f"tool handler {exc}") from None


class ScenarioTool:
    """One scenario tool: schema plus behaviour, with a sync and an async entry point."""

    def __init__(self, tool: ToolDef):
        self.definition = tool
        self.name = tool.name
        self.description = tool.description
        self.parameters = tool.parameters
        self.behavior = tool.behavior
        self._handler = _resolve(tool.handler) if tool.handler else None
        self._latency_s = self.behavior.latency_ms / 1000
        # the fixed result is serialised once: every call (and every engine) gets this string
        self._result: str | None = None
        if (
            self._handler is None
            and self.behavior.raises is None
            and not self.behavior.hangs
            and not self.behavior.results
        ):
            self._result = self._finish(self.behavior.returns)

    def _finish(self, value: Any) -> str:
        return result_text(value, self.behavior.returns_size_kb)

    def openai_schema(self) -> dict[str, Any]:
        """The tool as the OpenAI ``tools`` array carries it."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def _outcome_before_result(self, call_number: int, drawn_failure: bool = False) -> None:
        """Raise when the behaviour says this call fails (not for hangs)."""
        b = self.behavior
        if call_number <= b.fail_times or drawn_failure:
            raise ToolFailure(b.fail_message)
        if b.raises is not None:
            raise ToolFailure(b.raises)

    def _recorded_result(self, args: dict[str, Any], earlier: int) -> str:
        """The result recorded for these arguments, after ``earlier`` calls with them."""
        matches = [r.returns for r in self.behavior.results if r.args == args]
        if not matches:
            raise ToolFailure(f"no result was recorded for {self.name}({json.dumps(args)})")
        return matches[min(earlier, len(matches) - 1)]

    def _earlier_calls(self, args: dict[str, Any]) -> int:
        """Calls of this tool with these arguments already made in this run."""
        if not self.behavior.results:
            return 0
        return sum(1 for t in current_log().tools if t.name == self.name and t.args == args)

    def _drawn_failure(self, log: runlog.RunLog, args: dict[str, Any]) -> bool:
        """This call fails by the tool's ``fail_rate`` (see the module docstring)."""
        rate = self.behavior.fail_rate
        if not rate:
            return False
        same = [t for t in log.tools if t.name == self.name and t.args == args]
        if same and same[-1].error is not None:
            return False  # transient: the retry of a call that just failed gets through
        site = f"{self.name}|{json.dumps(args, sort_keys=True)}|{sum(t.ok for t in same)}"
        start = int.from_bytes(hashlib.blake2b(site.encode(), digest_size=8).digest(), "big")
        return (start / 2**64 + log.ordinal * _GOLDEN) % 1.0 < rate

    def _start(self, args: dict[str, Any]) -> tuple[ToolExecution, int, bool]:
        # recorded when it starts, so that the log keeps the order the calls were made in
        log = current_log()
        fails = self._drawn_failure(log, args)
        execution = ToolExecution(self.name, dict(args), time.perf_counter())
        log.tools.append(execution)
        return execution, log.next_call_number(self.name), fails

    async def acall(self, **args: Any) -> str:
        """The async variant (cancellable, even while hanging)."""
        if runlog.EDGE_HOOK is not None:
            runlog.EDGE_HOOK("tool")
        earlier = self._earlier_calls(args)
        execution, number, fails = self._start(args)
        try:
            if self._latency_s:
                await asyncio.sleep(self._latency_s)
            if self.behavior.hangs:
                await asyncio.Event().wait()
            self._outcome_before_result(number, fails)
            if self._handler is not None:
                value = self._handler(**args)
                if inspect.isawaitable(value):
                    value = await value
                result = self._finish(value)
            elif self.behavior.results:
                result = self._recorded_result(args, earlier)
            else:
                assert self._result is not None  # a fixed result: serialised in __init__
                result = self._result
            execution.ok = True
            return result
        except asyncio.CancelledError:
            execution.error = "cancelled"
            raise
        except Exception as exc:
            execution.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            execution.ended = time.perf_counter()

    def call(self, **args: Any) -> str:
        """The sync variant (a hang blocks the calling thread; see the module docstring)."""
        if runlog.EDGE_HOOK is not None:
            runlog.EDGE_HOOK("tool")
        earlier = self._earlier_calls(args)
        execution, number, fails = self._start(args)
        try:
            if self._latency_s:
                time.sleep(self._latency_s)
            if self.behavior.hangs:
                _HUNG_THREADS.wait()
                raise ToolHangReleased(f"hung tool {self.name!r} released")
            self._outcome_before_result(number, fails)
            if self._handler is not None:
                value = self._handler(**args)
                if inspect.isawaitable(value):
                    if inspect.iscoroutine(value):
                        value.close()
                    raise TypeError(f"tool {self.name!r}: async handler called from sync code")
                result = self._finish(value)
            elif self.behavior.results:
                result = self._recorded_result(args, earlier)
            else:
                assert self._result is not None  # a fixed result: serialised in __init__
                result = self._result
            execution.ok = True
            return result
        except Exception as exc:
            execution.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            execution.ended = time.perf_counter()


def build_tools(scenario: Scenario) -> list[ScenarioTool]:
    """The scenario's tools, in their declared order."""
    return [ScenarioTool(tool) for tool in scenario.tools]
