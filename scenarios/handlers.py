"""Which ``handler: module:function`` a scenario may name: handlers are code, so they are opt-in.

A scenario file is data; a ``handler`` turns it into code that runs with the rights of whoever
runs the benchmark. Like pytest with ``conftest.py``, nothing is imported unless the user
says so on the command line (never a file that travels with the scenarios):

- ``HandlerPolicy()`` — the default: no handler is allowed, nothing is imported;
- ``HandlerPolicy(trust_all=True)`` (``--trust-handlers``) — any importable module;
- ``HandlerPolicy(dirs=(D, ...))`` (``--handlers-from D``) — only modules whose top-level
  module or package is a file in D. D is appended to ``sys.path`` (so it never shadows an
  installed module), and after the import the module must really come from D.

Whether a handler is allowed is decided without importing anything; only an allowed handler
is imported, to check it (``handler_problems(..., resolve=True)``) or to call it.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scenarios.schema import Scenario


class HandlerError(ValueError):
    """A handler that may not or cannot be used; the message is one line."""


class UntrustedHandler(HandlerError):
    """A handler the policy does not allow (it was not imported)."""


def _module_file(module: Any) -> Path | None:
    origin = getattr(module, "__file__", None)
    return Path(origin).resolve() if origin else None


def _inside(path: Path | None, dirs: Iterable[Path]) -> bool:
    return path is not None and any(path.is_relative_to(d) for d in dirs)


@dataclass(frozen=True)
class HandlerPolicy:
    """What the user allowed (see the module docstring)."""

    trust_all: bool = False
    dirs: tuple[Path, ...] = ()

    @classmethod
    def from_dirs(cls, dirs: Iterable[Path | str], trust_all: bool = False) -> HandlerPolicy:
        return cls(trust_all, tuple(dict.fromkeys(Path(d).resolve() for d in dirs)))

    @property
    def allows_any(self) -> bool:
        return self.trust_all or bool(self.dirs)

    def worker_args(self) -> list[str]:
        """The same policy as command-line options (for worker processes)."""
        args = ["--trust-handlers"] if self.trust_all else []
        for d in self.dirs:
            args += ["--handlers-from", str(d)]
        return args

    def refusal(self, handler: str) -> str | None:
        """Why ``handler`` is not allowed (None: it is), decided without importing it."""
        if self.trust_all:
            return None
        top = handler.split(":")[0].split(".")[0]
        if self.dirs:
            where = ", ".join(str(d) for d in self.dirs)
            loaded = sys.modules.get(top)
            if loaded is not None:
                if _inside(_module_file(loaded), self.dirs):
                    return None
                origin = _module_file(loaded) or "built in"
                return f"module {top!r} is not in --handlers-from {where} (it is {origin})"
            if any(importlib.machinery.PathFinder.find_spec(top, [str(d)]) for d in self.dirs):
                return None
            return f"module {top!r} is not in --handlers-from {where}"
        return (
            "a handler is Python code that runs as you; allow it with --trust-handlers, "
            "or --handlers-from DIR for modules in DIR"
        )

    def resolve(self, handler: str) -> Callable[..., Any]:
        """Import an allowed handler (``UntrustedHandler``, ``HandlerError``)."""
        refusal = self.refusal(handler)
        if refusal is not None:
            raise UntrustedHandler(f"{handler!r} refused: {refusal}")
        module_name, function_name = handler.split(":")
        for d in self.dirs:
            if str(d) not in sys.path:
                sys.path.append(str(d))  # appended: never shadows an installed module
        try:
            module = importlib.import_module(module_name)
        except (Exception, SystemExit) as exc:
            reason = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise HandlerError(f"cannot import {module_name!r} ({reason})") from None
        if not self.trust_all and not _inside(_module_file(module), self.dirs):
            raise UntrustedHandler(
                f"{handler!r} refused: module {module_name!r} was found outside --handlers-from"
            )
        function = getattr(module, function_name, None)
        if not callable(function):
            raise HandlerError(f"{module_name!r} has no callable {function_name!r}")
        return function


def handler_problems(scenario: Scenario, policy: HandlerPolicy, *, resolve: bool) -> list[str]:
    """One ``tools[i].handler: reason`` per handler the policy refuses or (``resolve``) that
    cannot be imported; refused handlers are never imported."""
    problems = []
    for i, tool in enumerate(scenario.tools):
        if tool.handler is None:
            continue
        refusal = policy.refusal(tool.handler)
        if refusal is not None:
            problems.append(f"tools[{i}].handler: {tool.handler!r} refused: {refusal}")
            continue
        if resolve:
            try:
                policy.resolve(tool.handler)
            except HandlerError as exc:
                problems.append(f"tools[{i}].handler: {exc}")
    return problems
