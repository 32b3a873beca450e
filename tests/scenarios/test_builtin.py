"""The built-in scenario library: every file validates and covers what issue 8 asks for."""

from __future__ import annotations

import pytest

from bench.cli import main
from bench.commands.scenarios import unknown_engines
from bench.engines import ENGINE_NAMES
from scenarios import BUILTIN_DIR, load_scenario, load_scenarios, loader, scenario_files

FILES = scenario_files()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_builtin_file_validates(path):
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert len(scenario.description) > 60, "the description must say what the scenario probes"
    assert unknown_engines(scenario) == []


def test_the_commented_template_validates_and_is_not_listed():
    template = BUILTIN_DIR / "_template.yaml"
    assert load_scenario(template).name == "_template"
    assert template not in FILES


def test_validate_command_accepts_the_builtins(capsys):
    assert main(["scenarios", "validate"]) == 0
    assert capsys.readouterr().out == f"{len(FILES)} valid, 0 invalid ({len(FILES)} files)\n"


def test_the_library_covers_the_issue():
    scenarios = load_scenarios()
    assert len(scenarios) >= 15
    assert {
        "single_tool",
        "customer_returns",
        "sequential_chain",
        "parallel_tool_calls",
        "large_toolset",
        "multi_turn_memory",
        "long_conversation",
        "streaming_long_answer",
        "tool_timeout",
        "tool_flaky",
        "tool_circuit_breaker",
        "loop_detection",
        "huge_tool_result",
        "max_steps",
        "llm_rate_limit",
        "llm_server_error",
        "llm_timeout",
        "malformed_tool_args",
        "unknown_tool",
        "confirmation_required",
    } <= set(scenarios)
    assert len(scenarios["large_toolset"].tools) >= 40
    assert sum(1 for t in scenarios["sequential_chain"].script if t.tool_calls) == 6
    assert scenarios["multi_turn_memory"].history
    assert scenarios["tool_timeout"].tool_map["fetch_live_rate"].behavior.hangs
    assert scenarios["tool_flaky"].tools[0].behavior.fail_times == 2
    assert scenarios["tool_circuit_breaker"].tools[0].behavior.raises
    assert scenarios["loop_detection"].script[-1].repeat
    assert scenarios["huge_tool_result"].tools[0].behavior.returns_size_kb == 64
    assert scenarios["llm_rate_limit"].script[0].fault.status == 429
    assert scenarios["llm_rate_limit"].script[0].fault.retry_after_s == 0.05
    assert scenarios["llm_server_error"].script[1].fault.status == 500
    assert scenarios["malformed_tool_args"].script[0].tool_calls[0].raw_arguments
    assert scenarios["unknown_tool"].script[0].tool_calls[0].unknown
    assert scenarios["confirmation_required"].tool_map["issue_refund"].require_confirmation


def test_the_library_has_a_scenario_per_stream_fault():
    """Issue 14: each stream and HTTP fault of the mock, on a scenario judged by its outcome."""
    scenarios = load_scenarios()
    faults = {
        name: fault
        for name, scenario in scenarios.items()
        for fault in [next((t.fault for t in scenario.script if t.fault is not None), None)]
        if fault is not None
    }
    played = {
        name: (fault.stream, fault.resume if fault.stream == "stall" else None)
        for name, fault in faults.items()
        if fault.stream is not None
    }
    assert played == {
        "llm_stream_truncated": ("truncate", None),
        "llm_stream_truncated_tool_call": ("truncate", None),
        "llm_stream_dropped": ("drop", None),
        "llm_stream_corrupt_chunk": ("corrupt", None),
        "llm_stream_stall": ("stall", True),
        "llm_stream_stall_forever": ("stall", False),
    }
    assert scenarios["llm_stream_truncated_tool_call"].script[0].fault.stream == "truncate"
    assert faults["llm_slow_first_token"].first_token_s == 0.5
    statuses = {name: (f.status, f.times) for name, f in faults.items() if f.times == "always"}
    assert statuses == {
        "llm_slow_first_token": (None, "always"),
        "llm_bad_request": (400, "always"),
        "llm_unauthorized": (401, "always"),
        "llm_model_not_found": (404, "always"),
        "llm_down": (503, "always"),
    }
    for name in {*played, "llm_slow_first_token", *statuses}:
        assert {"fault", "llm-fault"} <= set(scenarios[name].tags), name
        assert scenarios[name].is_fault
    for name in ("llm_bad_request", "llm_unauthorized", "llm_model_not_found"):
        outcome = scenarios[name].expect.outcome()
        assert (outcome["status"], outcome["termination"], outcome["max_llm_calls"]) == (
            "failed",
            "llm_error",
            1,
        ), name


def test_fault_scenarios_stay_fast():
    """Timeouts and scripted delays stay short, so all engines x all scenarios run in minutes."""
    for scenario in load_scenarios().values():
        assert scenario.limits.tool_timeout_s <= 0.5 or not any(
            t.behavior.hangs for t in scenario.tools
        ), scenario.name
        for turn in scenario.script:
            if turn.fault is not None and turn.fault.delay_s is not None:
                assert scenario.limits.llm_timeout_s <= 0.5, scenario.name
                assert turn.fault.delay_s <= 1.0, scenario.name
            if turn.fault is not None and turn.fault.retry_after_s is not None:
                assert turn.fault.retry_after_s <= 0.1, scenario.name
            if turn.fault is not None and turn.fault.stall_s is not None:
                # a stall is cut by the LLM timeout, or by the run deadline for an engine
                # without one
                assert scenario.limits.llm_timeout_s <= 0.5, scenario.name
                assert turn.fault.stall_s <= 1.0 or scenario.limits.run_timeout_s <= 2, (
                    scenario.name
                )
            if turn.fault is not None and turn.fault.first_token_s is not None:
                assert turn.fault.first_token_s <= 0.5 < scenario.limits.llm_timeout_s, (
                    scenario.name
                )
        assert all(t.behavior.latency_ms <= 50 for t in scenario.tools), scenario.name


def test_long_conversation_sits_near_but_under_the_budget():
    from scheduler.tokens import count_message_tokens

    scenario = load_scenarios()["long_conversation"]
    messages = [
        {"role": "system", "content": scenario.system_prompt},
        *(m.model_dump() for m in scenario.history),
        {"role": "user", "content": scenario.user},
    ]
    tokens = sum(count_message_tokens(m) for m in messages)
    assert 0.7 * scenario.limits.token_budget < tokens < 0.8 * scenario.limits.token_budget


def test_every_override_names_an_engine_and_gives_a_reason():
    for scenario in load_scenarios().values():
        for engine, override in scenario.expect.engines.items():
            assert engine in ENGINE_NAMES, (scenario.name, engine)
            assert override.reason.strip(), (scenario.name, engine)


def test_an_override_inherits_and_null_drops_a_base_expectation():
    scenario = load_scenarios()["llm_rate_limit"]
    unset = dict.fromkeys(
        [
            "final_contains_if_completed",
            "forbidden_tools",
            "max_tool_calls",
            "max_llm_calls",
            "max_request_tokens",
            "max_tool_ms",
            "valid_tool_args",
        ]
    )
    base = scenario.expect.for_engine("scheduler")
    assert base == {
        **unset,
        "status": "completed",
        "llm_calls": 4,
        "tool_calls": 1,
        "tools": ["get_forecast"],
        "final_contains": "rain is likely",
        "termination": None,
    }
    assert scenario.expect.for_engine("raw") == {
        **unset,
        "status": "failed",
        "llm_calls": 1,
        "tool_calls": 0,
        "tools": [],
        "final_contains": None,  # explicit null in the override
        "termination": "llm_error",
    }
    tool_flaky = load_scenarios()["tool_flaky"].expect
    assert tool_flaky.for_engine("raw")["final_contains"] == "out for delivery"  # no override


@pytest.mark.skipif(len(loader._LOADERS) == 1, reason="PyYAML without libyaml")
def test_libyamls_parse_of_every_scenario_file_is_pyyamls():
    fast, reference = loader._LOADERS
    for path in loader.scenario_files():
        text = path.read_text(encoding="utf-8")
        assert loader._load(fast, text) == loader._load(reference, text), path.name


def test_the_same_text_is_parsed_once_and_an_edit_is_parsed_again(tmp_path):
    path = tmp_path / "single_tool.yaml"
    text = (BUILTIN_DIR / "single_tool.yaml").read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    first = load_scenario(path)
    assert load_scenario(path) is first
    path.write_text(
        text.replace("  The smallest agent run", "  Edited. The smallest agent run", 1),
        encoding="utf-8",
    )
    edited = load_scenario(path)
    assert edited is not first and edited.description.startswith("Edited. ")
    assert load_scenario(path, engines=["raw"]) is not edited  # other engines: checked again
