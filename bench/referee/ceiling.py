"""``python -m bench.referee.ceiling``: a bare HTTP client hammering a loopback mock.

No agent, no framework, no client library: ``--concurrency`` connections each post the
request bodies of ``--bodies FILE`` in turn (a JSON list: the raw loop's own requests on one
in-process run, captured by the caller; the streamed mode adds ``stream: true``) and read
every reply to its end, back to back, for ``--duration`` seconds. Prints one JSON line: requests answered 200,
errors, the elapsed time, this process's CPU seconds and what the requests cost the
mock's processes (``--mock-pid``, read with psutil), per mode (``--modes json,stream``).
``bench.referee.pool.probe`` runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any


def request_bodies(requests: list[dict[str, Any]], stream: bool) -> list[bytes]:
    """The request bodies to post (streamed ones, if asked)."""
    bodies = []
    for request in requests:
        body = dict(request)
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        bodies.append(json.dumps(body).encode())
    return bodies


async def _exchange(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes
) -> int:
    """One HTTP/1.1 request on a kept-alive connection; the reply read to its end."""
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    if "content-length" in headers:
        await reader.readexactly(int(headers["content-length"]))
    elif headers.get("transfer-encoding") == "chunked":
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    return status


async def hammer(
    base_url: str, bodies: list[bytes], concurrency: int, duration_s: float
) -> dict[str, Any]:
    """``concurrency`` kept-alive connections, each posting the bodies in turn, back to back.

    A bare asyncio HTTP/1.1 client (a few lines, ~50 µs a request): an ordinary client
    library costs more per request than the mock itself as connections grow (httpx's pool
    walks its connections on every request), and would measure itself.
    """
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    path = parts.path.rstrip("/") + "/chat/completions"
    requests = [
        (
            f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        + body
        for body in bodies
    ]
    counts = {"requests": 0, "errors": 0}
    # the connections are opened before the clock starts, and each posts at least once: on a
    # busy host, opening them can take longer than the whole window
    connections = await asyncio.gather(
        *(asyncio.open_connection(parts.hostname, parts.port) for _ in range(concurrency))
    )
    cpu, start = time.process_time(), time.perf_counter()
    deadline = start + duration_s

    async def worker(
        offset: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            turn = offset
            while True:
                status = await _exchange(reader, writer, requests[turn % len(requests)])
                counts["requests" if status == 200 else "errors"] += 1
                turn += 1
                if time.perf_counter() >= deadline:
                    break
        except (OSError, asyncio.IncompleteReadError, ValueError):
            counts["errors"] += 1
        finally:
            writer.close()

    await asyncio.gather(*(worker(i, *pair) for i, pair in enumerate(connections)))
    elapsed, cpu_s = time.perf_counter() - start, time.process_time() - cpu
    return {**counts, "elapsed_s": elapsed, "cpu_s": cpu_s}


def cpu_s(pids: list[int]) -> float:
    """CPU seconds the processes ``pids`` have used so far."""
    import psutil

    total = 0.0
    for pid in pids:
        times = psutil.Process(pid).cpu_times()
        total += times.user + times.system
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.referee.ceiling")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--bodies", required=True, help="a JSON file: a list of request bodies")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--duration", type=float, default=1.5)
    parser.add_argument("--modes", default="json,stream", help="json, stream or both")
    parser.add_argument("--mock-pid", type=int, action="append", default=[])
    args = parser.parse_args(argv)
    from bench.referee.pool import raise_open_files_limit

    raise_open_files_limit()
    with open(args.bodies, encoding="utf-8") as fh:
        requests = json.load(fh)
    for mode in args.modes.split(","):
        stream = mode == "stream"
        bodies = request_bodies(requests, stream)
        before = cpu_s(args.mock_pid)
        report = asyncio.run(hammer(args.base_url, bodies, args.concurrency, args.duration))
        report.update({"stream": stream, "mock_cpu_s": cpu_s(args.mock_pid) - before})
        print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
