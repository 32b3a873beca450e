"""Test-wide guards: no network but loopback, LangSmith off."""

from __future__ import annotations

import ipaddress
import os
import socket

import pytest

from bench.runner.offline import offline_env

offline_env(os.environ)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class NetworkBlocked(AssertionError):
    """A test tried to reach something other than loopback."""


def _check(address: object) -> None:
    if isinstance(address, tuple) and address:
        host = address[0]
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            if host == "localhost":
                return
        raise NetworkBlocked(f"tests may only connect to loopback, not {address!r}")


def _guarded_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def loopback_only():
    """Fail any connection that is not to 127.0.0.0/8 or ::1."""
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex
