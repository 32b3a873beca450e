"""A circuit breaker: stop calling a tool that keeps failing, try it again after a cooldown.

    CLOSED --(failure_threshold consecutive failures)--> OPEN
    OPEN --(cooldown_s elapsed, next allow())--> HALF_OPEN
    HALF_OPEN --(trial call succeeds)--> CLOSED      (failure count reset)
    HALF_OPEN --(trial call fails)--> OPEN           (cooldown restarts)
    HALF_OPEN --(trial ends with no verdict: release())--> HALF_OPEN, next trial allowed

Every ``allow()`` that returned True is answered by exactly one of ``record_success()``,
``record_failure()`` or ``release()`` — the last for a call that says nothing about the
dependency (cancelled by a disconnecting client, or refused for the caller's own input), so
that a cancelled trial never leaves the breaker half-open and refusing forever.

The sketch this replaces tested ``open`` the wrong way round and never reset its count on
success; here a success in CLOSED resets the consecutive-failure count and a success in
HALF_OPEN closes the circuit. The clock is injectable so tests need no sleeping.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from enum import StrEnum


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class CircuitBreaker:
    """Counts consecutive failures of one dependency and refuses calls while open."""

    __slots__ = (
        "_clock",
        "_opened_at",
        "_state",
        "_trials",
        "cooldown_s",
        "failure_threshold",
        "failures",
        "half_open_max_calls",
        "transitions",
    )

    def __init__(
        self,
        failure_threshold: int = 3,
        cooldown_s: float = 60.0,
        *,
        half_open_max_calls: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ):
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be >= 1")
        if cooldown_s < 0:
            raise ValueError("cooldown_s must be >= 0")
        self.failure_threshold = failure_threshold
        self.cooldown_s = cooldown_s
        self.half_open_max_calls = half_open_max_calls
        self._clock = clock
        self._state = BreakerState.CLOSED
        self.failures = 0  # consecutive failures
        self._opened_at = 0.0
        self._trials = 0  # calls let through while half-open
        self.transitions: deque[tuple[BreakerState, BreakerState]] = deque(maxlen=64)  # recent

    def __repr__(self) -> str:
        return f"CircuitBreaker(state={self.state.value}, failures={self.failures}/{self.failure_threshold})"

    @property
    def state(self) -> BreakerState:
        """The current state; an OPEN breaker whose cooldown has elapsed reads HALF_OPEN."""
        if self._state is BreakerState.OPEN and self._clock() - self._opened_at >= self.cooldown_s:
            self._move(BreakerState.HALF_OPEN)
            self._trials = 0
        return self._state

    def retry_in(self) -> float:
        """Seconds until an OPEN breaker lets a trial call through (0 otherwise)."""
        if self._state is not BreakerState.OPEN:
            return 0.0
        return max(0.0, self.cooldown_s - (self._clock() - self._opened_at))

    def allow(self) -> bool:
        """May a call go through now? Counts half-open trial calls."""
        state = self.state
        if state is BreakerState.CLOSED:
            return True
        if state is BreakerState.HALF_OPEN and self._trials < self.half_open_max_calls:
            self._trials += 1
            return True
        return False

    def release(self) -> None:
        """An allowed call ended without a verdict: free its half-open trial slot."""
        if self._state is BreakerState.HALF_OPEN and self._trials > 0:
            self._trials -= 1

    def record_success(self) -> None:
        self.failures = 0
        if self._state is not BreakerState.CLOSED:
            self._move(BreakerState.CLOSED)

    def record_failure(self) -> None:
        self.failures += 1
        if self._state is BreakerState.HALF_OPEN or (
            self._state is BreakerState.CLOSED and self.failures >= self.failure_threshold
        ):
            self._opened_at = self._clock()
            self._move(BreakerState.OPEN)

    def reset(self) -> None:
        """Force CLOSED with no failures (an operator's manual reset)."""
        self.failures = 0
        self._trials = 0
        if self._state is not BreakerState.CLOSED:
            self._move(BreakerState.CLOSED)

    def _move(self, target: BreakerState) -> None:
        self.transitions.append((self._state, target))
        self._state = target
