"""Captures: every engine x mode on customer_returns, the scheduler's JSON trace scores 1.0."""

from __future__ import annotations

import json

import pytest

from bench.debuggability.capture import capture
from bench.debuggability.modes import ENGINE_MODES, MODES
from bench.debuggability.score import parse_structured, score_output
from scenarios import load_scenarios

PAIRS = [(engine, mode) for engine, modes in ENGINE_MODES.items() for mode in modes]

# what each mode's output looks like: a marker its users would recognise
MARKERS = {
    "tree": "[Agent: customer_returns]",
    "verbose": "> Entering new AgentExecutor chain...",
    "set-debug": "[chain/start]",
    "graph-debug": "[updates]",
}


@pytest.fixture(scope="module")
def scenario():
    return load_scenarios()["customer_returns"]


@pytest.fixture(scope="module")
def captures(scenario):
    return {(engine, mode): capture(engine, scenario, mode) for engine, mode in PAIRS}


@pytest.mark.parametrize(("engine", "mode"), PAIRS)
def test_capture_works_for_every_engine_and_mode(captures, engine: str, mode: str) -> None:
    c = captures[engine, mode]
    assert (c.engine, c.mode, c.scenario) == (engine, mode, "customer_returns")
    assert c.record.status == "completed", c.record.error
    assert [t.name for t in c.record.tools] == ["search_knowledge_base", "query_order"]
    if mode == "none":
        assert c.output == ""
        return
    parsed = parse_structured(c.output)
    assert (parsed is not None) == MODES[mode].structured
    if mode in MARKERS:
        assert MARKERS[mode] in c.output
    if mode == "json":
        assert parsed["root"]["name"] == "invoke_agent customer_returns"
    if mode == "run-tree":
        assert len(parsed) == 1 and parsed[0]["parent_run_id"] is None
        assert parsed[0]["child_runs"], "the collected run has no children"
        assert "query_order" in json.dumps(parsed)
    if mode == "stream-debug":
        assert {event["type"] for event in parsed} >= {"task", "task_result"}
    score = score_output(c.output, c.truth)
    assert score.facts_found > 0
    assert score.bytes == len(c.output.encode())


@pytest.mark.parametrize("engine", ["scheduler", "scheduler-stream"])
def test_scheduler_json_trace_recovers_every_fact(captures, engine: str) -> None:
    c = captures[engine, "json"]
    score = score_output(c.output, c.truth)
    assert [f.label() for f in score.missed] == []
    assert score.recall == 1.0
    assert score.facts_total >= 20


def test_repeating_the_user_question_scores_about_zero(captures, scenario) -> None:
    truth = captures["scheduler", "json"].truth
    echo = f"System: {scenario.system_prompt}\nHuman: {scenario.user}\n" * 3
    score = score_output(echo, truth)
    assert score.recall <= 0.05, [f.label() for f in score.found]


def test_modes_leave_no_global_switch_on(captures, scenario) -> None:
    from langchain_core.globals import get_debug

    assert get_debug() is False
    # verbose was set on one built executor; a fresh build prints nothing
    again = capture("lc-agentexecutor", scenario, "run-tree")
    assert "> Entering new" not in again.output
    assert "[chain/start]" not in again.output


def test_raw_engine_is_the_zero_line(captures) -> None:
    c = captures["raw", "none"]
    score = score_output(c.output, c.truth)
    assert (score.recall, score.bytes, score.lines, score.bytes_per_fact) == (0.0, 0, 0, None)


def test_mode_cost_reports_paired_medians(scenario) -> None:
    from bench.debuggability.capture import mode_cost

    cost = mode_cost("scheduler", scenario, "json", runs=3, warmup=1)
    assert (cost.engine, cost.mode, cost.scenario, cost.runs) == (
        "scheduler",
        "json",
        "customer_returns",
        3,
    )
    assert 0 < cost.off_ms < 1000 and 0 < cost.on_ms < 1000
    assert abs(cost.cost_ms) < 1000


@pytest.mark.parametrize("mode", ["verbose", "graph-debug", "stream-debug", "tree", "json"])
def test_a_mode_that_finds_nothing_to_switch_on_fails_loudly(mode: str) -> None:
    from bench.debuggability.capture import _Session

    with pytest.raises(RuntimeError, match=f"debug mode '{mode}': no .* found in dict"):
        _Session(mode).after_prepare({"agent": object()})


def test_console_modes_show_an_escaping_exception_as_the_console_would() -> None:
    flaky = load_scenarios()["tool_flaky"]
    c = capture("lc-agentexecutor", flaky, "verbose")
    assert c.record.status == "failed"
    assert c.output.startswith("\n\n\x1b[1m> Entering new AgentExecutor chain...")
    assert "Traceback (most recent call last):" in c.output
    assert c.output.rstrip().endswith(
        "ToolFailure: ConnectionResetError: [Errno 104] Connection reset by peer"
    )
