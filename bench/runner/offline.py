"""The environment every process of a run gets: tracing off, a placeholder API key.

LangSmith traces when ``LANGSMITH_TRACING`` (or an older spelling) is set, and without a
network it then hangs at exit; OpenAI-compatible clients refuse to start without an API key.
Every worker, probe and test process passes through ``offline_env`` before it imports a
framework.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TypeVar

from bench.model.mock import PLACEHOLDER_KEY

TRACING_VARS = ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGCHAIN_TRACING")

M = TypeVar("M", bound=MutableMapping[str, str])


def offline_env(env: M) -> M:
    """``env`` (``os.environ``, or a copy for a child process) with tracing forced off and an
    API key set when it has none; changed in place and returned."""
    for var in TRACING_VARS:
        env[var] = "false"
    env.setdefault("OPENAI_API_KEY", PLACEHOLDER_KEY)
    return env
