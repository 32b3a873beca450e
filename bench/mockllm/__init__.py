"""A scripted, OpenAI-compatible mock LLM (see DESIGN.md, The mock LLM)."""

from bench.mockllm.core import MockLLM
from bench.mockllm.latency import LatencyProfile
from bench.mockllm.reply import MockReply, RecordedRequest

__all__ = ["LatencyProfile", "MockLLM", "MockReply", "RecordedRequest"]
