"""Agents working together.

*Hierarchical* (supervisor / workers): ``agent_as_tool(worker)`` is a tool that runs the
worker on a task and returns its answer; the worker's whole run is traced under the
supervisor's ``execute_tool`` span. A worker that does not complete is a tool error; one
stopped by the request's own budget (the caller's steps, tokens or depth) raises that budget's
error, so that the tool's circuit breaker does not count the caller's limit as its failure.

*Swarm* (handoff): ``handoff(other)`` is a tool ``transfer_to_<name>``; when the LLM calls
it, the current agent stops and ``other`` continues the same conversation (with its own
system prompt and tools). The run's result is the last agent's, its trace nested under the
handoff call, its usage the sum of all agents involved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from scheduler.errors import RequestBudgetExceeded
from scheduler.tools import NO_TIMEOUT, ToolContext, ToolSpec
from scheduler.types import Handoff, RunResult

if TYPE_CHECKING:
    from scheduler.state import RunState
    from scheduler.trace import Span


class NestedRunner(Protocol):
    """What composition needs of an agent (``LightweightAgent`` is one): a name and a way
    to run as part of another run's request."""

    name: str

    async def run_nested(
        self,
        user_input: str | None,
        *,
        parent: RunState,
        span: Span | None,
        messages: list[dict[str, Any]] | None = None,
        handoff: bool = False,
    ) -> RunResult: ...


class WorkerFailed(RuntimeError):
    """A worker agent ended without completing (reported to the supervisor's LLM)."""


def agent_as_tool(
    agent: NestedRunner,
    name: str | None = None,
    description: str | None = None,
    *,
    timeout: float | None = NO_TIMEOUT,
) -> ToolSpec:
    """A tool ``name(task: str)`` that delegates ``task`` to ``agent``."""

    async def delegate(task: str, ctx: ToolContext) -> str:
        result = await agent.run_nested(task, parent=ctx.state, span=ctx.span)
        if isinstance(result.error, RequestBudgetExceeded):
            raise result.error  # the caller's request ran out, not the worker
        if not result.ok:
            raise WorkerFailed(
                f"{agent.name} {result.status.value} ({result.reason.value}): {result.detail}"
            )
        return result.content or ""

    parameters = {
        "type": "object",
        "properties": {
            "task": {"type": "string", "description": "The task, with everything the agent needs."}
        },
        "required": ["task"],
        "additionalProperties": False,
    }
    return ToolSpec(
        name=name or agent.name,
        description=description or f"Delegate a task to the {agent.name} agent and get its answer.",
        parameters=parameters,
        handler=delegate,
        timeout=timeout,
        expose_errors=True,  # the worker's outcome is what the supervisor needs to read
    )


def handoff(
    agent: NestedRunner, name: str | None = None, description: str | None = None
) -> ToolSpec:
    """A tool ``transfer_to_<agent>()`` that hands the conversation over to ``agent``."""

    def transfer() -> Handoff:
        return Handoff(agent)

    return ToolSpec(
        name=name or f"transfer_to_{agent.name}",
        description=description or f"Hand the conversation over to the {agent.name} agent.",
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
        handler=transfer,
        run_in_thread=False,
    )
