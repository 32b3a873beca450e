"""langsmith's ``traceable`` spans, made cheap with tracing off (``lc-create-agent-prod-inline``).

``create_agent`` wraps every ``wrap_model_call`` / ``wrap_tool_call`` layer in
``langsmith.traceable``. Its async wrapper sets up and closes the span with
``aio_to_thread`` — two worker-thread hops per call — whether tracing is on or not.
langsmith's public ``set_runtime_overrides(aio_to_thread=...)`` (meant for runtimes without
``run_in_executor``, such as Temporal) lets a service run that setup and teardown inline on
the event loop. It is a process-wide switch: a service sets it once at startup (``set_runtime_overrides()``
restores the default). With tracing
*on*, the teardown then runs on the loop too (it only queues the run for langsmith's
background sender).
"""

from __future__ import annotations

from typing import Any

import langsmith


async def _inline(default: Any, ctx: Any, func: Any, /, *args: Any, **kwargs: Any) -> Any:
    return ctx.run(func, *args, **kwargs)


def inline_traceable_hops() -> None:
    """Run langsmith's span setup and teardown on the event loop (no thread hops)."""
    langsmith.set_runtime_overrides(aio_to_thread=_inline)
