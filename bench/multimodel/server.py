"""The loopback mock for the multi-model check, served from a thread of the checking process.

A real HTTP server on 127.0.0.1 (``bench.referee.server``: starlette + uvicorn, TCP_NODELAY),
as the benchmark's loopback transport uses, but in a thread of this process so that the
mock's record of every request it received (``MockLLM.requests``) can be read after each
check: ``ChatAnthropic`` builds its own HTTP client (it takes no client to record through),
so the requests of every engine and provider are counted where they arrive. Nothing here is
timed.
"""

from __future__ import annotations

import threading
import time
from types import TracebackType

import uvicorn

from bench.referee import MockLLM
from bench.referee.server import HOST, DeadlineProtocol, _listening_socket, create_app

START_TIMEOUT_S = 10.0


class ThreadedMockServer:
    """``with ThreadedMockServer(mock) as server:`` — ``server.openai_url`` (``…/v1``, what
    OpenAI clients take) and ``server.anthropic_url`` (the host, what Anthropic clients take)."""

    def __init__(self, mock: MockLLM):
        self.mock = mock
        self._socket = _listening_socket(0)
        port = self._socket.getsockname()[1]
        self.anthropic_url = f"http://{HOST}:{port}"
        self.openai_url = f"{self.anthropic_url}/v1"
        config = uvicorn.Config(
            create_app(mock),
            log_level="warning",
            access_log=False,
            lifespan="off",
            http=DeadlineProtocol,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._socket]},
            name="multimodel-mock",
            daemon=True,
        )

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the mock server thread did not start")
            time.sleep(0.005)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=START_TIMEOUT_S)
        self._socket.close()

    def __enter__(self) -> ThreadedMockServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
