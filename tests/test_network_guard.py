import socket

import pytest

from tests.conftest import NetworkBlocked


def test_connection_outside_loopback_is_refused():
    with socket.socket() as sock, pytest.raises(NetworkBlocked, match=r"10\.1\.2\.3"):
        sock.connect(("10.1.2.3", 80))


def test_loopback_connection_is_allowed():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.socket() as client:
            client.connect(server.getsockname())
            assert client.getpeername() == server.getsockname()
