"""How long one large request body holds a concurrent small request at the mock LLM server.

Starts the mock (``start_server_process``: its own process, HTTP on 127.0.0.1, ``zero``
latency) and, ``--repeats`` times, POSTs a chat-completions body of about ``--size-mb`` MB
(one huge user message of English sentences, just under the mock's 8 MiB limit by default,
opened by a tag of its own so the mock's token cache never answers it) on one connection;
``--delay-ms`` (30) after its last byte is written, a small chat request goes out on another
connection (sent at once, it could land while the server is still reading the large body,
before any counting starts). Prints per repeat the small request's latency (``small``) and the
large one's (start of upload to answer, ``large``), then the median and max of ``small`` next
to the baseline: the small request alone, no large body in flight.

Read it as: ``small`` minus the baseline is how long the large body held the server's event
loop for everyone else, less the ``--delay-ms`` that had already passed. With the body parsed
and counted on the loop that is about the whole counting time; handled in a worker thread it
should stay near the baseline. To measure the code before a change, put that tree first on the
path (the server module is found under ``bench/referee`` or, in older trees, ``bench/mockllm``)::

    .venv/bin/python benchmarks/mock_large_body.py [--repeats 5] [--size-mb 8] [--delay-ms 30]
    git archive BASE | tar -x -C /tmp/before
    PYTHONPATH=/tmp/before .venv/bin/python benchmarks/mock_large_body.py
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import threading
import time
from pathlib import Path

import httpx

import bench

# the server module of the tree that ``bench`` itself comes from (the editable install's
# finder would otherwise hand an older tree the current ``bench.referee``)
_tree = Path(bench.__file__).parent
_name = "referee" if (_tree / "referee" / "server.py").exists() else "mockllm"
server = importlib.import_module(f"bench.{_name}.server")

MODEL = "scenario/single_tool"
SMALL = {"model": MODEL, "messages": [{"role": "user", "content": "Where is my order A123?"}]}
SENTENCE = "The order A123 can be returned within 30 days of delivery, said the agent. "
CHUNK = 64 * 1024


def large_body(size_bytes: int, tag: str) -> bytes:
    """A body of ``size_bytes``; ``tag`` opens the text, so no two rounds share a cached count."""
    overhead = len(json.dumps({"model": MODEL, "messages": [{"role": "user", "content": ""}]}))
    text = (tag + SENTENCE * (size_bytes // len(SENTENCE) + 1))[: size_bytes - overhead]
    return json.dumps({"model": MODEL, "messages": [{"role": "user", "content": text}]}).encode()


def post_small(client: httpx.Client, url: str) -> float:
    start = time.perf_counter()
    response = client.post(url, json=SMALL)
    elapsed = (time.perf_counter() - start) * 1000
    response.raise_for_status()
    return elapsed


def one_round(url: str, body: bytes, delay_s: float) -> tuple[float, float]:
    """(small ms, large ms): the small request sent ``delay_s`` after the large body is fully
    written (so that the server has read it, not still receiving it, when the small one lands)."""
    uploaded = threading.Event()
    result: dict[str, object] = {}

    def chunks():
        for i in range(0, len(body), CHUNK):
            yield body[i : i + CHUNK]
        uploaded.set()  # reached when httpx asks for more after writing the last chunk

    def send_large() -> None:
        with httpx.Client(timeout=60) as client:
            start = time.perf_counter()
            headers = {"content-type": "application/json", "content-length": str(len(body))}
            response = client.post(url, content=chunks(), headers=headers)
            result["ms"] = (time.perf_counter() - start) * 1000
            result["status"] = response.status_code

    with httpx.Client(timeout=60) as small_client:
        post_small(small_client, url)  # connect and warm up outside the timing
        thread = threading.Thread(target=send_large)
        thread.start()
        if not uploaded.wait(60):
            raise RuntimeError("the large body was not written within 60 s")
        time.sleep(delay_s)
        small_ms = post_small(small_client, url)
        thread.join()
    if result.get("status") != 200:
        raise RuntimeError(f"the large request got {result.get('status')}, not 200")
    return small_ms, result["ms"]  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size-mb", type=float, default=8.0, help="decimal MB (default 8)")
    parser.add_argument(
        "--delay-ms", type=float, default=30.0, help="after the upload, before the small request"
    )
    args = parser.parse_args()
    size = int(args.size_mb * 1_000_000)
    if size >= server.MAX_BODY_BYTES:
        raise SystemExit(f"--size-mb must stay under the mock's {server.MAX_BODY_BYTES:,} bytes")
    print(f"server module: {server.__file__}")
    print(
        f"large body: {len(large_body(size, '')):,} bytes; off-loop threshold: "
        f"{getattr(server, 'OFF_LOOP_BYTES', 'none (handled on the loop)')}"
    )
    with server.start_server_process() as proc:
        url = proc.base_url + "/chat/completions"
        with httpx.Client(timeout=60) as client:
            for _ in range(3):
                post_small(client, url)
            alone = [post_small(client, url) for _ in range(max(args.repeats, 5))]
        small, large = [], []
        for i in range(args.repeats):
            body = large_body(size, f"Round {i} at {time.time()}. ")
            small_ms, large_ms = one_round(url, body, args.delay_ms / 1000)
            small.append(small_ms)
            large.append(large_ms)
            print(
                f"{args.size_mb:g} MB repeat {i + 1}: small {small_ms:8.1f} ms  "
                f"large {large_ms:8.1f} ms"
            )
    print(
        f"small alone (baseline, {len(alone)} requests): median "
        f"{statistics.median(alone):.1f} ms, max {max(alone):.1f} ms"
    )
    print(
        f"small beside {args.size_mb:g} MB body: median {statistics.median(small):.1f} ms, "
        f"max {max(small):.1f} ms"
    )
    print(
        f"large {args.size_mb:g} MB request: median {statistics.median(large):.1f} ms, "
        f"max {max(large):.1f} ms"
    )


if __name__ == "__main__":
    main()
