"""The mock's latency model: time to first token plus a token rate, with seeded jitter.

The ``recorded`` profile instead plays each turn's measured ``timing`` (a scenario recorded
from real traffic, ``bench.traffic``): see ``recorded_schedule``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scenarios.schema import TurnTiming

PROFILE_NAMES = ("zero", "realistic", "ttft", "recorded")


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
    plays_recorded: bool = False  # turns with a recorded ``timing`` play it (else: as above)

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
    def recorded(cls) -> LatencyProfile:
        """Each turn as the real model answered it when recorded: its time to first token,
        the gaps between its chunks (jitter as observed, nothing drawn) and its total time.
        Turns without a recorded ``timing`` answer at once."""
        return cls(name="recorded", plays_recorded=True)

    @classmethod
    def named(cls, name: str) -> LatencyProfile:
        if name not in PROFILE_NAMES:
            raise ValueError(
                f"unknown latency profile {name!r}; choose one of {sorted(PROFILE_NAMES)}"
            )
        return getattr(cls, name)()  # each name is a constructor above

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


def recorded_schedule(
    timing: TurnTiming, chunks: int, payload: range
) -> tuple[float, tuple[float, ...]]:
    """Play a recorded turn on the mock's own SSE chunks: (seconds to the first byte, each
    chunk's offset in seconds from it).

    ``payload`` are the indices of the chunks that carry content or tool-call fragments (the
    role chunk before them, finish / usage / ``[DONE]`` after them). The first payload chunk
    leaves at ``ttft_ms``; the others follow the recorded arrival curve (first to last
    recorded chunk) at the same fraction of the way, so that a different chunking keeps the
    recorded pace, pauses included (without recorded gaps: an even pace up to ``total_ms``);
    the trailing chunks leave at ``total_ms``. A turn recorded without streaming has no
    first-token time: every chunk leaves at ``total_ms``.
    """
    total = timing.total_ms / 1000
    if timing.ttft_ms is None:
        return total, (0.0,) * chunks
    ttft = timing.ttft_ms / 1000
    arrivals = [0.0, *accumulate(g / 1000 for g in timing.gaps_ms)]  # from the first chunk
    end = max(total - ttft, arrivals[-1])
    if len(arrivals) == 1:
        arrivals.append(end)  # no gaps recorded (a log, one chunk): an even pace to the end
    offsets = []
    for i in range(chunks):
        if i < payload.start:
            offsets.append(0.0)
        elif i >= payload.stop:
            offsets.append(end)
        else:
            offsets.append(_on_curve(arrivals, (i - payload.start) / max(len(payload) - 1, 1)))
    return ttft, tuple(offsets)


def _on_curve(arrivals: list[float], fraction: float) -> float:
    """The recorded arrival time at ``fraction`` of the way from the first to the last chunk,
    interpolated linearly between the two recorded chunks around it."""
    position = fraction * (len(arrivals) - 1)
    low = min(int(position), len(arrivals) - 1)
    high = min(low + 1, len(arrivals) - 1)
    return arrivals[low] + (arrivals[high] - arrivals[low]) * (position - low)
