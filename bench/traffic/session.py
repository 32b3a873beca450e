"""One recording session: exchanges and tool runs come in, a JSONL log and scenario files go out.

Every exchange is masked first (``Redactor``); the secrets it reveals are masked in the
earlier exchanges too (a token first seen in a tool result may already have been in the
user's message). Then ``DIR/NAME.jsonl`` (the log ``schedbench scenarios import`` reads
back, exchanges and tool runs in the order they started) and the scenarios built from all
of it so far are rewritten atomically, so the folder is complete and valid at every moment
of a recording: a crash loses nothing.

One exchange that cannot become part of a scenario (a text too long for a scenario file)
costs only its own conversation, with a line saying why (its file, written while it was
shorter, is removed); what can be kept of one is (a token count out of bounds is left out, a
lone surrogate becomes U+FFFD), with a note. The log keeps every exchange as it came (JSON
escapes where UTF-8 cannot hold a character).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from bench.traffic.build import Built, build_scenarios
from bench.traffic.exchange import Exchange, ToolRun
from bench.traffic.redact import Redactor
from bench.traffic.write import write_atomically


def log_line(item: Exchange | ToolRun) -> str:
    """One line of the JSONL log; characters UTF-8 cannot hold (a lone surrogate) escaped."""
    line = json.dumps(item.to_json(), ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(item.to_json(), ensure_ascii=True)
    return line + "\n"


def _started(item: Exchange | ToolRun) -> float:
    return item.started_at if item.started_at is not None else float("inf")


class RecordingSession:
    """Collects the exchanges and tool runs of one recording into ``directory`` under ``name``."""

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
        self.tool_runs: list[ToolRun] = []
        self.built = Built()
        self._written: set[str] = set()  # the scenario files this session wrote

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
        self.tool_runs = [self.redactor.mask_run(run) for run in self.tool_runs]
        self._write_log()
        self.on_event(_describe(len(self.exchanges), exchange))
        self.write()
        return exchange

    def add_tool_run(self, run: ToolRun) -> ToolRun:
        """Mask, log and keep one tool run the agent reported, then rewrite the scenarios."""
        run = self.redactor.mask_run(run)
        self.tool_runs.append(run)
        self._write_log()
        self.on_event(_describe_run(run))
        self.write()
        return run

    def _write_log(self) -> None:
        items: list[Any] = sorted([*self.exchanges, *self.tool_runs], key=_started)
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self.log_path, "".join(log_line(item) for item in items))

    def write(self) -> Built:
        """Rebuild every scenario from what was recorded so far and write them."""
        built = build_scenarios(self.exchanges, self.name, self.tool_runs)
        self.directory.mkdir(parents=True, exist_ok=True)
        for scenario in built.scenarios:
            write_atomically(self.directory / f"{scenario.name}.yaml", built.texts[scenario.name])
        names = {scenario.name for scenario in built.scenarios}
        for stale in sorted(self._written - names):
            # a conversation that no longer builds: its earlier, shorter scenario would lie
            (self.directory / f"{stale}.yaml").unlink(missing_ok=True)
        self._written = names
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
    parts.extend(exchange.warnings)
    return ", ".join(parts)


def _describe_run(run: ToolRun) -> str:
    took = f" in {run.duration_ms:.1f} ms" if run.duration_ms is not None else ""
    what = {
        "returned": "returned",
        "raised": f"raised {run.error or 'an exception'}",
        "denied": "was refused",
    }
    return f"tool {run.name}: {what[run.outcome]}{took}"
