"""CircuitBreaker: closed -> open after N consecutive failures, half-open after the cooldown."""

from __future__ import annotations

import pytest

from scheduler import BreakerState, CircuitBreaker

from .conftest import FakeClock

CLOSED, OPEN, HALF = BreakerState.CLOSED, BreakerState.OPEN, BreakerState.HALF_OPEN


def test_opens_after_threshold_and_closes_after_cooldown():
    clock = FakeClock()
    breaker = CircuitBreaker(failure_threshold=3, cooldown_s=60, clock=clock)
    for _ in range(2):
        assert breaker.allow()
        breaker.record_failure()
    assert (breaker.state, breaker.failures) == (CLOSED, 2)
    breaker.record_failure()
    assert (breaker.state, breaker.allow(), breaker.retry_in()) == (OPEN, False, 60)
    clock.advance(59.9)
    assert (breaker.state, breaker.allow()) == (OPEN, False)
    clock.advance(0.1)
    assert breaker.state is HALF
    assert breaker.allow() is True  # the one trial call
    assert breaker.allow() is False  # no second one while the trial runs
    breaker.record_success()
    assert (breaker.state, breaker.failures, breaker.allow()) == (CLOSED, 0, True)
    assert list(breaker.transitions) == [(CLOSED, OPEN), (OPEN, HALF), (HALF, CLOSED)]


def test_failed_trial_reopens_for_a_full_cooldown():
    clock = FakeClock()
    breaker = CircuitBreaker(failure_threshold=1, cooldown_s=10, clock=clock)
    breaker.record_failure()
    clock.advance(10)
    assert breaker.allow()
    breaker.record_failure()
    assert (breaker.state, breaker.retry_in()) == (OPEN, 10)
    clock.advance(10)
    assert breaker.state is HALF
    assert list(breaker.transitions) == [(CLOSED, OPEN), (OPEN, HALF), (HALF, OPEN), (OPEN, HALF)]


def test_success_resets_the_consecutive_count():
    # the sketch never reset its count: three failures spread over time opened it
    breaker = CircuitBreaker(failure_threshold=3, clock=FakeClock())
    for _ in range(5):
        breaker.record_failure()
        breaker.record_failure()
        breaker.record_success()
    assert (breaker.state, breaker.failures, list(breaker.transitions)) == (CLOSED, 0, [])


def test_manual_reset_and_validation():
    breaker = CircuitBreaker(failure_threshold=1, clock=FakeClock())
    breaker.record_failure()
    breaker.reset()
    assert (breaker.state, breaker.failures) == (CLOSED, 0)
    assert repr(breaker) == "CircuitBreaker(state=closed, failures=0/1)"
    with pytest.raises(ValueError, match="failure_threshold"):
        CircuitBreaker(failure_threshold=0)
    with pytest.raises(ValueError, match="cooldown_s"):
        CircuitBreaker(cooldown_s=-1)
