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
  bytes — else ``results`` keyed by arguments); and where the agent reported its tool runs
  (``toolruns``), their latency, failures and confirmations, the model's retry of a failed
  call marked ``retry``, a refused tool ``forbidden``, and the scenario tagged ``fault``;
- **limits** wide enough that no engine is cut where the recorded agent was not (steps, LLM
  timeout, run deadline, repeated calls, a token budget the requests cannot reach);
- **expect**: what the recorded run did (LLM calls, tool calls in order, the final answer).

Exchanges that are no usable answer (an HTTP error, a cut stream, a request without tools,
a field of the wrong type) are left out with a note; what a scenario cannot hold of an
exchange it keeps (a token count out of bounds, a lone surrogate) is a note too. A
conversation the scenario format cannot hold at all (a text longer than a scenario file
allows, a schema ``pattern`` that backtracks past its time limit) is one error line naming
the exchange and the reason; the other conversations are still built.
"""

from __future__ import annotations

import contextvars
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from bench.errors import BuildError
from bench.traffic.exchange import Exchange, ToolRun
from bench.traffic.shape import problem, without_surrogates
from bench.traffic.toolruns import (
    Derived,
    Execution,
    RunMatcher,
    TextTooLong,
    check_fits,
    derive,
)
from bench.traffic.write import scenario_yaml
from scenarios.argschema import ArgsValidator
from scenarios.loader import ScenarioError
from scenarios.schema import (
    MAX_RECORDED_TOKENS,
    Expect,
    ExpectOverride,
    Limits,
    Message,
    Scenario,
    ScriptToolCall,
    ToolDef,
    Turn,
    TurnTiming,
)

TAG = "recorded"
FAULT_TAG = "fault"  # a recording in which a tool failed or a confirmation was refused
_TIMED_OUT = "takes longer than"  # how a schema pattern's time limit speaks (scenarios.argschema)
FINAL_EXCERPT_CHARS = 80
_SYSTEM_ROLES = ("system", "developer")
_DEFAULT_LIMITS = Limits()


@dataclass
class Built:
    """The scenarios a recording gives (with their YAML text), what was left out or kept
    only in part (one note each), and the conversations that could not become a scenario
    (one error line each)."""

    scenarios: list[Scenario] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)


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
            part["text"]
            for part in content
            if isinstance(part, dict)
            and part.get("type", "text") == "text"
            and isinstance(part.get("text"), str)
        )
    return str(content)


def _noted_text(content: Any, where: str, notes: list[str]) -> str:
    """``text_of`` a message that becomes scenario text; parts that are not text (an image,
    audio) are noted as left out."""
    if isinstance(content, list):
        kinds = Counter(
            str(part.get("type"))
            for part in content
            if isinstance(part, dict) and part.get("type", "text") != "text"
        )
        for kind_name, count in sorted(kinds.items()):
            notes.append(
                f"{where}: {count} {kind_name} part{'s' * (count > 1)} left out: a scenario "
                "holds text only"
            )
    return text_of(content) or ""


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
    found = problem(exchange.request, exchange.response)
    if found is not None:
        notes.append(f"{where}: left out: {found}")
        return None
    exchange = _encodable(exchange, where, notes)
    request = exchange.request
    messages = request["messages"]
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


def _encodable(exchange: Exchange, where: str, notes: list[str]) -> Exchange:
    """The exchange with its lone surrogates (no character, no UTF-8) as U+FFFD, noted."""
    try:
        json.dumps([exchange.request, exchange.response], ensure_ascii=False).encode("utf-8")
        return exchange
    except UnicodeEncodeError:
        pass
    found: list[tuple[str, str]] = []
    request = without_surrogates(exchange.request, "", found)
    response = without_surrogates(exchange.response, "response", found)
    for path, surrogate in found[:3]:
        notes.append(f"{where}: {path}: a lone surrogate ({surrogate}) written as U+FFFD")
    if len(found) > 3:
        notes.append(f"{where}: {len(found) - 3} more texts with a lone surrogate")
    return exchange.with_bodies(request, response)


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
    except (ValueError, RecursionError):
        args = None
    valid = isinstance(args, dict)
    if valid and not unknown:
        for error in ArgsValidator(tools[name].args_schema).iter_errors(args):
            if error.message.startswith("pattern ") and _TIMED_OUT in error.message:
                path = "".join(f".{p}" for p in error.absolute_path)
                raise BuildError(f"{where}.arguments{path}: {error.message}")
            valid = False
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


_Result = tuple[int, str]  # a tool message: its index in the request, its text


def _tool_results(
    step: _Step, following: _Step, notes: list[str]
) -> tuple[dict[str, _Result], list[_Result]]:
    """The tool messages answering ``step``'s calls: by call id, and in order."""
    by_id: dict[str, _Result] = {}
    in_order: list[_Result] = []
    start = len(step.messages) + 1
    for index, message in enumerate(following.messages[start:], start=start):
        if message.get("role") != "tool":
            break
        where = f"exchange {following.number}: messages[{index}].content"
        result = (index, _noted_text(message.get("content"), where, notes))
        in_order.append(result)
        if isinstance(message.get("tool_call_id"), str):
            by_id[message["tool_call_id"]] = result
    return by_id, in_order


def _prefix(steps: list[_Step], notes: list[str]) -> tuple[str, list[Message], str]:
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
            system.append(_noted_text(message.get("content"), f"{where}.content", notes))
            check_fits(system[-1], f"{where} (the system prompt)")
        elif role in ("user", "assistant") and not message.get("tool_calls"):
            text = _noted_text(message.get("content"), f"{where}.content", notes)
            history.append(Message(role=role, content=text))
            check_fits(history[-1].content, f"{where} (history)")
        else:
            raise BuildError(
                f"{where}: a {role} message before the user's input; a scenario's history "
                "holds only user and assistant text"
            )
    if len(system) > 1:
        raise BuildError(f"exchange {first.number}: more than one system message")
    user = _noted_text(
        messages[last_user].get("content"),
        f"exchange {first.number}: messages[{last_user}].content",
        notes,
    )
    check_fits(user, f"exchange {first.number}: messages[{last_user}] (the user's input)")
    if not user.strip():
        raise BuildError(f"exchange {first.number}: the user's message is empty")
    return (system[0] if system else ""), history, user


def _scenario(name: str, steps: list[_Step], runs: RunMatcher, notes: list[str]) -> Scenario:
    system_prompt, history, user = _prefix(steps, notes)
    tool_defs = _tools(steps)
    tools = {tool.name: tool for tool in tool_defs}
    executions: dict[str, list[Execution]] = {tool_name: [] for tool_name in tools}
    script: list[Turn] = []
    unanswered = False
    for position, step in enumerate(steps):
        where = f"exchange {step.number}"
        calls = [
            _call(raw, tools, f"{where}: tool_calls[{i}]")
            for i, raw in enumerate(step.message.get("tool_calls") or ())
        ]
        following = steps[position + 1] if position + 1 < len(steps) else None
        by_id, in_order = _tool_results(step, following, notes) if following else ({}, [])
        for index, call in enumerate(calls):
            result = by_id.get(call.id) if call.id else None
            if result is None and index < len(in_order) and not by_id:
                result = in_order[index]
            unanswered = unanswered or result is None
            if call.unknown or call.raw_arguments is not None:
                continue
            run = runs.take(
                call.name,
                call.args,
                step.exchange.started_at,
                following.exchange.started_at if following else None,
            )
            about = f"the result of {call.name}" + (f", call {call.id}" if call.id else "")
            at = (
                f"exchange {following.number}: messages[{result[0]}]"
                if following and result
                else where
            )
            executions[call.name].append(
                Execution(
                    position, call.args, result[1] if result else None, run, f"{at} ({about})"
                )
            )
        content = text_of(step.message.get("content"))
        if content is None and not calls:
            raise BuildError(f"{where}: the answer has neither content nor tool calls")
        if content is not None:
            check_fits(content, f"{where}: response.choices[0].message.content")
        script.append(Turn(content=content, tool_calls=calls, timing=_timing(step, notes)))
    derived = {tool_name: derive(tool_name, executions[tool_name], notes) for tool_name in tools}
    tool_defs = [
        tool.model_copy(
            update={
                "behavior": derived[tool.name].behavior,
                "require_confirmation": derived[tool.name].require_confirmation,
                "approval": derived[tool.name].approval,
            }
        )
        for tool in tool_defs
    ]
    script = _retries(script, derived)
    refused = sorted(tool_name for tool_name, d in derived.items() if d.refused)
    faulty = bool(refused) or any(d.failed_turns for d in derived.values())
    model = steps[0].exchange.request.get("model")
    return Scenario(
        name=name,
        description=_description(model, script),
        tags=[TAG, FAULT_TAG] if faulty else [TAG],
        system_prompt=system_prompt,
        history=history,
        user=user,
        tools=tool_defs,
        script=script,
        limits=_limits(steps, script, tool_defs),
        expect=_expect(script, unanswered, refused, derived),
    )


def _timing(step: _Step, notes: list[str]) -> TurnTiming | None:
    """The exchange's timing with the token counts the upstream reported (those within a
    scenario's bounds; the others noted)."""
    timing = step.exchange.timing
    if timing is None:
        return None
    usage = step.exchange.usage
    counts = {}
    for key in ("prompt_tokens", "completion_tokens"):
        value = usage.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            continue
        if value > MAX_RECORDED_TOKENS:
            notes.append(
                f"exchange {step.number}: usage.{key} {value:,} left out: above "
                f"{MAX_RECORDED_TOKENS:,}"
            )
            continue
        counts[key] = value
    return timing.model_copy(update=counts)


def _retries(script: list[Turn], derived: dict[str, Derived]) -> list[Turn]:
    """Mark a turn that repeats a call which failed in the turn before as ``retry``: an
    engine that retried the tool itself got its result, and the model moves on."""
    failed = {t for d in derived.values() for t in d.failed_turns}
    marked = list(script)
    for t in range(1, len(script)):
        if t - 1 not in failed or not script[t].tool_calls:
            continue
        before = {(c.name, json.dumps(c.args, sort_keys=True)) for c in script[t - 1].tool_calls}
        again = {(c.name, json.dumps(c.args, sort_keys=True)) for c in script[t].tool_calls}
        if before & again:
            marked[t] = script[t].model_copy(update={"retry": True})
    return marked


def _description(model: Any, script: list[Turn]) -> str:
    calls = sum(len(turn.tool_calls) for turn in script)
    source = f" of {model}" if isinstance(model, str) and model else ""
    return (
        f"Recorded traffic{source}: {len(script)} LLM calls, {calls} tool calls. "
        "Play its measured timings with --latency recorded."
    )


def _limits(steps: list[_Step], script: list[Turn], tools: list[ToolDef]) -> Limits:
    totals_s = [turn.timing.total_ms / 1000 for turn in script if turn.timing is not None]
    latency_s = {tool.name: tool.behavior.latency_ms / 1000 for tool in tools}
    tools_s = sum(latency_s.get(call.name, 0.0) for turn in script for call in turn.tool_calls)
    repeated = Counter(
        (call.name, json.dumps(call.args, sort_keys=True))
        for turn in script
        for call in turn.tool_calls
    )
    # a request's tokens never exceed its bytes: a budget above the largest body never cuts
    largest = max(len(json.dumps(s.exchange.request, ensure_ascii=False).encode()) for s in steps)
    run_s = 3 * (sum(totals_s) + tools_s)
    return Limits(
        max_steps=max(_DEFAULT_LIMITS.max_steps, len(script) + 1),
        tool_timeout_s=max(
            _DEFAULT_LIMITS.tool_timeout_s, math.ceil(3 * max(latency_s.values(), default=0))
        ),
        llm_timeout_s=max(_DEFAULT_LIMITS.llm_timeout_s, math.ceil(3 * max(totals_s, default=0))),
        max_same_tool_calls=max(
            _DEFAULT_LIMITS.max_same_tool_calls, max(repeated.values(), default=0)
        ),
        token_budget=max(_DEFAULT_LIMITS.token_budget or 0, math.ceil(largest / 1000) * 1000),
        run_timeout_s=math.ceil(run_s) + 30 if run_s > 10 else None,
    )


def _expect(
    script: list[Turn], unanswered: bool, refused: list[str], derived: dict[str, Derived]
) -> Expect:
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
    never_ran = {
        (call_turn, name, args)
        for name, d in derived.items()
        for call_turn, args in d.refused_calls
    }
    names = [  # the executions, as the tools see them: a refused call never ran
        call.name
        for t, turn in enumerate(script)
        for call in turn.tool_calls
        if (t, call.name, json.dumps(call.args, sort_keys=True)) not in never_ran
    ]
    engines = {}
    react_calls = sum(max(len(turn.tool_calls), 1) for turn in script)
    if react_calls != len(script):
        engines["lc-react"] = ExpectOverride(
            reason="ReAct text carries one action per turn: parallel calls take a turn each.",
            llm_calls=react_calls,
        )
    return Expect(
        status="completed",
        # production outcome: a tool the user refused never runs
        forbidden_tools=refused or None,
        llm_calls=len(script),
        tool_calls=len(names),
        tools=names,
        final_contains=_excerpt(last.content or ""),
        engines=engines,
    )


def _excerpt(text: str) -> str:
    """The answer's first line, cut at a word boundary to at most 80 characters."""
    line = next(line for line in text.splitlines() if line.strip()).strip()
    if len(line) <= FINAL_EXCERPT_CHARS:
        return line
    cut = line[: FINAL_EXCERPT_CHARS + 1]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut[:FINAL_EXCERPT_CHARS]


def build_scenarios(
    exchanges: Sequence[Exchange], name: str, tool_runs: Sequence[ToolRun] = ()
) -> Built:
    """The scenarios of a recording: ``name``, then ``name_2``, ... one per conversation,
    in the order the conversations started, with the tool runs the agent reported. A
    conversation that cannot become a scenario is an error line in ``Built.errors``; the
    others are still built."""
    built = Built()
    runs = RunMatcher(tool_runs)
    for number, exchange in enumerate(exchanges, start=1):
        built.notes.extend(f"exchange {number}: {warning}" for warning in exchange.warnings)
    for index, steps in enumerate(_conversations(exchanges, built.notes)):
        scenario_name = name if index == 0 else f"{name}_{index + 1}"
        notes: list[str] = []
        try:
            # a fresh context: each conversation gets the whole time budget for its patterns
            scenario = contextvars.Context().run(_scenario, scenario_name, steps, runs, notes)
            text = scenario_yaml(scenario)
        except (BuildError, TextTooLong) as exc:
            built.errors.append(f"{scenario_name}: {exc}")
            continue
        except ValidationError as exc:
            built.errors.append(f"{scenario_name}: exchange {steps[0].number}: {_reason(exc)}")
            continue
        except ScenarioError as exc:
            reason = str(exc).removeprefix("<string>: ")
            built.errors.append(f"{scenario_name}: the scenario file would be refused: {reason}")
            continue
        built.scenarios.append(scenario)
        built.texts[scenario_name] = text
        built.notes.extend(notes)
    built.notes.extend(runs.unmatched())
    return built
