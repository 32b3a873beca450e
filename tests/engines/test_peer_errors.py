"""How an exception that escaped a peer framework is scored (``bench.engines.peers``).

A transport error anywhere in the chain — raised as is, as the cause or context of a
framework's own exception, inside an exception group, or kept by a wrapper as an attribute
(Strands' ``EventLoopException.original_exception``) — is ``failed`` / ``llm_error``, as the
``raw`` engine scores the same exception. Each peer's actual wrapping is run in its own
environment by ``tests/engines/test_peers.py``; these build the same shapes here.
"""

from __future__ import annotations

import httpx
import httpx2
import openai
import pytest

from bench.engines.peers import classify_llm_error, exception_chain

REQUEST = httpx.Request("POST", "http://mock/v1/chat/completions")
REQUEST2 = httpx2.Request("POST", "http://mock/v1/chat/completions")


class EventLoopException(Exception):
    """Strands' wrapper: keeps the original and is raised ``from`` it."""

    def __init__(self, original_exception: Exception):
        self.original_exception = original_exception
        super().__init__(str(original_exception))


class KeepsOriginal(Exception):
    """A wrapper that keeps the original as an attribute only (no ``from``)."""

    def __init__(self, error: Exception):
        super().__init__("model call failed")
        self.error = error


def raised(factory):
    """The exception ``factory`` raises (with its chain as Python builds it)."""
    try:
        factory()
    except BaseException as exc:
        return exc
    raise AssertionError("nothing was raised")


def read_timeout():
    raise httpx.ReadTimeout("no data within 0.5s", request=REQUEST)


def dropped2():
    raise httpx2.RemoteProtocolError("peer closed connection", request=REQUEST2)


def wrapped_from():
    try:
        read_timeout()
    except httpx.ReadTimeout as e:
        raise EventLoopException(e) from e


def wrapped_in_context():
    try:
        dropped2()
    except httpx2.RemoteProtocolError:
        raise RuntimeError("Error in step 'run_agent_step'") from None


def wrapped_in_context_only():
    try:
        dropped2()
    except httpx2.RemoteProtocolError:
        raise RuntimeError("Error in step 'run_agent_step'")  # noqa: B904 - __context__ only


def kept_as_attribute():
    raise KeepsOriginal(httpx.RemoteProtocolError("peer closed connection", request=REQUEST))


def in_a_group():
    group = ExceptionGroup("unhandled errors in a TaskGroup", [raised(dropped2)])
    try:
        raise group
    except ExceptionGroup as e:
        raise RuntimeError("the agent's task group failed") from e


def api_connection_error():
    raise openai.APIConnectionError(request=REQUEST2)


def wrapped_twice():
    try:
        wrapped_from()
    except EventLoopException as e:
        raise RuntimeError("the run failed") from e


TRANSPORT = {
    "httpx ReadTimeout as is": read_timeout,
    "httpx2 RemoteProtocolError as is": dropped2,
    "openai APIConnectionError": api_connection_error,
    "Strands' EventLoopException from ReadTimeout": wrapped_from,
    "a wrapper raised from None (context kept)": wrapped_in_context,
    "a wrapper raised in the except block (__context__)": wrapped_in_context_only,
    "a wrapper that keeps it as an attribute": kept_as_attribute,
    "inside an exception group": in_a_group,
    "two wrappers deep": wrapped_twice,
}


@pytest.mark.parametrize("shape", TRANSPORT)
def test_a_transport_error_anywhere_in_the_chain_is_an_llm_error(shape):
    exc = raised(TRANSPORT[shape])
    outcome = classify_llm_error(exc)
    assert outcome is not None, shape
    assert (outcome.status, outcome.final_answer, outcome.termination) == (
        "failed",
        None,
        "llm_error",
    )
    assert outcome.error.startswith(f"{type(exc).__name__}: ")


def test_the_error_text_names_the_transport_error_under_a_wrapper():
    outcome = classify_llm_error(raised(wrapped_from))
    assert outcome is not None
    assert outcome.error == (
        "EventLoopException: no data within 0.5s (from httpx.ReadTimeout: no data within 0.5s)"
    )


def not_transport():
    try:
        raise ValueError("bad value")
    except ValueError as e:
        raise RuntimeError("a framework bug") from e


@pytest.mark.parametrize(
    "factory",
    [not_transport, lambda: (_ for _ in ()).throw(KeyError("choices"))],
    ids=["a chain without a transport error", "a KeyError"],
)
def test_anything_else_is_not_an_llm_error(factory):
    assert classify_llm_error(raised(factory)) is None


def test_the_chain_visits_each_exception_once_even_in_a_cycle():
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__context__, b.__context__ = b, a
    a.partner = b  # an attribute pointing back into the chain
    assert [str(e) for e in exception_chain(a)] == ["a", "b"]
