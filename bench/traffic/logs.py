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

Headers in a line are never read (their credentials are masked wherever they reappear).
A bad line is an error naming the file, the line and the reason.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bench.traffic.exchange import Exchange
from bench.traffic.redact import Redactor, header_secrets
from bench.traffic.stream import StreamAssembler
from scenarios.schema import TurnTiming


class LogError(ValueError):
    """A log that cannot be read; ``str()`` is ``FILE:LINE: reason``."""


def _first(line: Mapping[str, Any], *keys: str) -> Any:
    return next((line[key] for key in keys if line.get(key) is not None), None)


def _timestamp(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"not an ISO 8601 time or epoch seconds: {value!r}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        return moment.timestamp()
    if value is None:
        return None
    raise ValueError(f"not an ISO 8601 time or epoch seconds: {value!r}")


def _response(line: Mapping[str, Any]) -> tuple[dict[str, Any] | None, int | None, bool]:
    """(a chat.completion, the status it carried, whether it was logged as chunks)."""
    response = _first(line, "response", "output")
    status = None
    if isinstance(response, dict) and "body" in response and "choices" not in response:
        status = response.get("status_code")
        response = response["body"]
    if isinstance(response, list):
        assembler = StreamAssembler()
        for chunk in response:
            if not isinstance(chunk, dict):
                raise ValueError("response: a list that is not of chat.completion.chunk objects")
            assembler.add(chunk)
        return assembler.completion(), status, True
    if response is not None and not isinstance(response, dict):
        raise ValueError("response: expected a chat.completion object or a list of chunks")
    return response, status, False


def _timing(line: Mapping[str, Any], stream: bool) -> TurnTiming | None:
    block = line.get("timing")
    if isinstance(block, dict):
        return TurnTiming.model_validate(block)
    total = _first(line, "latency_ms", "duration_ms")
    ttft = _first(line, "ttft_ms", "time_to_first_token_ms")
    start = _timestamp(_first(line, "start_time", "startTime"))
    end = _timestamp(_first(line, "end_time", "endTime"))
    first = _timestamp(_first(line, "completion_start_time", "completionStartTime"))
    if total is None and start is not None and end is not None:
        total = (end - start) * 1000
    if ttft is None and start is not None and first is not None:
        ttft = (first - start) * 1000
    if total is None:
        return None
    return TurnTiming(
        stream=stream,
        ttft_ms=round(ttft, 3) if stream and ttft is not None else None,
        total_ms=round(total, 3),
    )


def parse_line(line: Mapping[str, Any]) -> tuple[Exchange, list[str]]:
    """One log line as an exchange, and the credentials its headers carried."""
    request = _first(line, "request", "input")
    if isinstance(request, dict) and "body" in request and "messages" not in request:
        request = request["body"]
    if not isinstance(request, dict):
        raise ValueError("no request: expected a 'request' (or 'input') object")
    response, wrapped_status, chunked = _response(line)
    status = _first(line, "status", "status_code")
    status = status if status is not None else wrapped_status
    if status is None:
        status = 500 if line.get("error") and response is None else 200
    if not isinstance(status, int) or isinstance(status, bool):
        raise ValueError(f"status: expected an HTTP status code, not {status!r}")
    stream = bool(request.get("stream")) or chunked
    exchange = Exchange(
        request=request,
        response=response,
        status=status,
        timing=_timing(line, stream),
        started_at=_timestamp(_first(line, "started_at", "start_time", "startTime")),
        error=line.get("error") if isinstance(line.get("error"), str) else None,
    )
    headers = line.get("headers")
    secrets = header_secrets(headers) if isinstance(headers, dict) else []
    return exchange, secrets


def read_log(path: Path | str, redactor: Redactor | None = None) -> list[Exchange]:
    """Every exchange of a JSONL log, masked by ``redactor``; raises LogError."""
    path = Path(path)
    redactor = redactor or Redactor()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LogError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise LogError(f"{path}: not UTF-8 text") from None
    parsed: list[tuple[Exchange, list[str]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            line = json.loads(raw)
        except ValueError as exc:
            raise LogError(f"{where}: not JSON ({exc.msg})") from None
        if not isinstance(line, dict):
            raise LogError(f"{where}: expected one JSON object per line")
        try:
            parsed.append(parse_line(line))
        except ValidationError as exc:
            error = exc.errors()[0]
            field = "".join(f".{p}" for p in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
            raise LogError(f"{where}: timing{field}: {message}") from None
        except ValueError as exc:
            raise LogError(f"{where}: {exc}") from None
    if not parsed:
        raise LogError(f"{path}: no exchanges (an empty log)")
    for exchange, secrets in parsed:
        for secret in secrets:
            redactor.add_secret(secret)
        redactor(exchange)  # a first pass learns every secret, so that the second
    return [redactor(exchange) for exchange, _ in parsed]  # masks each in every line
