"""The run's trace: spans (run -> step -> llm call / tool call), renderers and exporters.

Span names and attribute keys follow the OpenTelemetry GenAI conventions (``invoke_agent``,
``chat``, ``execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
``gen_ai.usage.input_tokens``...), so ``scheduler.otel`` is a thin adapter.

Recording is cheap on purpose: attributes hold references (the messages sent, the response,
the tool result text); previews, sizes and JSON are computed only when a trace is rendered
or exported. Exporting (``to_dict``, ``to_json``, ``scheduler.otel``) applies the trace's
``redact(key, value)`` hook to every attribute, then caps it at ``max_attribute_chars``
characters (``... [truncated: N more characters]``), so that a large tool output repeated in
every later chat span's input cannot blow a trace up; ``render()`` applies the hook too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from scheduler.errors import safe_str

AGENT, STEP, LLM, TOOL = "agent", "step", "llm", "tool"


class Span:
    """One timed operation. ``start``/``end`` are readings of the trace's clock."""

    __slots__ = ("attributes", "children", "end", "error", "events", "kind", "name", "start")

    def __init__(self, name: str, kind: str, start: float, attributes: dict[str, Any]):
        self.name = name
        self.kind = kind
        self.start = start
        self.end: float | None = None
        self.attributes = attributes
        self.events: list[tuple[str, float, dict[str, Any]]] = []
        self.error: BaseException | None = None
        self.children: list[Span] = []

    def __repr__(self) -> str:
        return f"Span({self.name!r}, duration={self.duration:.6f}, children={len(self.children)})"

    @property
    def duration(self) -> float:
        return 0.0 if self.end is None else self.end - self.start

    def walk(self) -> Iterator[Span]:
        """This span and all its descendants, depth first."""
        yield self
        for child in self.children:
            yield from child.walk()


Redact = Callable[[str, Any], Any]


class Trace:
    """The spans of one run. ``root`` is the ``invoke_agent`` span."""

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        *,
        parent: Trace | None = None,
        max_attribute_chars: int | None = None,
        redact: Redact | None = None,
    ):
        self.clock = clock
        self.max_attribute_chars, self.redact = max_attribute_chars, redact
        self.origin: float
        self.start_unix_ns: int
        if parent is not None:  # a sub-agent's trace shares its caller's time origin and export
            self.clock, self.origin, self.start_unix_ns = (
                parent.clock,
                parent.origin,
                parent.start_unix_ns,
            )
            self.max_attribute_chars, self.redact = parent.max_attribute_chars, parent.redact
        else:
            self.origin = clock()
            self.start_unix_ns = time.time_ns()
        self.root: Span | None = None

    def start(self, name: str, kind: str, parent: Span | None, attributes: dict[str, Any]) -> Span:
        span = Span(name, kind, self.clock(), attributes)
        if parent is not None:
            parent.children.append(span)
        elif self.root is None:
            self.root = span
        return span

    def end(self, span: Span, error: BaseException | None = None) -> None:
        span.end = self.clock()
        if error is not None:
            span.error = error

    def event(self, span: Span, name: str, attributes: dict[str, Any]) -> None:
        span.events.append((name, self.clock(), attributes))

    def spans(self, kind: str | None = None) -> list[Span]:
        """All spans (or those of one kind), depth first."""
        if self.root is None:
            return []
        return [s for s in self.root.walk() if kind is None or s.kind == kind]

    # -- export ------------------------------------------------------------------------

    def exported(self, key: str, value: Any) -> Any:
        """An attribute as it leaves the process: redacted, JSON-safe, capped."""
        if self.redact is not None:
            value = self.redact(key, value)
        return capped(jsonable(value), self.max_attribute_chars)

    def visible(self, span: Span) -> dict[str, Any]:
        """A span's attributes as rendered: through the redaction hook."""
        redact = self.redact
        if redact is None:
            return span.attributes
        return {k: redact(k, v) for k, v in span.attributes.items()}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict: the span tree with times relative to the run's start."""
        return {
            "start_unix_ns": self.start_unix_ns,
            "root": None if self.root is None else self._span_dict(self.root),
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False, sort_keys=True)

    def _span_dict(self, span: Span) -> dict[str, Any]:
        return {
            "name": span.name,
            "kind": span.kind,
            "start_s": round(span.start - self.origin, 9),
            "duration_s": round(span.duration, 9),
            "attributes": {k: self.exported(k, v) for k, v in span.attributes.items()},
            "events": [
                {
                    "name": name,
                    "at_s": round(at - self.origin, 9),
                    "attributes": {k: self.exported(k, v) for k, v in attrs.items()},
                }
                for name, at, attrs in span.events
            ],
            "error": None
            if span.error is None
            else {
                "type": type(span.error).__name__,
                "message": self.exported("error.message", safe_str(span.error)),
            },
            "children": [self._span_dict(child) for child in span.children],
        }

    # -- the article's tree --------------------------------------------------------------

    def render(self, *, durations: bool = True, input_messages: int = 3) -> str:
        """The trace as the article's debugging tree (see ``print_tree``)."""
        if self.root is None:
            return ""
        lines: list[str] = []
        _render_agent(self.root, lines, "", durations, input_messages, self.visible)
        return "\n".join(lines)

    def print_tree(
        self, file: TextIO | None = None, *, durations: bool = True, input_messages: int = 3
    ) -> None:
        """Print the tree::

        [Agent: support] (1.5s) completed, reason=stop
        [LLM Reasoning] (1.2s)
        ├── Input: [system: You are a support agent..., user: what is the return process?]
        └── Output: calling tool search_knowledge_base
        [Tool: search_knowledge_base] (0.3s)
        ├── Args: {query: return process}
        └── Result: {"article_id": "KB-17", ...} (2345 chars)
        """
        print(self.render(durations=durations, input_messages=input_messages), file=file)


def jsonable(value: Any) -> Any:
    """A JSON-safe version of an attribute value (messages, responses, exceptions...)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {safe_str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    to_message = getattr(value, "to_message", None)
    if callable(to_message):
        return jsonable(to_message())
    return safe_str(value)


def capped(value: Any, limit: int | None) -> Any:
    """A JSON-safe value with at most ``limit`` characters of text in all (strings cut with
    a marker that says how much is missing, lists cut once the budget is spent)."""
    if limit is None:
        return value
    room = limit

    def cut(v: Any) -> Any:
        nonlocal room
        if isinstance(v, str):
            if len(v) <= room:
                room -= len(v)
                return v
            kept, room = max(room, 0), 0
            return f"{v[:kept]}... [truncated: {len(v) - kept:,} more characters]"
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        if isinstance(v, list):
            out = []
            for i, x in enumerate(v):
                if room <= 0:
                    out.append(f"... [{len(v) - i} more items]")
                    break
                out.append(cut(x))
            return out
        return v

    return cut(value)


# -- rendering helpers ---------------------------------------------------------------------


def _duration(span: Span, durations: bool) -> str:
    if not durations:
        return ""
    d = round(span.duration, 9)
    return f" ({d:.1f}s)" if d >= 0.1 else f" ({d * 1000:.1f}ms)"


def preview(text: str, limit: int) -> str:
    """One line, at most ``limit`` characters (then ``...``). Of a long text only the start
    is read (a 5 MB tool output costs what its first few hundred characters cost)."""
    window = 2 * limit + 64
    while True:
        # the flattened start of a text is the start of the flattened text; it shows the
        # same once it is longer than the limit (or the window covers the text)
        flat = " ".join(text[:window].split())
        if len(flat) > limit or window >= len(text):
            break
        window *= 4  # mostly whitespace so far: read further
    return flat if len(flat) <= limit else flat[: limit - 3].rstrip() + "..."


def flow(value: Any, limit: int = 80) -> str:
    """``{query: return policy}``: arguments the way the article prints them."""

    def fmt(v: Any) -> str:
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k}: {fmt(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        if v is None:
            return "null"
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v)

    return preview(fmt(value), limit)


def _message_preview(message: dict[str, Any]) -> str:
    role = message.get("role", "?")
    calls = message.get("tool_calls")
    if calls:
        return f"{role}: -> " + ", ".join(c["function"]["name"] for c in calls)
    content = message.get("content")
    if not isinstance(content, str):
        content = json.dumps(content, ensure_ascii=False, default=str)
    return f"{role}: {preview(content, 40)}"


View = Callable[[Span], dict[str, Any]]


def _render_agent(
    span: Span, lines: list[str], pad: str, durations: bool, n_input: int, view: View
) -> None:
    a = view(span)
    status = a.get("agent.status", "running")
    reason = a.get("agent.termination_reason")
    tail = f" {status}, reason={reason}" if reason else f" {status}"
    lines.append(
        f"{pad}[Agent: {a.get('gen_ai.agent.name', '?')}]{_duration(span, durations)}{tail}"
    )
    for step in span.children:
        label = f" step {step.attributes.get('scheduler.step')}" if step.kind == STEP else ""
        for child in step.children if step.kind == STEP else (step,):
            if child.kind == LLM:
                _render_llm(child, lines, pad, durations, n_input, view, label)
            elif child.kind == TOOL:
                _render_tool(child, lines, pad, durations, n_input, view, label)
            elif child.kind == AGENT:
                _render_agent(child, lines, pad, durations, n_input, view)
        for name, _, attrs in step.events:
            lines.append(f"{pad}[{name}] {flow(attrs, 120)}")
    for name, _, attrs in span.events:
        lines.append(f"{pad}[{name}] {flow(attrs, 120)}")


def _event_lines(span: Span) -> list[str]:
    out = []
    for name, _, attrs in span.events:
        if name == "retry":
            out.append(f"Retry {attrs['attempt']}: {attrs['error']}; waited {attrs['delay_s']:g}s")
        elif name == "hook_error":
            out.append(
                f"Hook error: {attrs['hook.event']} {attrs['hook.name']}: {attrs['exception.message']}"
            )
        else:
            out.append(f"{name}: {flow(attrs)}")
    return out


def _tree(
    lines: list[str],
    pad: str,
    items: list[str | tuple[str, Span]],
    durations: bool,
    n_input: int,
    view: View,
) -> None:
    for i, item in enumerate(items):
        last = i == len(items) - 1
        branch, cont = ("└── ", "    ") if last else ("├── ", "│   ")
        if isinstance(item, str):
            lines.append(f"{pad}{branch}{item}")
        else:  # a nested agent run
            sub: list[str] = []
            _render_agent(item[1], sub, "", durations, n_input, view)
            lines.append(f"{pad}{branch}{sub[0]}")
            lines.extend(f"{pad}{cont}{line}" for line in sub[1:])


def _render_llm(
    span: Span, lines: list[str], pad: str, durations: bool, n_input: int, view: View, label: str
) -> None:
    a = view(span)
    lines.append(f"{pad}[LLM Reasoning]{_duration(span, durations)}{label}")
    messages = a.get("gen_ai.input.messages") or ()
    if isinstance(messages, (list, tuple)):
        shown = [_message_preview(m) for m in messages[-n_input:]] if n_input else []
        if len(messages) > len(shown):
            shown.insert(0, f"... {len(messages) - len(shown)} earlier")
        items: list[str | tuple[str, Span]] = [f"Input: [{', '.join(shown)}]"]
    else:  # replaced by the redaction hook
        items = [f"Input: {preview(safe_str(messages), 80)}"]
    items += _event_lines(span)
    response = a.get("gen_ai.output")
    if span.error is not None:
        items.append(f"Error: {type(span.error).__name__}: {safe_str(span.error)}")
    elif response is not None and not hasattr(response, "tool_calls"):  # redacted
        items.append(f"Output: {preview(safe_str(response), 80)}")
    elif response is not None:
        if response.tool_calls:
            names = [c.name for c in response.tool_calls]
            label = "tool" if len(names) == 1 else "tools"
            items.append(f"Output: calling {label} {', '.join(names)}")
        else:
            items.append(f"Output: {preview(response.content or '', 80)}")
    if "gen_ai.usage.input_tokens" in a:
        items.append(
            f"Tokens: {a['gen_ai.usage.input_tokens']} input, "
            f"{a.get('gen_ai.usage.output_tokens', 0)} output"
        )
    _tree(lines, pad, items, durations, n_input, view)


def _render_tool(
    span: Span, lines: list[str], pad: str, durations: bool, n_input: int, view: View, label: str
) -> None:
    a = view(span)
    lines.append(f"{pad}[Tool: {a.get('gen_ai.tool.name')}]{_duration(span, durations)}{label}")
    args = a.get("scheduler.tool.args")
    raw = a.get("gen_ai.tool.call.arguments")
    items: list[str | tuple[str, Span]] = [
        f"Args: {flow(args) if args is not None else preview(str(raw), 80)}"
    ]
    items += _event_lines(span)
    items += [("agent", child) for child in span.children if child.kind == AGENT]
    result = a.get("gen_ai.tool.call.result")
    if span.error is not None:
        items.append(f"Error: {type(span.error).__name__}: {safe_str(span.error)}")
    elif result is not None:
        text = safe_str(result)
        items.append(f"Result: {preview(text, 60)} ({len(text)} chars)")
    _tree(lines, pad, items, durations, n_input, view)
