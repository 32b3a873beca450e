"""A scripted, OpenAI-compatible mock LLM (see DESIGN.md, The mock LLM)."""

from bench.referee.core import MockLLM
from bench.referee.latency import LatencyProfile
from bench.referee.reply import MockReply, RecordedRequest

__all__ = ["LatencyProfile", "MockLLM", "MockReply", "RecordedRequest"]
