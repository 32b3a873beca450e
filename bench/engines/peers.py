"""What the peer-framework adapters share: the mock's URL, the openai client, retries, endings.

Every peer reaches the mock through its official OpenAI-compatible provider, and every such
provider sends through the official ``openai`` client. The client's HTTP client is the
harness's recording one, of the library that openai major sends through (``httpx`` for 1.x and
2.x, ``httpx2`` for 3.x), so requests are recorded the same way in every environment.

**Retries.** A peer's default engine keeps the retry policy its framework gives it out of the
box (usually the openai client's default of 2 retries, plus whatever the framework adds);
its ``-retries`` variant (``RETRIES_NORMALISED``) sets the policy every other engine has: the
scenario's ``limits.max_retries`` retries by the openai client, which honours Retry-After, and
no framework retry loop on top. The scenario's other limits map onto each framework's own
knobs (see each adapter and docs/engines.md).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bench.engines.common import Outcome, Prepared, RecordingEngine, run_timeout_s
from bench.engines.peer_guards import GuardError, ToolGuards
from bench.model.mock import PLACEHOLDER_KEY
from bench.referee.transport import BASE_URL

API_KEY = PLACEHOLDER_KEY  # the mock accepts any key


def openai_http_lib() -> str:
    """The HTTP library the installed openai SDK sends through: httpx2 from 3.x on."""
    import openai

    return "httpx2" if int(openai.__version__.split(".", 1)[0]) >= 3 else "httpx"


def mock_base_url(ctx: Any) -> str:
    return ctx.base_url if ctx.transport == "loopback" else (ctx.base_url or BASE_URL)


def model_name(ctx: Any) -> str:
    return f"scenario/{ctx.scenario.name}"


def history_messages(scenario: Any) -> list[dict[str, str]]:
    """The scenario's conversation so far as OpenAI-style role/content dicts."""
    return [{"role": m.role, "content": m.content} for m in scenario.history]


# the exceptions that mean an LLM call failed on the wire or at the API, by the module that
# defines them: the openai SDK's errors (status, connection, timeout, a response that failed
# validation) and the HTTP libraries' own (a read timeout or a dropped connection mid-stream
# is raised by httpx / httpx2 as is: the SDK does not wrap what breaks after the headers)
TRANSPORT_ERRORS: tuple[tuple[str, str], ...] = (
    ("openai", "APIError"),
    ("httpx", "HTTPError"),
    ("httpx2", "HTTPError"),
    ("httpcore", "NetworkError"),
    ("httpcore", "ProtocolError"),
    ("httpcore", "TimeoutException"),
    ("aiohttp", "ClientError"),
)


def transport_error_types() -> tuple[type[BaseException], ...]:
    """The classes of ``TRANSPORT_ERRORS`` this process has loaded (a module that was never
    imported raised nothing)."""
    found = []
    for module_name, class_name in TRANSPORT_ERRORS:
        module = sys.modules.get(module_name)
        cls = getattr(module, class_name, None) if module is not None else None
        if isinstance(cls, type) and issubclass(cls, BaseException):
            found.append(cls)
    return tuple(found)


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and every exception it carries: ``__cause__``, ``__context__``, an exception
    group's members, and exceptions a framework wrapper keeps as attributes (Strands'
    ``EventLoopException.original_exception``), each once."""
    seen: set[int] = set()
    stack: list[object] = [exc]
    while stack:
        current = stack.pop()
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        members = current.exceptions if isinstance(current, BaseExceptionGroup) else ()
        attributes = [v for v in vars(current).values() if isinstance(v, BaseException)]
        stack.extend([*attributes, *members, current.__context__, current.__cause__])


def classify_llm_error(exc: BaseException) -> Outcome | None:
    """``failed`` / ``llm_error`` when the LLM call failed (after the client's retries):
    an openai SDK error or an HTTP transport error anywhere in the exception's chain —
    raised as is, or wrapped by the framework (as ``raw`` scores the same exception)."""
    types = transport_error_types()
    for cause in exception_chain(exc):
        if isinstance(cause, types):
            text = f"{type(exc).__name__}: {exc}"
            if cause is not exc:
                text += f" (from {type(cause).__module__}.{type(cause).__name__}: {cause})"
            return Outcome("failed", None, "llm_error", error=text[:2000])
    return None


def guard_outcome(exc: BaseException) -> Outcome | None:
    """How a production guard of ``bench.engines.peer_guards`` ended the run (raised as is,
    or carried by the framework's exception)."""
    for cause in exception_chain(exc):
        if isinstance(cause, GuardError):
            text = f"{type(cause).__name__}: {cause}"
            return Outcome(cause.status, None, cause.termination, error=text)
    return None


def answered(text: Any) -> Outcome:
    """A normal return: completed, unless the "answer" is empty (nothing was answered)."""
    if not isinstance(text, str) or not text.strip():
        return Outcome(
            "failed",
            text if isinstance(text, str) else None,
            "empty_answer",
            error="the agent returned an empty answer",
        )
    return Outcome("completed", text, "stop")


def failed_tool(exc: BaseException, log: Any) -> Outcome | None:
    """A scenario tool's own exception that escaped the framework (the run ended on it)."""
    text = f"{type(exc).__name__}: {exc}"
    seen = {t.error for t in log.tools if not t.ok and t.error}
    cause: BaseException | None = exc
    while cause is not None:
        if f"{type(cause).__name__}: {cause}" in seen:
            return Outcome("failed", None, "tool_error", error=text[:2000])
        cause = cause.__cause__ or cause.__context__
    return None


@dataclass
class PeerPrepared(Prepared):
    agent: Any
    user: str
    history: list[dict[str, str]]
    deadline_s: float
    guards: ToolGuards  # the production engines' custom guards (reset before each run)


class PeerEngine(RecordingEngine):
    """A peer framework's engine: ``build`` the agent, ``invoke`` / ``stream`` it once, and
    ``classify`` what escaped; the run deadline is applied here (``asyncio.timeout``), the
    same for every engine."""

    retries_normalised = False  # the ``-retries`` variant: see the module docstring

    def openai_client(self, ctx: Any, **options: Any) -> Any:
        """``AsyncOpenAI(base_url=<the mock>)`` on the recording HTTP client; with retries
        normalised its ``max_retries`` is the scenario's (else the SDK's default)."""
        import openai

        if self.retries_normalised:
            options["max_retries"] = ctx.scenario.limits.max_retries
        return openai.AsyncOpenAI(
            base_url=mock_base_url(ctx),
            api_key=API_KEY,
            http_client=self.http_client(ctx, openai_http_lib()),
            **options,
        )

    def retry_options(self, ctx: Any) -> dict[str, Any]:
        """``max_retries=`` for frameworks that build the openai client themselves."""
        return {"max_retries": ctx.scenario.limits.max_retries} if self.retries_normalised else {}

    async def prepare(self, ctx: Any) -> PeerPrepared:
        # the guards of the agent ``build`` makes (a production engine hooks them in)
        self.guards = guards = ToolGuards(ctx.scenario)
        return PeerPrepared(
            ctx=ctx,
            accounting=self.accounting(ctx),
            agent=self.build(ctx),
            user=ctx.scenario.user,
            history=history_messages(ctx.scenario),
            deadline_s=run_timeout_s(ctx),
            guards=guards,
        )

    def build(self, ctx: Any) -> Any:
        raise NotImplementedError

    def before_run(self, prepared: PeerPrepared) -> None:
        prepared.guards.reset()

    async def invoke(self, p: PeerPrepared) -> Outcome:
        """The framework's ordinary call, and how it ended."""
        raise NotImplementedError

    async def stream(self, p: PeerPrepared) -> Outcome:
        """The framework's user-facing token stream (``RunContext.stream_tokens``), with
        ``ttft_ms``: the first content token of the final answer, from the run's start."""
        raise NotImplementedError

    def classify(self, exc: BaseException, p: PeerPrepared) -> Outcome:
        """Map an exception that escaped the framework onto a status and termination."""
        from bench.engines.common import exception_outcome
        from bench.engines.kit.runlog import current_log

        return (
            guard_outcome(exc)
            or classify_llm_error(exc)
            or failed_tool(exc, current_log())
            or exception_outcome(exc)
        )

    async def execute(self, p: PeerPrepared) -> Outcome:
        try:
            async with asyncio.timeout(p.deadline_s) as deadline:
                return await (self.stream(p) if p.ctx.stream_tokens else self.invoke(p))
        except TimeoutError as exc:
            if deadline.expired():
                return Outcome(
                    "aborted", None, "timeout", error=f"run deadline {p.deadline_s:g}s exceeded"
                )
            return self.classify(exc, p)
        except Exception as exc:
            return self.classify(exc, p)
