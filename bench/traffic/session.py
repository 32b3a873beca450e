"""One recording session: exchanges come in, a JSONL log and scenario files go out.

Every exchange is masked first (``Redactor``); the secrets it reveals are masked in the
earlier exchanges too (a token first seen in a tool result may already have been in the
user's message). Then ``DIR/NAME.jsonl`` (the log ``schedbench scenarios import`` reads
back) and the scenarios built from all exchanges so far are rewritten atomically, so the
folder is complete and valid at every moment of a recording: a crash loses nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from bench.traffic.build import Built, build_scenarios
from bench.traffic.exchange import Exchange
from bench.traffic.redact import Redactor
from bench.traffic.write import write_atomically, write_scenario


class RecordingSession:
    """Collects the exchanges of one recording into ``directory`` under ``name``."""

    def __init__(
        self,
        directory: Path | str,
        name: str,
        redactor: Redactor | None = None,
        on_event: Callable[[str], None] | None = None,
    ):
        self.directory = Path(directory)
        self.name = name
        self.redactor = redactor or Redactor()
        self.on_event = on_event or (lambda _line: None)
        self.exchanges: list[Exchange] = []
        self.built = Built()

    @property
    def log_path(self) -> Path:
        return self.directory / f"{self.name}.jsonl"

    def existing_files(self) -> list[Path]:
        """Files of an earlier recording under the same name (never overwritten)."""
        candidates = [self.log_path, self.directory / f"{self.name}.yaml"]
        return [path for path in candidates if path.exists()]

    def add(self, exchange: Exchange, secrets: Iterable[str] = ()) -> Exchange:
        """Mask, log and keep one exchange, then rewrite the scenarios; returns it masked."""
        for secret in secrets:
            self.redactor.add_secret(secret)
        exchange = self.redactor(exchange)
        self.exchanges = [self.redactor.mask_known(e) for e in self.exchanges] + [exchange]
        lines = "".join(json.dumps(e.to_json(), ensure_ascii=False) + "\n" for e in self.exchanges)
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self.log_path, lines)
        self.on_event(_describe(len(self.exchanges), exchange))
        self.write()
        return exchange

    def write(self) -> Built:
        """Rebuild every scenario from the exchanges so far and write them."""
        built = build_scenarios(self.exchanges, self.name)
        for scenario in built.scenarios:
            write_scenario(scenario, self.directory)
        for line in built.errors:
            if line not in self.built.errors:
                self.on_event(f"cannot build a scenario: {line}")
        self.built = built
        return built


def _describe(number: int, exchange: Exchange) -> str:
    timing = exchange.timing
    parts = [f"exchange {number}: HTTP {exchange.status}"]
    if timing is not None:
        parts.append("streamed" if timing.stream else "not streamed")
        if timing.ttft_ms is not None:
            parts.append(f"first token {timing.ttft_ms:.1f} ms")
        parts.append(f"total {timing.total_ms:.1f} ms")
    if exchange.error:
        parts.append(exchange.error)
    return ", ".join(parts)
