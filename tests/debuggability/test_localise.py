"""Localisation by content, whatever the format.

The symmetry test renders one run's ground truth three ways — the scheduler's tree, the
scheduler's JSON, and a LangChain-style transcript (the ``set_debug`` console tracer's
``[chain/start]`` / ``[llm/end]`` / ``[tool/error]`` lines with their inputs and outputs) —
and asserts that all three score the same: recall and localisation. Then each condition of
localisation is shown failing on its own, and each route to the position holding on its own,
with a text and a JSON output that show the same information and get the same verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from bench.debuggability.localise import localise
from bench.debuggability.score import score_output
from bench.debuggability.truth import CallRef, Fact, Failure, GroundTruth, ground_truth
from bench.engines.base import ToolCallRecord
from scenarios import load_scenarios
from tests.debuggability import runs

# -- one run, as the engine lived it ---------------------------------------------------------


@dataclass
class ToolRun:
    name: str
    call_id: str
    args: dict[str, Any]
    result: dict[str, Any] | None  # None: it failed
    error: str | None
    ms: float


@dataclass
class LlmRun:
    step: int
    prompt_tokens: int
    completion_tokens: int
    answer: str | None  # the final answer, or None when it asked for tools
    calls: list[ToolRun] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # errors of attempts before the answer


@dataclass
class Run:
    scenario: str
    user: str
    steps: list[LlmRun]
    truth: GroundTruth


ARGS = {"tracking_number": "00340434161094042557"}
RESET = "ConnectionResetError: [Errno 104] Connection reset by peer"
QUOTES = ("AAPL", "MSFT", "GOOGL")


@pytest.fixture(scope="module")
def scenarios():
    return load_scenarios()


def _tool_runs(scenario) -> list[ToolCallRecord]:
    """What each scenario's tools did in the runs below (the scheduler's behaviour)."""
    if scenario.name == "customer_returns":
        return [
            ToolCallRecord("search_knowledge_base", {"query": "return policy"}, True, 0.5),
            ToolCallRecord("query_order", {"order_id": "A123"}, True, 1.25),
        ]
    if scenario.name == "tool_flaky":  # fails twice, then works: three identical calls
        return [
            ToolCallRecord("track_parcel", ARGS, False, 0.1, RESET),
            ToolCallRecord("track_parcel", ARGS, False, 0.1, RESET),
            ToolCallRecord("track_parcel", ARGS, True, 0.2),
        ]
    if scenario.name == "tool_circuit_breaker":  # three different calls fail; the 4th is cut
        error = scenario.tool_map["get_quote"].behavior.raises
        return [ToolCallRecord("get_quote", {"symbol": s}, False, 0.1, error) for s in QUOTES]
    assert scenario.name == "llm_server_error"  # step 2's LLM call fails once, then answers
    return [ToolCallRecord("get_forecast", {"city": "Porto", "date": "2026-12-01"}, True, 0.3)]


def _run(scenario) -> Run:
    steps = {"customer_returns": 3, "tool_flaky": 4, "tool_circuit_breaker": 5}
    count = steps.get(scenario.name, 2)
    repeats = {2: 2} if scenario.name == "llm_server_error" else {}
    tools = _tool_runs(scenario)
    final = scenario.script[count - 1].content
    if scenario.name == "tool_circuit_breaker":
        # the breaker answers the 4th call itself; the model then gives up
        count, final = 5, scenario.script[4].content
    record = runs.record(scenario, runs.bodies(scenario, count, repeats), tools, final=final)
    truth = ground_truth(scenario, record)
    answered = [c for c in truth.calls if c.status == 200]
    failed = {c.step: c.error for c in truth.calls if c.status != 200}
    executed = iter(tools)
    steps_out = []
    for call in answered:
        turn = scenario.script[call.step - 1]
        llm = LlmRun(call.step, call.prompt_tokens, call.completion_tokens, turn.content)
        if call.step in failed:
            llm.failed.append(f"HTTP 500: {failed[call.step]}")
        for i in range(len(turn.tool_calls)):
            done = next(executed, None)
            if done is None:  # asked for, cut by the breaker
                continue
            result = scenario.tool_map[done.name].behavior.returns if done.ok else None
            llm.calls.append(
                ToolRun(
                    done.name,
                    f"call_t{call.step - 1}_{i}",
                    done.args,
                    result,
                    done.error,
                    done.duration_ms,
                )
            )
        llm.answer = turn.content if not turn.tool_calls else None
        steps_out.append(llm)
    return Run(scenario.name, scenario.user, steps_out, truth)


# -- three renderings of the same run --------------------------------------------------------


def render_tree(run: Run) -> str:
    """The scheduler's ``print_tree()`` shape."""
    lines = [f"[Agent: {run.scenario}] (3.1ms) completed, reason=stop"]
    for s in run.steps:
        lines.append(f"[LLM Reasoning] (0.3ms) step {s.step}")
        lines += [f"├── Retry {n}: {e}; waited 0.4s" for n, e in enumerate(s.failed, 1)]
        said = s.answer if s.answer else "calling tool " + ", ".join(c.name for c in s.calls)
        lines.append(f"├── Output: {said}")
        lines.append(f"└── Tokens: {s.prompt_tokens} input, {s.completion_tokens} output")
        for c in s.calls:
            lines.append(f"[Tool: {c.name}] ({c.ms}ms) step {s.step}")
            lines.append("├── Args: {" + ", ".join(f"{k}: {v}" for k, v in c.args.items()) + "}")
            if c.result is None:
                lines.append(f"└── Error: ToolExecutionError: tool '{c.name}' failed: {c.error}")
            else:
                lines.append(f"└── Result: {json.dumps(c.result)}")
    return "\n".join(lines) + "\n"


def render_json(run: Run) -> str:
    """The scheduler's ``to_json()`` shape: step spans holding an LLM span and tool spans."""
    children = []
    for s in run.steps:
        output = {
            "content": s.answer,
            "tool_calls": [
                {"id": c.call_id, "function": {"name": c.name, "arguments": json.dumps(c.args)}}
                for c in s.calls
            ],
        }
        llm = {
            "kind": "llm",
            "name": f"chat scenario/{run.scenario}",
            "duration_s": 0.0003,
            "events": [{"name": "retry", "attributes": {"error": e}} for e in s.failed],
            "attributes": {
                "gen_ai.output": output,
                "gen_ai.usage.input_tokens": s.prompt_tokens,
                "gen_ai.usage.output_tokens": s.completion_tokens,
            },
        }
        spans = [llm]
        for c in s.calls:
            failed = c.result is None
            spans.append(
                {
                    "kind": "tool",
                    "name": f"execute_tool {c.name}",
                    "duration_s": c.ms / 1000,
                    "attributes": {
                        "gen_ai.tool.name": c.name,
                        "gen_ai.tool.call.id": c.call_id,
                        "gen_ai.tool.call.arguments": json.dumps(c.args),
                        "gen_ai.tool.call.result": f"Error: {c.error}"
                        if failed
                        else json.dumps(c.result),
                    },
                    "error": {"message": c.error, "type": "ToolExecutionError"} if failed else None,
                }
            )
        children.append(
            {
                "kind": "step",
                "name": f"step {s.step}",
                "attributes": {"scheduler.step": s.step},
                "children": spans,
            }
        )
    root = {
        "attributes": {"agent.status": "completed", "agent.termination_reason": "stop"},
        "children": children,
    }
    return json.dumps({"root": root}, indent=2, sort_keys=True)


def render_transcript(run: Run) -> str:
    """A LangChain ``set_debug(True)`` console transcript: chain / llm / tool start and end
    lines, each followed by its inputs or outputs; no step numbers."""
    chain, llm_path = "[chain:AgentExecutor]", "[chain:AgentExecutor > llm:ChatOpenAI]"
    out = [
        f"[chain/start] {chain} Entering Chain run with input:",
        json.dumps({"input": run.user}, indent=2),
    ]
    history = [f"Human: {run.user}"]
    for s in run.steps:
        for error in s.failed:
            out.append(f"[llm/start] {llm_path} Entering LLM run with input:")
            out.append(json.dumps({"prompts": ["\n".join(history)]}, indent=2))
            out.append(f"[llm/error] {llm_path} [401ms] LLM run errored with error:")
            out.append(f"InternalServerError('Error code: 500 - {error.split(': ', 1)[1]}')")
        out.append(f"[llm/start] {llm_path} Entering LLM run with input:")
        out.append(json.dumps({"prompts": ["\n".join(history)]}, indent=2))
        message = {
            "content": s.answer or "",
            "tool_calls": [{"name": c.name, "args": c.args, "id": c.call_id} for c in s.calls],
            "usage_metadata": {
                "input_tokens": s.prompt_tokens,
                "output_tokens": s.completion_tokens,
            },
        }
        finish = "stop" if s.answer else "tool_calls"
        generation = {
            "text": s.answer or "",
            "generation_info": {"finish_reason": finish},
            "message": message,
        }
        out.append(f"[llm/end] {llm_path} [1ms] Exiting LLM run with output:")
        out.append(json.dumps({"generations": [[generation]]}, indent=2))
        history.append(f"AI: {s.answer or ''} " + " ".join(f"{c.name}({c.args})" for c in s.calls))
        for c in s.calls:
            tool_path = f"[chain:AgentExecutor > tool:{c.name}]"
            out.append(f"[tool/start] {tool_path} Entering Tool run with input:")
            out.append(json.dumps(str(c.args)))
            if c.result is None:
                out.append(f"[tool/error] {tool_path} [0ms] Tool run errored with error:")
                out.append(f"ToolFailure({c.error!r})")
                history.append(f"Tool: {c.error}")
            else:
                out.append(f"[tool/end] {tool_path} [0ms] Exiting Tool run with output:")
                out.append(json.dumps(json.dumps(c.result)))
                history.append(f"Tool: {json.dumps(c.result)}")
    out.append(f"[chain/end] {chain} [3ms] Exiting Chain run with output:")
    out.append(json.dumps({"output": run.steps[-1].answer}, indent=2))
    return "\n".join(out) + "\n"


RENDERERS = {"tree": render_tree, "json": render_json, "transcript": render_transcript}


def _verdict(output: str, truth: GroundTruth) -> tuple[Any, ...]:
    score = score_output(output, truth)
    loc = score.localisation
    return (
        score.facts_found,
        score.facts_total,
        score.missed_summary(),
        None if loc is None else (loc.tool, loc.error, loc.position, loc.localised),
    )


@pytest.mark.parametrize(
    ("name", "failure"),
    [
        ("customer_returns", None),  # success
        ("tool_flaky", ("track_parcel", 1, 1, 3)),  # the 1st of three identical calls
        ("tool_circuit_breaker", ("get_quote", 1, 1, 4)),  # the 1st of four different calls
        ("llm_server_error", ("llm", 2, 2, 2)),  # the 2nd (last) LLM call, retried
    ],
)
def test_the_same_facts_score_the_same_in_every_format(scenarios, name, failure) -> None:
    run = _run(scenarios[name])
    truth = run.truth
    f = truth.failure
    described = None if f is None else (f.tool or "llm", f.step, f.index, len(f.all_peers))
    assert described == failure
    verdicts = {fmt: _verdict(render(run), truth) for fmt, render in RENDERERS.items()}
    total = len(truth.facts)
    localised = None if failure is None else (True, True, True, True)
    expected = (total, total, "", localised)
    assert verdicts == {fmt: expected for fmt in RENDERERS}


def test_the_renderings_differ_in_how_they_tell_the_position(scenarios) -> None:
    """Same verdict, different evidence: the tree by its step labels, the JSON also by call
    ids, the transcript (no step numbers) by its call ids and by order."""
    run = _run(scenarios["tool_flaky"])
    how = {}
    for fmt, render in RENDERERS.items():
        loc = score_output(render(run), run.truth).localisation
        how[fmt] = loc.how
    assert how == {
        "tree": ("step", "order"),
        "json": ("step", "id", "order"),
        "transcript": ("id", "order"),
    }
    later = _run(scenarios["llm_server_error"])
    loc = score_output(render_transcript(later), later.truth).localisation
    assert loc.how == ("order",)  # after step 1's answer (its call id call_t0_0)


# -- each condition can fail -----------------------------------------------------------------

ERROR = Fact("error", 1, "upstream is down")
TOOL_FACTS = [Fact("tool", None, "get_quote"), Fact("tool", None, "get_price")]


def _call(step: int, symbol: str, call_id: str | None = None, order: int = 0) -> CallRef:
    return CallRef(
        step,
        "get_quote",
        (call_id,) if call_id else (),
        (Fact("arg", step, symbol, key="symbol"),),
        order or step,
    )


def _failure(peers: list[CallRef], index: int = 1, error: Fact = ERROR) -> Failure:
    call = peers[index - 1]
    return Failure(call.step, call.tool, error, call, tuple(peers))


def _judge(output: str, failure: Failure) -> tuple[bool, bool, bool, tuple[str, ...]]:
    truth = GroundTruth((*TOOL_FACTS, failure.error), failure, ())
    loc = score_output(output, truth).localisation
    return loc.tool, loc.error, loc.position, loc.how


def test_tool_named_but_not_its_error() -> None:
    failure = _failure([_call(1, "AAPL")])
    text = "[Tool: get_quote] step 1\n├── Args: {symbol: AAPL}\n└── Error: timed out\n"
    doc = {
        "spans": [
            {"tool": "get_quote", "step": 1, "args": {"symbol": "AAPL"}, "error": "timed out"}
        ]
    }
    for output in (text, json.dumps(doc)):
        assert _judge(output, failure) == (False, False, False, ())


def test_error_named_but_attributed_to_another_tool() -> None:
    failure = _failure([_call(1, "AAPL")])
    text = "[Tool: get_price] step 1\n└── Error: upstream is down\n"
    doc = {"spans": [{"tool": "get_price", "step": 1, "error": "upstream is down"}]}
    for output in (text, json.dumps(doc)):
        tool, error, _, _ = _judge(output, failure)
        assert (tool, error) == (False, True)


def test_llm_failure_needs_the_llm_call_named() -> None:
    llm = [CallRef(1, None, order=1), CallRef(2, None, order=2)]
    failure = Failure(1, None, Fact("llm_error", 1, "rate limit reached"), llm[0], tuple(llm))
    truth = GroundTruth((failure.error,), failure, ())
    named = score_output("[LLM Reasoning] step 1\n├── Retry 1: Rate limit reached\n", truth)
    assert named.localisation.how == ("step", "order") and named.localisation.localised
    bare = score_output("step 1\n├── Retry 1: Rate limit reached\n", truth)
    assert (bare.localisation.tool, bare.localisation.position) == (False, True)


def test_two_identical_calls_in_one_step_are_ambiguous() -> None:
    # the model asked for get_quote(AAPL) twice in one step; one failed: no output can say
    # which by order (calls of one step may run concurrently), and they have no own marks
    failure = _failure([_call(1, "AAPL", order=1), _call(1, "AAPL", order=2)])
    text = (
        "[LLM] step 1: calling get_quote {symbol: AAPL}, get_quote {symbol: AAPL}\n"
        "[Tool: get_quote] step 1\n└── Error: upstream is down\n"
        "[Tool: get_quote] step 1\n└── Result: {price: 1}\n"
    )
    doc = {
        "steps": [
            {
                "step": 1,
                "calls": [
                    {"tool": "get_quote", "args": {"symbol": "AAPL"}, "error": "upstream is down"},
                    {"tool": "get_quote", "args": {"symbol": "AAPL"}, "result": {"price": 1}},
                ],
            }
        ]
    }
    for output in (text, json.dumps(doc)):
        assert _judge(output, failure) == (True, True, False, ())


def test_calls_and_errors_listed_apart_have_no_order() -> None:
    # the first of two identical calls (steps 1 and 2) failed; a JSON that lists the calls
    # and, in another member, the errors, does not say which: an object's keys are unordered
    failure = _failure([_call(1, "AAPL"), _call(2, "AAPL")])
    doc = {
        "calls": [{"tool": "get_quote", "args": {"symbol": "AAPL"}}] * 2,
        "errors": [{"tool": "get_quote", "error": "upstream is down"}],
    }
    assert _judge(json.dumps(doc), failure) == (True, True, False, ())
    # the same facts with the error inside its call's element: in order, the first
    doc = {
        "calls": [
            {"tool": "get_quote", "args": {"symbol": "AAPL"}, "error": "upstream is down"},
            {"tool": "get_quote", "args": {"symbol": "AAPL"}, "result": {"price": 1}},
        ]
    }
    text = "get_quote {symbol: AAPL} -> error: upstream is down\nget_quote {symbol: AAPL} -> {price: 1}\n"
    for output in (json.dumps(doc), text):
        assert _judge(output, failure) == (True, True, True, ("order",))


def test_a_later_identical_call_needs_a_mark_of_its_own_or_of_its_predecessors() -> None:
    # the 2nd of two identical calls failed. Order tells it only when an earlier call is
    # recognisable before the error (by a step label or an id); the scorer does not count
    # look-alike records (a reader who counts lines could: a known limit, see the docs)
    failure = _failure([_call(1, "AAPL", "c1"), _call(2, "AAPL", "c2")], index=2)
    plain = "get_quote {symbol: AAPL} -> {price: 1}\nget_quote {symbol: AAPL} -> error: upstream is down\n"
    assert _judge(plain, failure) == (True, True, False, ())
    with_ids = (
        "get_quote c1 {symbol: AAPL} -> {price: 1}\n"
        "get_quote {symbol: AAPL} -> error: upstream is down\n"
    )
    assert _judge(with_ids, failure) == (True, True, True, ("order",))
    doc = {
        "calls": [
            {"tool": "get_quote", "id": "c1", "args": {"symbol": "AAPL"}, "result": {"price": 1}},
            {"tool": "get_quote", "args": {"symbol": "AAPL"}, "error": "upstream is down"},
        ]
    }
    assert _judge(json.dumps(doc), failure) == (True, True, True, ("order",))
    # a record of the *later* call before the error breaks the order
    failure = _failure([_call(1, "AAPL", "c1"), _call(2, "AAPL", "c2")], index=1)
    early = "get_quote c2 {symbol: AAPL}\nget_quote {symbol: AAPL} -> error: upstream is down\n"
    assert _judge(early, failure) == (True, True, False, ())


# -- each route holds on its own, in text and in JSON alike ----------------------------------

PEERS = [_call(1, "AAPL", "call_a"), _call(2, "MSFT", "call_b")]


@pytest.mark.parametrize(
    ("route", "text", "doc"),
    [
        (
            "step",  # a step label on the error's record
            "[get_quote] step 2\n  error: upstream is down\n",
            {"runs": [{"tool": "get_quote", "step": 2, "error": "upstream is down"}]},
        ),
        (
            "id",  # the call's id, next to the error
            "get_quote (call_b) error: upstream is down\n",
            {"runs": [{"tool": "get_quote", "id": "call_b", "error": "upstream is down"}]},
        ),
        (
            "args",  # an argument only the failing call had
            "get_quote {symbol: MSFT}\nerror: upstream is down\n",
            {
                "runs": [
                    {"tool": "get_quote", "args": {"symbol": "MSFT"}},
                    {"error": "upstream is down"},
                ]
            },
        ),
        (
            "order",  # after the first call's record (known by its argument), last in line
            "get_quote {symbol: AAPL} -> {price: 1}\nget_quote -> error: upstream is down\n",
            {
                "runs": [
                    {"tool": "get_quote", "args": {"symbol": "AAPL"}, "result": {"price": 1}},
                    {"tool": "get_quote", "error": "upstream is down"},
                ]
            },
        ),
    ],
)
def test_each_route_alone_tells_the_second_call(route: str, text: str, doc: dict) -> None:
    failure = _failure(PEERS, index=2)
    assert _judge(text, failure) == (True, True, True, (route,))
    assert _judge(json.dumps(doc), failure) == (True, True, True, (route,))


def test_a_neighbours_step_label_does_not_label_the_failing_call() -> None:
    # step 2's label on the LLM record above does not label the tool record with the error
    failure = _failure(PEERS, index=2)
    text = "[LLM] step 2\n[get_quote]\n  error: upstream is down\n[LLM] step 3\n"
    doc = {"runs": [{"llm": True, "step": 2}, {"tool": "get_quote", "error": "upstream is down"}]}
    for output in (text, json.dumps(doc)):
        assert _judge(output, failure) == (True, True, False, ())


def test_a_single_call_is_told_by_its_name() -> None:
    failure = _failure([_call(1, "AAPL")])
    for output in (
        "get_quote failed: upstream is down\n",
        '{"tool": "get_quote", "error": "upstream is down"}',
    ):
        assert _judge(output, failure) == (True, True, True, ("only",))


def test_the_deciding_statement_is_returned_for_the_excerpt() -> None:
    failure = _failure(PEERS, index=2)
    output = "noise: upstream is down\nget_quote (call_b)\n  error: upstream is down\n"
    loc, statement = localise(output, failure, True, TOOL_FACTS)
    assert loc.how == ("id",) and statement is not None and statement.line == 2


def test_what_the_error_shows_marks_no_other_call() -> None:
    # malformed arguments: the failing call's error *is* its raw arguments, which hold the
    # next call's "city: Paris"; that does not make the raw call a record of the next one
    raw = Fact("error", 1, '{"city": "Paris", "unit": "cels')
    weather = [
        CallRef(1, "get_weather", order=1),
        CallRef(2, "get_weather", args=(Fact("arg", 2, "Paris", key="city"),), order=2),
    ]
    failure = Failure(1, "get_weather", raw, weather[0], tuple(weather))
    truth = GroundTruth((Fact("tool", 1, "get_weather"), raw), failure, ())
    text = (
        'Invoking: get_weather with {"city": "Paris", "unit": "cels\n'
        "Invoking: get_weather with {'city': 'Paris', 'unit': 'celsius'}\n"
    )
    doc = [
        {"tool": "get_weather", "arguments": '{"city": "Paris", "unit": "cels'},
        {"tool": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
    ]
    for output in (text, json.dumps(doc)):
        loc = score_output(output, truth).localisation
        assert (loc.tool, loc.error, loc.position, loc.how) == (True, True, True, ("order",))
