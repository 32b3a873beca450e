"""The referee: a scripted, OpenAI- and Anthropic-compatible mock LLM, its own token counter,
its loopback server and the pool of its processes (docs/architecture.md). It knows no engine."""

from bench.referee.core import MockLLM
from bench.referee.latency import LatencyProfile
from bench.referee.reply import MockReply, RecordedRequest

__all__ = ["LatencyProfile", "MockLLM", "MockReply", "RecordedRequest"]
