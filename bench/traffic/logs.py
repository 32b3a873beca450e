"""Reading chat-completion logs (JSONL) into exchanges: ``schedbench scenarios import``.

One JSON object per line, one chat-completion call each. Accepted shapes (the usual exports
of gateways and observability tools):

- the **request**: ``request`` or ``input`` — the ``POST /v1/chat/completions`` body; an
  object with a ``body`` (an OpenAI Batch API input line) is unwrapped;
- the **response**: ``response`` or ``output`` — a ``chat.completion`` object, or a list
  of ``chat.completion.chunk`` objects (a stream as logged); an object with ``status_code``
  and ``body`` (a Batch API output line) is unwrapped;
- the **status** (optional, default 200): ``status`` or ``status_code``;
- the **timing** (optional): our own ``timing`` block (``stream``, ``ttft_ms``, ``total_ms``,
  ``gaps_ms``: what ``schedbench record`` writes), else durations ``latency_ms`` /
  ``duration_ms`` (total) and ``ttft_ms`` / ``time_to_first_token_ms``, else timestamps
  ``start_time`` / ``end_time`` / ``completion_start_time`` (also ``startTime``, ``endTime``,
  ``completionStartTime``), as epoch seconds or ISO 8601 text.

A line ``{"tool": {...}}`` is a run of one of the agent's tools (``exchange.ToolRun``: what
``schedbench record`` writes when the agent reports its tools).

Headers in a line are never read (their credentials are masked wherever they reappear).
A bad line is an error naming the file, the line and the reason. What a line holds that the
scenario will not (a key that is not read, a ``ttft_ms`` of a call that was not streamed,
the request's sampling parameters, a second choice) is reported, one note per kind with
the lines it was on: nothing is dropped silently.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.errors import LogError
from bench.traffic.exchange import MAX_EPOCH_S, Exchange, ToolRun
from bench.traffic.redact import Redactor, header_secrets
from bench.traffic.shape import kind, problem
from bench.traffic.stream import StreamAssembler
from scenarios.schema import TurnTiming

# the keys a line is read by: anything else is reported as not read
_KEYS = {
    "request": ("request", "input"),
    "response": ("response", "output"),
    "status": ("status", "status_code"),
    "total": ("latency_ms", "duration_ms"),
    "ttft": ("ttft_ms", "time_to_first_token_ms"),
    "start": ("start_time", "startTime"),
    "end": ("end_time", "endTime"),
    "first": ("completion_start_time", "completionStartTime"),
}
_READ = frozenset(k for keys in _KEYS.values() for k in keys) | {
    "timing",
    "started_at",
    "error",
    "warnings",
    "headers",
    "tool",
}
# what a scenario holds of a request (and what decides its timing); other fields each
# engine sends on its own
_REQUEST_READ = frozenset({"model", "messages", "tools", "stream", "stream_options"})
_MESSAGE_READ = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})


@dataclass
class Traffic:
    """What a log holds: the exchanges, the tool runs, and what was not read (notes)."""

    exchanges: list[Exchange] = field(default_factory=list)
    tool_runs: list[ToolRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Drops:
    """What lines held that is not read: one note per kind, with its line numbers."""

    def __init__(self) -> None:
        self.lines: dict[str, list[int]] = {}
        self.number = 0

    def add(self, what: str) -> None:
        self.lines.setdefault(what, []).append(self.number)

    def notes(self, path: Path) -> list[str]:
        return [f"{path}:{_ranges(numbers)}: {what}" for what, numbers in self.lines.items()]


def _ranges(numbers: list[int]) -> str:
    """1,2,3,5 -> '1-3,5'."""
    spans: list[list[int]] = []
    for n in sorted(set(numbers)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ",".join(f"{a}-{b}" if b > a else f"{a}" for a, b in spans)


def _pick(line: Mapping[str, Any], concept: str, drops: _Drops) -> tuple[str | None, Any]:
    """The first key of ``concept`` the line sets, and its value; the others are noted."""
    present = [key for key in _KEYS[concept] if line.get(key) is not None]
    for key in present[1:]:
        drops.add(f"{key} not read: {present[0]} is")
    return (present[0], line[present[0]]) if present else (None, None)


def _timestamp(key: str | None, value: Any) -> float | None:
    if value is None or key is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, int) and abs(value) >= 10**20:
            raise ValueError(f"{key}: a number of {len(str(abs(value)))} digits is no time")
        if not math.isfinite(value) or not 0 <= value <= MAX_EPOCH_S:
            raise ValueError(
                f"{key}: {value!r} is no time in epoch seconds (milliseconds? divide by 1000)"
            )
        return float(value)
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"{key}: not an ISO 8601 time or epoch seconds: {value[:60]!r}"
            ) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.timestamp()
    raise ValueError(f"{key}: expected an ISO 8601 time or epoch seconds, not {kind(value)}")


def _duration(key: str | None, value: Any) -> float | None:
    if value is None or key is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key}: expected milliseconds (a number), not {kind(value)}")
    if isinstance(value, int) and abs(value) >= 10**20:
        raise ValueError(f"{key}: a number of {len(str(abs(value)))} digits is no duration")
    if not math.isfinite(value):
        raise ValueError(f"{key}: {value!r} is no duration")
    return float(value)


def _response(line: Mapping[str, Any], drops: _Drops) -> tuple[Any, int | None, bool]:
    """(a chat.completion, the status it carried, whether it was logged as chunks)."""
    key, response = _pick(line, "response", drops)
    status = None
    if isinstance(response, dict) and "body" in response and "choices" not in response:
        status = response.get("status_code")
        for other in sorted(set(response) - {"body", "status_code"}):
            drops.add(f"{key}.{other} not read")
        response = response["body"]
    if isinstance(response, list):
        assembler = StreamAssembler()
        for index, chunk in enumerate(response):
            if not isinstance(chunk, dict):
                raise ValueError(
                    f"{key}[{index}]: expected a chat.completion.chunk object, not {kind(chunk)}"
                )
            assembler.add(chunk)
        if assembler.overflow:
            raise ValueError(f"{key}: an answer longer than a scenario file may hold")
        return assembler.completion(), status, True
    if response is not None and not isinstance(response, dict):
        raise ValueError(
            f"{key}: expected a chat.completion object or a list of chunks, not {kind(response)}"
        )
    return response, status, False


def _timing(line: Mapping[str, Any], stream: bool, drops: _Drops) -> TurnTiming | None:
    block = line.get("timing")
    total_key, total = _pick(line, "total", drops)
    ttft_key, ttft = _pick(line, "ttft", drops)
    start = _timestamp(*_pick(line, "start", drops))
    end = _timestamp(*_pick(line, "end", drops))
    first = _timestamp(*_pick(line, "first", drops))
    if block is not None:
        if not isinstance(block, dict):
            raise ValueError(f"timing: expected an object, not {kind(block)}")
        for key in ("latency_ms", "duration_ms", "ttft_ms", "time_to_first_token_ms"):
            if line.get(key) is not None:
                drops.add(f"{key} not read: the timing block is")
        return TurnTiming.model_validate(block)
    total = _duration(total_key, total)
    ttft = _duration(ttft_key, ttft)
    if total is None and start is not None and end is not None:
        total = (end - start) * 1000
    if ttft is None and start is not None and first is not None:
        ttft = (first - start) * 1000
    if ttft is not None and not stream:
        drops.add(
            f"{ttft_key or 'completion_start_time'} left out: the call was not streamed "
            "(a first token is a stream's; the answer arrives whole)"
        )
    if total is None:
        if ttft is not None and stream:
            drops.add("a first-token time left out: no total duration on the line")
        return None
    return TurnTiming(
        stream=stream,
        ttft_ms=round(ttft, 3) if stream and ttft is not None else None,
        total_ms=round(total, 3),
    )


def _report_unread(request: dict[str, Any], response: Any, drops: _Drops) -> None:
    for key in sorted(set(request) - _REQUEST_READ):
        drops.add(f"request.{key} not replayed (each engine sends its own)")
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or not choices:
        return
    if len(choices) > 1:
        drops.add("response.choices[1:] left out: only the first choice is an agent's answer")
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if isinstance(message, dict):
        for key in sorted(set(message) - _MESSAGE_READ):
            if message[key] not in (None, "", [], {}):
                drops.add(f"response.choices[0].message.{key} not replayed")


def parse_line(line: Mapping[str, Any], drops: _Drops | None = None) -> tuple[Exchange, list[str]]:
    """One log line as an exchange, and the credentials its headers carried."""
    drops = drops or _Drops()
    for key in sorted(set(line) - _READ):
        drops.add(f"{key} not read")
    request_key, request = _pick(line, "request", drops)
    if isinstance(request, dict) and "body" in request and "messages" not in request:
        for other in sorted(set(request) - {"body"}):
            drops.add(f"{request_key}.{other} not read")
        request = request["body"]
    if not isinstance(request, dict):
        raise ValueError("no request: expected a 'request' (or 'input') object")
    response, wrapped_status, chunked = _response(line, drops)
    found = problem(request, response)
    if found is not None:
        raise ValueError(found)
    _, status = _pick(line, "status", drops)
    status = status if status is not None else wrapped_status
    if status is None:
        status = 500 if line.get("error") and response is None else 200
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise ValueError(f"status: expected an HTTP status code, not {status!r}"[:120])
    stream = bool(request.get("stream")) or chunked
    if line.get("started_at") is not None:
        started_at = _timestamp("started_at", line["started_at"])
    else:
        started_at = _timestamp(*_pick(line, "start", _Drops()))
    error = line.get("error")
    warnings = line.get("warnings")
    exchange = Exchange(
        request=request,
        response=response,
        status=status,
        timing=_timing(line, stream, drops),
        started_at=started_at,
        error=error if isinstance(error, str) else None,
        warnings=tuple(w for w in warnings if isinstance(w, str))
        if isinstance(warnings, list)
        else (),
    )
    _report_unread(request, response, drops)
    headers = line.get("headers")
    secrets = header_secrets(headers) if isinstance(headers, dict) else []
    return exchange, secrets


def _reason(exc: ValidationError, prefix: str) -> str:
    error = exc.errors()[0]
    where = "".join(f".{p}" for p in error["loc"])
    return f"{prefix}{where}: {error['msg'].removeprefix('Value error, ')}"


def read_traffic(path: Path | str, redactor: Redactor | None = None) -> Traffic:
    """Every exchange and tool run of a JSONL log, masked by ``redactor``, and a note per
    kind of field that is not read; raises LogError."""
    path = Path(path)
    redactor = redactor or Redactor()
    try:
        if path.exists() and not path.is_file():
            raise LogError(f"{path}: not a regular file")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise LogError(f"{path}: not UTF-8 text") from None
    parsed: list[tuple[Exchange, list[str]]] = []
    runs: list[ToolRun] = []
    drops = _Drops()
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        drops.number = number
        try:
            line = json.loads(raw)
        except RecursionError:
            raise LogError(f"{where}: not JSON (nested too deeply)") from None
        except ValueError as exc:
            raise LogError(f"{where}: not JSON ({getattr(exc, 'msg', exc)})") from None
        if not isinstance(line, dict):
            raise LogError(f"{where}: expected one JSON object per line")
        try:
            if "tool" in line:
                if set(line) != {"tool"}:
                    raise ValueError("a tool run's line holds only its 'tool' object")
                runs.append(ToolRun.model_validate(line["tool"]))
            else:
                parsed.append(parse_line(line, drops))
        except ValidationError as exc:
            raise LogError(
                f"{where}: {_reason(exc, 'tool' if 'tool' in line else 'timing')}"
            ) from None
        except ValueError as exc:
            raise LogError(f"{where}: {exc}") from None
    if not parsed:
        raise LogError(f"{path}: no exchanges (an empty log)")
    for exchange, secrets in parsed:
        for secret in secrets:
            redactor.add_secret(secret)
        redactor(exchange)  # a first pass learns every secret, so that the second
    return Traffic(
        exchanges=[redactor(exchange) for exchange, _ in parsed],  # masks each in every line
        tool_runs=[redactor.mask_run(run) for run in runs],
        notes=drops.notes(path),
    )


def read_log(path: Path | str, redactor: Redactor | None = None) -> list[Exchange]:
    """Every exchange of a JSONL log, masked by ``redactor``; raises LogError."""
    return read_traffic(path, redactor).exchanges
