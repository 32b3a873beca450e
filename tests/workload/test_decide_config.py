"""What ``schedbench decide`` asks the runner for, without running it: the engines from the
registry, and a RunConfig that measures the workload's question and nothing else."""

from __future__ import annotations

import pytest

from bench.engines.registry import REGISTRY, REPRESENTATIVE
from bench.runner.phases.load.plan import scripted_latency_ms
from bench.workload import parse_workload
from bench.workload.decide import build_config, default_engines, engines_for, load_rates
from scenarios import load_scenarios

SCENARIOS = load_scenarios()
TEXT = """\
name: w
llm: {first_token_ms: 700, tokens_per_s: 80, jitter: 0.2}
rate: 200
hosts: 10
objective: {p95_ms: 6000}
streaming: STREAMING
scenarios: [customer_returns, tool_flaky]
"""


def workload(streaming: bool):
    return parse_workload(TEXT.replace("STREAMING", str(streaming).lower()))


@pytest.mark.parametrize("streaming", [False, True])
def test_the_default_engines_are_the_headline_pairs_and_the_floor(streaming: bool) -> None:
    choice = default_engines(streaming)
    roles = [REGISTRY[e].role for e in choice.engines]
    assert roles[0] == "floor" and roles.count("self-built") == 2
    lead = REPRESENTATIVE["langchain"]
    assert sum(e.startswith(lead) for e in choice.engines) == 2
    for configuration in ("default", "production"):
        pair = [e for e in choice.engines[1:] if REGISTRY[e].configuration == configuration]
        assert len(pair) == 2
        if streaming and configuration == "production":
            assert all(REGISTRY[e].streams for e in pair)  # streaming variants exist
        if not streaming:
            assert not any(REGISTRY[e].streams for e in pair)
    assert bool(choice.notes) == streaming  # no streaming default pair: said, not hidden
    assert not any(REGISTRY[e].outcome_only for e in choice.engines)


def test_the_config_measures_the_question() -> None:
    w = workload(True)
    engines = engines_for(w).engines
    config = build_config(w, SCENARIOS, quick=True, engines=engines)
    spec = "custom:ttft:700,tps:80,jitter:0.2"
    assert config.latencies == (spec,) and config.load_latency == spec
    assert (
        config.ttft and config.ttft_latency == spec and config.ttft_scenario == "customer_returns"
    )
    assert config.scenarios == ("customer_returns", "tool_flaky")
    assert config.load_scenario == "customer_returns"
    assert config.load_rates == (10.0, 20.0, 30.0) == load_rates(w)
    assert config.load_start_rate == 20.0  # the per-host rate
    assert config.load_engines == engines
    scripted = scripted_latency_ms(SCENARIOS["customer_returns"], spec)
    assert config.load_target_factor * scripted == pytest.approx(6000.0)
    assert not config.throughput and not config.footprint
    assert config.repeat == 3 and config.load_processes == (1,)
    assert build_config(workload(False), SCENARIOS, quick=False, engines=engines).ttft is False


def test_an_objective_below_the_llm_alone_is_refused() -> None:
    w = parse_workload(TEXT.replace("STREAMING", "false").replace("6000", "500"))
    with pytest.raises(ValueError, match="below what the LLM alone takes"):
        build_config(w, SCENARIOS, quick=True, engines=("raw",))


def test_the_tools_latency_is_played_from_copies_the_run_folder_keeps(tmp_path) -> None:
    from bench.workload.decide import played_scenarios, write_scenarios

    w = parse_workload(TEXT.replace("STREAMING", "false") + "tools: {latency_ms: 250}\n")
    assert w.tools is not None and w.tools.latency_ms == 250
    played = played_scenarios(w, SCENARIOS)
    assert set(played) == {"customer_returns", "tool_flaky"}
    for name, scenario in played.items():
        original = SCENARIOS[name]
        assert [t.behavior.latency_ms for t in scenario.tools] == [250.0] * len(original.tools)
        # everything else as scripted: the failures of tool_flaky too
        assert [t.behavior.fail_times for t in scenario.tools] == [
            t.behavior.fail_times for t in original.tools
        ]
        assert scenario.script == original.script and scenario.expect == original.expect
    directory = write_scenarios(played, tmp_path / "scenarios")
    assert load_scenarios(directory) == played  # the files are what was played
    # the load phase's scripted latency (and so its target factor) counts the tools' wait
    calls = sum(len(t.tool_calls) for t in SCENARIOS["customer_returns"].script)
    spec = w.latency_spec
    slower = scripted_latency_ms(played["customer_returns"], spec)
    assert slower - scripted_latency_ms(SCENARIOS["customer_returns"], spec) == pytest.approx(
        250.0 * calls, rel=0.05
    )
    config = build_config(w, played, quick=True, engines=("raw",), scenario_dir=directory)
    assert config.scenario_dir == directory
    # without tools: the workload's scenarios as they are, and its own directory
    plain = workload(False)
    assert played_scenarios(plain, SCENARIOS) is SCENARIOS
    assert build_config(plain, SCENARIOS, quick=True, engines=("raw",)).scenario_dir is None


def test_an_earlier_conversation_is_prepended_to_every_scenarios_history(tmp_path) -> None:
    from bench.referee.tokens import request_tokens
    from bench.workload.decide import played_scenarios, rewrites_scenarios, write_scenarios

    text = TEXT.replace("STREAMING", "false") + "conversation: {prior_turns: 12}\n"
    w = parse_workload(text)
    assert rewrites_scenarios(w) and not rewrites_scenarios(workload(False))
    played = played_scenarios(w, SCENARIOS)
    for name, scenario in played.items():
        original = SCENARIOS[name]
        history = scenario.history
        assert len(history) == 24 + len(original.history)
        assert [m.role for m in history[:4]] == ["user", "assistant", "user", "assistant"]
        assert all(len(m.content.split()) == 60 + 3 for m in history[:24])  # "Earlier … k:"
        assert history[24:] == original.history and scenario.script == original.script
    assert load_scenarios(write_scenarios(played, tmp_path / "s")) == played
    # every request carries it: ~1,900 more prompt tokens on each
    messages = [{"role": m.role, "content": m.content} for m in played["customer_returns"].history]
    assert 1500 < request_tokens(messages) < 2500
    # both rewrites together, and the same text every time (a reproducible run)
    both = parse_workload(text + "tools: {latency_ms: 50}\n")
    again = played_scenarios(both, SCENARIOS)["customer_returns"]
    assert again.history == played["customer_returns"].history
    assert {t.behavior.latency_ms for t in again.tools} == {50.0}


def test_a_tool_failure_rate_scripts_the_models_retries(tmp_path) -> None:
    from bench.workload.decide import FLOW_FIELDS, played_scenarios, write_scenarios

    text = TEXT.replace("STREAMING", "false")
    w = parse_workload(text + "tools: {failure_rate: 0.1, failure_message: 'HTTP 503'}\n")
    played = played_scenarios(w, SCENARIOS)
    returns, flaky = played["customer_returns"], played["tool_flaky"]
    original = SCENARIOS["customer_returns"]
    assert {t.behavior.fail_rate for t in returns.tools} == {0.1}
    assert {t.behavior.fail_message for t in returns.tools} == {"HTTP 503"}
    # after each turn calling a tool, the model's retry of it (played only after a failure)
    calls = [turn for turn in original.script if turn.tool_calls]
    assert len(returns.script) == len(original.script) + len(calls)
    for turn, retry in zip(calls, [t for t in returns.script if t.retry], strict=True):
        assert [c.name for c in retry.tool_calls] == [c.name for c in turn.tool_calls]
        assert [c.args for c in retry.tool_calls] == [c.args for c in turn.tool_calls]
    assert returns.limits.max_steps == original.limits.max_steps + len(calls)
    assert returns.limits.max_same_tool_calls == original.limits.max_same_tool_calls + 1
    # the exact path varies now; what production needs stays
    assert all(getattr(returns.expect, f) is None for f in FLOW_FIELDS)
    assert returns.expect.final_contains == original.expect.final_contains
    assert returns.expect.status == original.expect.status
    # a tool the scenario already makes fail keeps its own script
    assert flaky.script == SCENARIOS["tool_flaky"].script
    assert [t.behavior.fail_rate for t in flaky.tools] == [0.0]
    # the load phase's target: the path without failures, as before
    assert scripted_latency_ms(returns, w.latency_spec) == pytest.approx(
        scripted_latency_ms(original, w.latency_spec)
    )
    # the copies in the run folder judge every engine as the rewrite does (an override's
    # explicit null, dropping a base expectation, survives the file)
    back = load_scenarios(write_scenarios(played, tmp_path / "s"))
    for name, scenario in played.items():
        for engine in REGISTRY:
            assert back[name].expect.for_engine(engine) == scenario.expect.for_engine(engine)
    assert back["tool_flaky"].expect.for_engine("lc-create-agent")["final_contains"] is None


def test_a_recorded_llm_runs_every_phase_at_the_recorded_timings() -> None:
    from scenarios.schema import TurnTiming

    original = SCENARIOS["customer_returns"]
    timing = TurnTiming(stream=True, ttft_ms=400.0, total_ms=900.0)
    recording = original.model_copy(
        update={"script": [t.model_copy(update={"timing": timing}) for t in original.script]}
    )
    text = TEXT.replace("STREAMING", "true").replace(
        "{first_token_ms: 700, tokens_per_s: 80, jitter: 0.2}", "{recorded: true}"
    )
    w = parse_workload(text)
    config = build_config(
        w, {**SCENARIOS, "customer_returns": recording}, quick=True, engines=("raw",)
    )
    assert config.latencies == ("recorded",) == (config.load_latency,) == (config.ttft_latency,)
    # the objective against what the recording scripts: 3 turns of 900 ms, and the tools
    scripted = scripted_latency_ms(recording, "recorded")
    assert scripted >= 3 * 900.0
    assert config.load_target_factor * scripted == pytest.approx(6000.0)
