"""`schedbench mock serve`: a real server on loopback that starts, answers and stops cleanly."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

import httpx

from bench.referee.server import READY_PREFIX


def test_mock_serve_prints_its_url_answers_and_stops_on_ctrl_c():
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.cli", "mock", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith(READY_PREFIX + "http://127.0.0.1:"), line
        base_url = line.removeprefix(READY_PREFIX).strip()
        models = httpx.get(f"{base_url}/models").json()
        assert "scenario/customer_returns" in [m["id"] for m in models["data"]]
        missing = httpx.post(f"{base_url}/nothing", json={})
        assert missing.status_code == 404
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()


def test_responses_arrive_without_nagle_stalls(mock_server):
    """Accepted sockets carry TCP_NODELAY (else each response stalls ~40 ms)."""
    host, port = mock_server.base_url.removeprefix("http://").split("/")[0].split(":")
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
    # the listening socket's option is inherited by accepted sockets on Linux
    from bench.referee.server import _listening_socket

    listener = _listening_socket(0)
    try:
        assert listener.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 1
        client.close()
        accepted.close()
    finally:
        listener.close()


def test_unknown_port_value_is_refused(capsys):
    from bench.cli import main

    assert main(["mock", "serve", "--port", "70000"]) == 2
    assert capsys.readouterr().err.strip() == (
        "schedbench mock: error: --port must be between 0 and 65535, not 70000"
    )


def test_a_server_process_removes_its_temporary_log_when_nothing_was_written_to_it(tmp_path):
    from bench.referee.server import start_server_process

    with start_server_process() as quiet:
        assert quiet.log is not None and quiet.log.exists()
    assert not quiet.log.exists()
    with start_server_process() as noisy:
        assert noisy.log is not None
        noisy.log.write_text("what broke\n")
    assert noisy.log.read_text() == "what broke\n"  # a log with text is kept
    noisy.log.unlink()
    given = tmp_path / "mock.log"
    with start_server_process(log=given):
        pass
    assert given.exists()  # the caller's own log is the caller's
