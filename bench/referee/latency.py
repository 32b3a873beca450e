"""The mock's latency model: time to first token plus a token rate, with seeded jitter.

The ``recorded`` profile instead plays each turn's measured ``timing`` (a scenario recorded
from real traffic, ``bench.traffic``): see ``recorded_schedule``.

Besides the named profiles (``PROFILE_NAMES``), a **custom** profile travels between processes
as a spec string: ``custom:ttft:1000,tps:50,jitter:0.2`` (time to first token in ms, tokens/s,
the jitter fraction; ``tps`` and ``jitter`` optional). Key and value are joined by ``:``, not
``=``: a worker is given its loopback mocks as ``--base-url LATENCY=URL``, split at the first
``=``. ``LatencyProfile.named`` accepts both kinds (``ValueError`` naming the problem
otherwise); ``LatencyProfile.custom(...).name`` is the canonical spec, which
``LatencyProfile.named`` reads back to an equal profile.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scenarios.schema import TurnTiming

PROFILE_NAMES = ("zero", "realistic", "ttft", "recorded")
CUSTOM_PREFIX = "custom:"
CUSTOM_KEYS = ("ttft", "tps", "jitter")  # ms to the first token, tokens/s, jitter fraction
MAX_TTFT_MS = 600_000.0  # ten minutes: past it a run's deadline cuts every call
MAX_TOKENS_PER_S = 1_000_000.0
MAX_SPEC_CHARS = 200


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
    def custom(
        cls, ttft_ms: float, tokens_per_s: float | None = None, jitter: float = 0.0
    ) -> LatencyProfile:
        """A profile of the user's own numbers, named by its canonical spec string
        (``custom:ttft:…,tps:…,jitter:…``); ``ValueError`` for a number out of range."""
        ttft_ms = _checked("ttft", ttft_ms, 0.0, MAX_TTFT_MS)
        if tokens_per_s is not None:
            tokens_per_s = _checked("tps", tokens_per_s, 0.0, MAX_TOKENS_PER_S)
            if tokens_per_s == 0:
                raise ValueError("tps: must be above 0 (leave it out for no token-rate delay)")
        jitter = _checked("jitter", jitter, 0.0, 0.99)
        parts = [f"ttft:{_number(ttft_ms)}"]
        if tokens_per_s is not None:
            parts.append(f"tps:{_number(tokens_per_s)}")
        if jitter:
            parts.append(f"jitter:{_number(jitter)}")
        return cls(
            name=CUSTOM_PREFIX + ",".join(parts),
            ttft_ms=ttft_ms,
            tokens_per_s=tokens_per_s,
            jitter=jitter,
        )

    @classmethod
    def from_spec(cls, spec: str) -> LatencyProfile:
        """Parse ``custom:ttft:1000,tps:50,jitter:0.2`` (``ValueError`` naming the problem)."""
        if not isinstance(spec, str) or not spec.startswith(CUSTOM_PREFIX):
            raise ValueError(f"a custom latency spec starts with {CUSTOM_PREFIX!r}: {spec!r}")
        if len(spec) > MAX_SPEC_CHARS:
            raise ValueError(f"custom latency spec longer than {MAX_SPEC_CHARS} characters")
        if "=" in spec:
            raise ValueError(
                f"custom latency spec {spec!r}: join keys and values with ':', not '=' "
                "(custom:ttft:1000,tps:50,jitter:0.2)"
            )
        values: dict[str, float] = {}
        for item in spec[len(CUSTOM_PREFIX) :].split(","):
            key, sep, text = item.strip().partition(":")
            if not sep or not key or not text:
                raise ValueError(
                    f"custom latency spec {spec!r}: {item!r} is not KEY:NUMBER "
                    f"(keys: {', '.join(CUSTOM_KEYS)})"
                )
            if key not in CUSTOM_KEYS:
                raise ValueError(
                    f"custom latency spec {spec!r}: unknown key {key!r}; "
                    f"keys: {', '.join(CUSTOM_KEYS)}"
                )
            if key in values:
                raise ValueError(f"custom latency spec {spec!r}: {key!r} given twice")
            try:
                values[key] = float(text)
            except ValueError:
                raise ValueError(
                    f"custom latency spec {spec!r}: {key}: {text!r} is not a number"
                ) from None
        if "ttft" not in values:
            raise ValueError(f"custom latency spec {spec!r}: 'ttft' (ms) is required")
        try:
            return cls.custom(values["ttft"], values.get("tps"), values.get("jitter", 0.0))
        except ValueError as exc:
            raise ValueError(f"custom latency spec {spec!r}: {exc}") from None

    @classmethod
    def named(cls, name: str) -> LatencyProfile:
        """The profile called ``name``: one of ``PROFILE_NAMES``, or a custom spec."""
        if isinstance(name, str) and name.startswith(CUSTOM_PREFIX):
            return cls.from_spec(name)
        if name not in PROFILE_NAMES:
            raise ValueError(
                f"unknown latency profile {name!r}; choose one of {sorted(PROFILE_NAMES)} "
                f"or a spec like '{CUSTOM_PREFIX}ttft:1000,tps:50,jitter:0.2'"
            )
        profile: LatencyProfile = getattr(cls, name)()  # each name is a constructor above
        return profile

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


def is_profile(name: str) -> bool:
    """Whether ``LatencyProfile.named`` accepts ``name``."""
    try:
        LatencyProfile.named(name)
    except ValueError:
        return False
    return True


def _checked(key: str, value: float, low: float, high: float) -> float:
    number = float(value)
    if not math.isfinite(number) or not low <= number <= high:
        raise ValueError(f"{key}: {value!r} out of range ({low:g} to {high:g})")
    return number


def _number(value: float) -> str:
    """The shortest text that reads back to the same float (``1000``, ``0.2``, ``1e-07``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


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
