"""The mock's latency model: time to first token plus a token rate, with seeded jitter."""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class LatencyProfile:
    """How long the mocked LLM takes. All zero by default: framework overhead measured alone.

    ``jitter`` is a fraction: each request's delays are scaled by a factor drawn uniformly
    from ``[1 - jitter, 1 + jitter]``, seeded by ``seed`` and the scripted turn (scenario,
    protocol, turn index), so every engine gets the same delay for the same turn, in every
    run and every process.
    """

    name: str = "zero"
    ttft_ms: float = 0.0
    tokens_per_s: float | None = None
    jitter: float = 0.0
    seed: int = 0

    @classmethod
    def zero(cls) -> LatencyProfile:
        return cls()

    @classmethod
    def realistic(cls, seed: int = 0) -> LatencyProfile:
        """A hosted-model profile: 300 ms to the first token, then 50 tokens/s, ±20%."""
        return cls(name="realistic", ttft_ms=300.0, tokens_per_s=50.0, jitter=0.2, seed=seed)

    @classmethod
    def ttft(cls, seed: int = 0) -> LatencyProfile:
        """The TTFT phase's profile: 100 ms to the first token, then 1,000 tokens/s, ±10%.

        A real model's first-token wait, but a fast token rate, so that a run of
        ``streaming_long_answer`` (~400 answer tokens) takes ~0.6 s instead of ~8.5 s under
        ``realistic``: framework latency on the way to the first token adds to the scripted
        wait, whatever the wait is.
        """
        return cls(name="ttft", ttft_ms=100.0, tokens_per_s=1000.0, jitter=0.1, seed=seed)

    @classmethod
    def named(cls, name: str) -> LatencyProfile:
        profiles = {"zero": cls.zero, "realistic": cls.realistic, "ttft": cls.ttft}
        if name not in profiles:
            raise ValueError(f"unknown latency profile {name!r}; choose one of {sorted(profiles)}")
        return profiles[name]()

    @property
    def is_zero(self) -> bool:
        return self.ttft_ms == 0 and not self.tokens_per_s

    def delays(self, request_key: int, completion_tokens: int) -> tuple[float, float]:
        """(seconds to the first token, seconds for the rest of the completion)."""
        if self.is_zero:
            return 0.0, 0.0
        factor = 1.0
        if self.jitter:
            factor = random.Random(hash((self.seed, request_key))).uniform(
                1 - self.jitter, 1 + self.jitter
            )
        ttft = self.ttft_ms / 1000 * factor
        rest = completion_tokens / self.tokens_per_s * factor if self.tokens_per_s else 0.0
        return ttft, rest
