"""Export a finished Trace to OpenTelemetry (``pip install 'schedbench[otel]'``).

The trace already uses the GenAI semantic-convention names, so this is a thin adapter:
each Span becomes an OTel span with the same name, parent, start and end times,
attributes (structured values as JSON text), events and error status.
``opentelemetry`` is imported only when ``export_trace`` is called.
"""

from __future__ import annotations

import json
from typing import Any

from scheduler.errors import safe_str
from scheduler.trace import LLM, Span, Trace, capped


def _value(trace: Trace, key: str, value: Any) -> Any:
    """An OTel attribute value: the trace's redaction and cap, structures as JSON text."""
    value = trace.exported(key, value)
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list) and all(isinstance(v, (str, bool, int, float)) for v in value):
        return value
    return capped(json.dumps(value, ensure_ascii=False, sort_keys=True), trace.max_attribute_chars)


def _attributes(trace: Trace, attributes: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _value(trace, key, value) for key, value in attributes.items() if value is not None
    }


def export_trace(trace: Trace, tracer: Any = None) -> None:
    """Emit ``trace`` through ``tracer`` (default: the global tracer provider's)."""
    from opentelemetry import trace as otel
    from opentelemetry.trace import SpanKind, Status, StatusCode

    tracer = tracer or otel.get_tracer("scheduler")

    def ns(at: float) -> int:
        return trace.start_unix_ns + int((at - trace.origin) * 1e9)

    def emit(span: Span, context: Any) -> None:
        kind = SpanKind.CLIENT if span.kind == LLM else SpanKind.INTERNAL  # the LLM is remote
        otel_span = tracer.start_span(
            span.name,
            context=context,
            kind=kind,
            attributes=_attributes(trace, span.attributes),
            start_time=ns(span.start),
        )
        for name, at, attrs in span.events:
            otel_span.add_event(name, _attributes(trace, attrs), timestamp=ns(at))
        if span.error is not None:
            otel_span.set_attribute("error.type", type(span.error).__name__)
            message = trace.exported("error.message", safe_str(span.error))
            otel_span.set_status(Status(StatusCode.ERROR, message))
        child_context = otel.set_span_in_context(otel_span)
        for child in span.children:
            emit(child, child_context)
        otel_span.end(end_time=ns(span.end if span.end is not None else span.start))

    if trace.root is not None:
        emit(trace.root, None)
