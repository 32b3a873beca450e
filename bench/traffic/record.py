"""``schedbench record``: the proxy serving one recording session until interrupted."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from bench.traffic.build import Built
from bench.traffic.importer import TrafficError, summary
from bench.traffic.proxy import serve
from bench.traffic.redact import Redactor
from bench.traffic.session import RecordingSession


def record(
    upstream: str,
    out: Path,
    name: str,
    redact: Redactor,
    port: int,
    echo: Callable[[str], None] = print,
) -> Built | None:
    """Record through a proxy on ``127.0.0.1:port`` into ``out/name.{yaml,jsonl}`` until
    Ctrl-C; the scenarios written (None: nothing recorded). Raises TrafficError."""
    if not re.match(r"^https?://[^/\s]+", upstream):
        raise TrafficError(f"--upstream must be an http:// or https:// URL, not {upstream!r}")
    if not 0 <= port <= 65535:
        raise TrafficError(f"--port must be between 0 and 65535, not {port}")
    if out.exists() and not out.is_dir():
        raise TrafficError(f"--out {out}: exists and is not a directory")
    session = RecordingSession(out, name, redact, on_event=echo)
    existing = session.existing_files()
    if existing:
        raise TrafficError(
            f"{existing[0]} already exists; choose another --name or --out, or delete it first"
        )
    echo(f"recording into {out}/{name}.yaml (log: {session.log_path.name}); Ctrl-C to stop")
    try:
        serve(upstream, session, port)
    except OSError as exc:
        raise TrafficError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    built = session.write() if session.exchanges else None
    for line in summary(built, out):
        echo(line)
    return built
