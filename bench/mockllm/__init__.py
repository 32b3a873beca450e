"""A scripted, OpenAI-compatible mock LLM (see DESIGN.md, The mock LLM)."""

from bench.mockllm.core import MockLLM, MockReply, RecordedRequest
from bench.mockllm.latency import LatencyProfile

__all__ = ["LatencyProfile", "MockLLM", "MockReply", "RecordedRequest"]
