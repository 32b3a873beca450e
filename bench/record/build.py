"""Recorded exchanges → scenarios: the one builder behind ``record`` and ``scenarios import``.

The exchanges of one agent run form a *conversation*: the first request holds the system
prompt, any earlier history and the user's input; request *k* holds *k* assistant messages
after the last user message (the mock's own turn rule), and repeats the messages of request
*k - 1* (compared by role, text and tool-call ids, not by serialisation) followed by the
answer it got. Exchanges are grouped by that rule, so one recording
may hold several runs (each becomes its own scenario: ``NAME``, ``NAME_2``, ...).

Per conversation:

- **tools**: name, description and JSON Schema exactly as the agent sent them;
- **script**: one turn per answer — its content and tool calls, each call's arguments text
  kept byte for byte (``recorded_arguments`` where re-serialising ``args`` would differ;
  ``raw_arguments`` when it is not valid JSON or breaks the tool's schema), the tool-call ids,
  and its measured ``timing`` (with the token counts the upstream reported);
- **tool results**: the content of the tool messages in the *next* request, per call, so
  the scenario's tools return what the real tools returned (``returns`` when a tool always
  returned the same text — as a value when it is JSON the tools re-serialise to the same
  bytes — else ``results`` keyed by arguments);
- **limits** wide enough that no engine is cut where the recorded agent was not (steps, LLM
  timeout, run deadline, repeated calls, a token budget the requests cannot reach);
- **expect**: what the recorded run did (LLM calls, tool calls in order, the final answer).

Exchanges that are no usable answer (an HTTP error, a cut stream, a request without tools)
are left out with a note; a conversation the scenario format cannot hold raises
``BuildError`` naming the exchange and the reason.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from bench.record.exchange import Exchange
from scenarios.schema import (
    Expect,
    ExpectOverride,
    Limits,
    Message,
    RecordedResult,
    Scenario,
    ScriptToolCall,
    ToolBehavior,
    ToolDef,
    Turn,
)

TAG = "recorded"
FINAL_EXCERPT_CHARS = 80
_SYSTEM_ROLES = ("system", "developer")
_DEFAULT_LIMITS = Limits()


class BuildError(ValueError):
    """A recording that cannot become a scenario; the message names the exchange."""


@dataclass
class Built:
    """The scenarios a recording gives, the exchanges left out (one note each), and the
    conversations that could not become a scenario (one error line each)."""

    scenarios: list[Scenario] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class _Step:
    number: int  # 1-based position of the exchange in the recording
    exchange: Exchange
    messages: list[dict[str, Any]]
    turn: int
    message: dict[str, Any]


def text_of(content: Any) -> str | None:
    """A message's text: a string, or the joined text parts of a content list."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "")
            for part in content
            if isinstance(part, dict) and part.get("type", "text") == "text"
        )
    return str(content)


def _last_user(messages: list[dict[str, Any]]) -> int:
    return max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)


def _turn(messages: list[dict[str, Any]]) -> int:
    """Assistant messages after the last user message: the mock's turn rule."""
    return sum(1 for m in messages[_last_user(messages) + 1 :] if m.get("role") == "assistant")


def _gist(message: dict[str, Any]) -> tuple[Any, ...]:
    """What a message says, whatever the client's serialisation (content as text or parts,
    null fields left out or not, extra keys)."""
    calls = tuple(
        (c.get("id"), (c.get("function") or {}).get("name"))
        for c in message.get("tool_calls") or ()
    )
    return (
        message.get("role"),
        text_of(message.get("content")) or "",
        calls,
        message.get("tool_call_id"),
    )


def _continues(sent: dict[str, Any], answer: dict[str, Any]) -> bool:
    """Whether ``sent`` (an assistant message in a request) is ``answer`` sent back."""
    if sent.get("role") != "assistant":
        return False
    ours = [
        (c.get("id"), (c.get("function") or {}).get("name")) for c in answer.get("tool_calls") or ()
    ]
    theirs = [
        (c.get("id"), (c.get("function") or {}).get("name")) for c in sent.get("tool_calls") or ()
    ]
    if ours or theirs:
        if all(i is not None for i, _ in ours) and all(i is not None for i, _ in theirs):
            return ours == theirs
        return [n for _, n in ours] == [n for _, n in theirs]
    return (text_of(sent.get("content")) or "") == (text_of(answer.get("content")) or "")


def _usable(number: int, exchange: Exchange, notes: list[str]) -> _Step | None:
    where = f"exchange {number}"
    if exchange.status != 200:
        notes.append(f"{where}: left out: HTTP {exchange.status}")
        return None
    if exchange.error is not None:
        notes.append(f"{where}: left out: {exchange.error}")
        return None
    request = exchange.request
    messages = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        notes.append(f"{where}: left out: the request has no list of messages")
        return None
    if not request.get("tools"):
        notes.append(
            f"{where}: left out: a request without tools (only tool-calling traffic is recorded)"
        )
        return None
    message = exchange.message
    if message is None:
        notes.append(f"{where}: left out: the response holds no assistant message")
        return None
    if _last_user(messages) < 0:
        notes.append(f"{where}: left out: the request has no user message")
        return None
    return _Step(number, exchange, messages, _turn(messages), message)


def _conversations(exchanges: Sequence[Exchange], notes: list[str]) -> list[list[_Step]]:
    order = sorted(
        range(len(exchanges)),
        key=lambda i: (exchanges[i].started_at is None, exchanges[i].started_at or 0.0, i),
    )
    conversations: list[list[_Step]] = []
    for i in order:
        step = _usable(i + 1, exchanges[i], notes)
        if step is None:
            continue
        if step.turn == 0:
            conversations.append([step])
            continue
        for conversation in conversations:
            last = conversation[-1]
            n = len(last.messages)
            if (
                last.turn == step.turn - 1
                and len(step.messages) > n
                and [_gist(m) for m in step.messages[:n]] == [_gist(m) for m in last.messages]
                and _continues(step.messages[n], last.message)
            ):
                conversation.append(step)
                break
        else:
            notes.append(
                f"exchange {step.number}: left out: its turn {step.turn} continues no recorded "
                "conversation (a retry, or a run whose start was not recorded)"
            )
    return conversations


def _tools(steps: list[_Step]) -> list[ToolDef]:
    tools: dict[str, ToolDef] = {}
    for step in steps:
        for index, entry in enumerate(step.exchange.request.get("tools") or ()):
            function = entry.get("function") if isinstance(entry, dict) else None
            where = f"exchange {step.number}: tools[{index}]"
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise BuildError(f"{where}: not a function tool with a name")
            name = function["name"]
            if name in tools:
                continue
            parameters = function.get("parameters") or {"type": "object", "properties": {}}
            try:
                tools[name] = ToolDef(
                    name=name,
                    # the format needs a description; a tool sent without one gets its name
                    description=function.get("description") or name,
                    parameters=parameters,
                )
            except ValidationError as exc:
                raise BuildError(f"{where} ({name}): {_reason(exc)}") from None
    return list(tools.values())


def _reason(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error["loc"])
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _call(raw: dict[str, Any], tools: dict[str, ToolDef], where: str) -> ScriptToolCall:
    function = raw.get("function") or {}
    name = function.get("name")
    arguments = function.get("arguments")
    if not isinstance(name, str) or not name:
        raise BuildError(f"{where}: a tool call without a function name")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    call_id = raw.get("id") if isinstance(raw.get("id"), str) else None
    unknown = name not in tools
    try:
        args = json.loads(arguments)
    except ValueError:
        args = None
    valid = isinstance(args, dict) and (unknown or tools[name].valid_args(args))
    if not valid:
        return ScriptToolCall(name=name, raw_arguments=arguments, unknown=unknown, id=call_id)
    # the mock re-serialises args like this: keep the model's own text only where it differs
    same = json.dumps(args, ensure_ascii=False) == arguments
    return ScriptToolCall(
        name=name,
        args=args,
        recorded_arguments=None if same else arguments,
        unknown=unknown,
        id=call_id,
    )


def _tool_results(step: _Step, following: _Step) -> tuple[dict[str, str], list[str]]:
    """The tool messages answering ``step``'s calls: by call id, and in order."""
    by_id: dict[str, str] = {}
    in_order: list[str] = []
    for message in following.messages[len(step.messages) + 1 :]:
        if message.get("role") != "tool":
            break
        content = text_of(message.get("content")) or ""
        in_order.append(content)
        if isinstance(message.get("tool_call_id"), str):
            by_id[message["tool_call_id"]] = content
    return by_id, in_order


def _prefix(steps: list[_Step]) -> tuple[str, list[Message], str]:
    first = steps[0]
    messages = first.messages
    last_user = _last_user(messages)
    system: list[str] = []
    history: list[Message] = []
    for index, message in enumerate(messages[:last_user]):
        role = message.get("role")
        where = f"exchange {first.number}: messages[{index}]"
        if role in _SYSTEM_ROLES:
            if history:
                raise BuildError(f"{where}: a system message after the conversation started")
            system.append(text_of(message.get("content")) or "")
        elif role in ("user", "assistant") and not message.get("tool_calls"):
            history.append(Message(role=role, content=text_of(message.get("content")) or ""))
        else:
            raise BuildError(
                f"{where}: a {role} message before the user's input; a scenario's history "
                "holds only user and assistant text"
            )
    if len(system) > 1:
        raise BuildError(f"exchange {first.number}: more than one system message")
    user = text_of(messages[last_user].get("content")) or ""
    if not user.strip():
        raise BuildError(f"exchange {first.number}: the user's message is empty")
    return (system[0] if system else ""), history, user


def _scenario(name: str, steps: list[_Step]) -> Scenario:
    system_prompt, history, user = _prefix(steps)
    tool_defs = _tools(steps)
    tools = {tool.name: tool for tool in tool_defs}
    results: dict[str, list[RecordedResult]] = {tool_name: [] for tool_name in tools}
    script: list[Turn] = []
    unanswered = False
    for position, step in enumerate(steps):
        where = f"exchange {step.number}"
        calls = [
            _call(raw, tools, f"{where}: tool_calls[{i}]")
            for i, raw in enumerate(step.message.get("tool_calls") or ())
        ]
        following = steps[position + 1] if position + 1 < len(steps) else None
        if calls and following is not None:
            by_id, in_order = _tool_results(step, following)
            for index, call in enumerate(calls):
                content = by_id.get(call.id) if call.id else None
                if content is None and index < len(in_order) and not by_id:
                    content = in_order[index]
                if content is None:
                    unanswered = True
                elif not call.unknown and call.raw_arguments is None:
                    results[call.name].append(RecordedResult(args=call.args, returns=content))
        elif calls:
            unanswered = True
        usage = step.exchange.usage
        timing = step.exchange.timing
        if timing is not None:
            timing = timing.model_copy(
                update={
                    key: usage[key]
                    for key in ("prompt_tokens", "completion_tokens")
                    if isinstance(usage.get(key), int) and usage[key] >= 0
                }
            )
        content = text_of(step.message.get("content"))
        if content is None and not calls:
            raise BuildError(f"{where}: the answer has neither content nor tool calls")
        script.append(Turn(content=content, tool_calls=calls, timing=timing))
    tool_defs = [
        tool.model_copy(update={"behavior": _behavior(results[tool.name])}) for tool in tool_defs
    ]
    model = steps[0].exchange.request.get("model")
    return Scenario(
        name=name,
        description=_description(model, script),
        tags=[TAG],
        system_prompt=system_prompt,
        history=history,
        user=user,
        tools=tool_defs,
        script=script,
        limits=_limits(steps, script),
        expect=_expect(script, unanswered),
    )


def _behavior(results: list[RecordedResult]) -> ToolBehavior:
    if not results:
        return ToolBehavior()
    if len({r.returns for r in results}) == 1:
        return ToolBehavior(returns=_as_value(results[0].returns))
    return ToolBehavior(results=results)


def _as_value(text: str) -> Any:
    """JSON object or array text as the value itself, where the tools' own serialisation
    (``json.dumps``, ``ensure_ascii=False``) gives back the same bytes: easier to read, and
    the debug scorers see its fields. Any other text stays as it is."""
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict | list) and json.dumps(value, ensure_ascii=False) == text:
        return value
    return text


def _description(model: Any, script: list[Turn]) -> str:
    calls = sum(len(turn.tool_calls) for turn in script)
    source = f" of {model}" if isinstance(model, str) and model else ""
    return (
        f"Recorded traffic{source}: {len(script)} LLM calls, {calls} tool calls. "
        "Play its measured timings with --latency recorded."
    )


def _limits(steps: list[_Step], script: list[Turn]) -> Limits:
    totals_s = [turn.timing.total_ms / 1000 for turn in script if turn.timing is not None]
    repeated = Counter(
        (call.name, json.dumps(call.args, sort_keys=True))
        for turn in script
        for call in turn.tool_calls
    )
    # a request's tokens never exceed its bytes: a budget above the largest body never cuts
    largest = max(len(json.dumps(s.exchange.request, ensure_ascii=False).encode()) for s in steps)
    run_s = 3 * sum(totals_s)
    return Limits(
        max_steps=max(_DEFAULT_LIMITS.max_steps, len(script) + 1),
        llm_timeout_s=max(_DEFAULT_LIMITS.llm_timeout_s, math.ceil(3 * max(totals_s, default=0))),
        max_same_tool_calls=max(
            _DEFAULT_LIMITS.max_same_tool_calls, max(repeated.values(), default=0)
        ),
        token_budget=max(_DEFAULT_LIMITS.token_budget or 0, math.ceil(largest / 1000) * 1000),
        run_timeout_s=math.ceil(run_s) + 30 if run_s > 10 else None,
    )


def _expect(script: list[Turn], unanswered: bool) -> Expect:
    last = script[-1]
    if last.tool_calls:
        # the recording stops on tool calls: the agent was cut (a limit) or the run not over
        return Expect(status="aborted")
    regular = not unanswered and all(
        not call.unknown and call.raw_arguments is None
        for turn in script
        for call in turn.tool_calls
    )
    if not regular or not (last.content or "").strip():
        # engines legitimately differ on bad calls and empty answers: judged by status only
        return Expect(status="completed")
    names = [call.name for turn in script for call in turn.tool_calls]
    engines = {}
    react_calls = sum(max(len(turn.tool_calls), 1) for turn in script)
    if react_calls != len(script):
        engines["lc-react"] = ExpectOverride(
            reason="ReAct text carries one action per turn: parallel calls take a turn each.",
            llm_calls=react_calls,
        )
    return Expect(
        status="completed",
        llm_calls=len(script),
        tool_calls=len(names),
        tools=names,
        final_contains=_excerpt(last.content),
        engines=engines,
    )


def _excerpt(text: str) -> str:
    """The answer's first line, cut at a word boundary to at most 80 characters."""
    line = next(line for line in text.splitlines() if line.strip()).strip()
    if len(line) <= FINAL_EXCERPT_CHARS:
        return line
    cut = line[: FINAL_EXCERPT_CHARS + 1]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut[:FINAL_EXCERPT_CHARS]


def build_scenarios(exchanges: Sequence[Exchange], name: str) -> Built:
    """The scenarios of a recording: ``name``, then ``name_2``, ... one per conversation,
    in the order the conversations started. A conversation that cannot become a scenario is
    an error line in ``Built.errors``; the others are still built."""
    built = Built()
    for index, steps in enumerate(_conversations(exchanges, built.notes)):
        scenario_name = name if index == 0 else f"{name}_{index + 1}"
        try:
            built.scenarios.append(_scenario(scenario_name, steps))
        except BuildError as exc:
            built.errors.append(f"{scenario_name}: {exc}")
        except ValidationError as exc:
            built.errors.append(f"{scenario_name}: exchange {steps[0].number}: {_reason(exc)}")
    return built
