"""The tool side of a recording: an agent's tool executions, reported to ``schedbench record``.

The proxy sees only the model's traffic. What a tool did — how long it took, that it
raised, that it needed the user's confirmation or was refused — never crosses it: the tool
message the agent sends next holds whatever text the agent's framework made of it. Wrap each
tool function, and the wrapper reports every execution to the proxy::

    from bench.traffic.observe import ToolObserver

    observer = ToolObserver("http://127.0.0.1:8766/v1")  # the proxy; default $SCHEDBENCH_RECORD_URL
    lookup_order = observer.wrap(lookup_order)
    issue_refund = observer.wrap(issue_refund, require_confirmation=True)
    ...
    observer.denied("issue_refund", {"order_id": "A123"})  # where your confirmation step says no

A wrapped function keeps its name, signature and docstring (``functools.wraps``), so a
framework that reads them (LangChain's ``StructuredTool.from_function``, the scheduler's
``ToolSpec``) sees the same tool; sync stays sync and async stays async. Each report is one
``POST /_schedbench/tools`` of a ``ToolRun`` (``bench.traffic.exchange``), after the call,
outside the time measured: ``{"name", "args", "outcome": "returned" | "raised" | "denied",
"error", "started_at", "duration_ms", "require_confirmation"}``. Any program can send them
(this module needs only the standard library). A report that cannot be sent is logged once
and never breaks the tool.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import logging
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar

TOOLS_PATH = "/_schedbench/tools"
URL_VARIABLE = "SCHEDBENCH_RECORD_URL"
_log = logging.getLogger("schedbench.observe")
F = TypeVar("F", bound=Callable[..., Any])


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"not an http:// URL of the recording proxy: {url!r}")
    return f"{parts.scheme}://{parts.netloc}"


class ToolObserver:
    """Reports tool executions to the recording proxy at ``proxy_url`` (its base URL, as the
    agent's ``base_url``; default: the ``SCHEDBENCH_RECORD_URL`` environment variable)."""

    def __init__(self, proxy_url: str | None = None, *, timeout_s: float = 5.0):
        url = proxy_url or os.environ.get(URL_VARIABLE)
        if not url:
            raise ValueError(f"give the proxy's URL, or set {URL_VARIABLE}")
        self.endpoint = _origin(url) + TOOLS_PATH
        self.timeout_s = timeout_s
        self._warned = False

    def wrap(
        self, function: F, *, name: str | None = None, require_confirmation: bool = False
    ) -> F:
        """``function`` reporting each call; ``name`` is the tool's name as the model sees
        it (default: the function's), ``require_confirmation`` that it asks the user first."""
        tool = name or function.__name__
        signature = inspect.signature(function)

        def arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
            try:
                return dict(signature.bind(*args, **kwargs).arguments)
            except TypeError:
                return dict(kwargs)

        def run(
            args: dict[str, Any], started: float, began: float, error: Exception | None
        ) -> dict[str, Any]:
            report: dict[str, Any] = {
                "name": tool,
                "args": args,
                "outcome": "returned" if error is None else "raised",
                "started_at": started,
                "duration_ms": round((time.perf_counter() - began) * 1000, 3),
                "require_confirmation": require_confirmation,
            }
            if error is not None:
                report["error"] = f"{type(error).__name__}: {error}".removesuffix(": ")
            return report

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def observed_async(*args: Any, **kwargs: Any) -> Any:
                started, began = time.time(), time.perf_counter()
                try:
                    result = await function(*args, **kwargs)
                except Exception as exc:
                    report = run(arguments(args, kwargs), started, began, exc)
                    await asyncio.to_thread(self.report, report)
                    raise
                await asyncio.to_thread(
                    self.report, run(arguments(args, kwargs), started, began, None)
                )
                return result

            return observed_async  # type: ignore[return-value]

        @functools.wraps(function)
        def observed(*args: Any, **kwargs: Any) -> Any:
            started, began = time.time(), time.perf_counter()
            try:
                result = function(*args, **kwargs)
            except Exception as exc:
                self.report(run(arguments(args, kwargs), started, began, exc))
                raise
            self.report(run(arguments(args, kwargs), started, began, None))
            return result

        return observed  # type: ignore[return-value]

    def denied(self, name: str, args: dict[str, Any]) -> None:
        """The user refused to confirm a call of ``name`` with ``args``: it did not run."""
        self.report(
            {
                "name": name,
                "args": args,
                "outcome": "denied",
                "started_at": time.time(),
                "require_confirmation": True,
            }
        )

    def report(self, run: dict[str, Any]) -> None:
        """Send one ``ToolRun`` to the proxy; a failure is logged once, never raised."""
        body = json.dumps(run, ensure_ascii=False, default=str).encode()
        request = urllib.request.Request(
            self.endpoint, data=body, method="POST", headers={"content-type": "application/json"}
        )
        try:
            with _DIRECT.open(request, timeout=self.timeout_s) as reply:
                reply.read()
        except urllib.error.HTTPError as exc:
            self._warn(f"{exc.code}: {exc.read(2000).decode('utf-8', 'replace')}")
        except OSError as exc:
            self._warn(str(exc))

    def _warn(self, reason: str) -> None:
        if not self._warned:
            self._warned = True
            _log.warning("cannot report tool runs to %s: %s", self.endpoint, reason)


# the proxy is on this machine: never through an HTTP proxy from the environment
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
