"""The decision on made-up numbers: the objective gates, then expectations, then cost; the
break-even core-hour price is the one at which the two costs are equal."""

from __future__ import annotations

import dataclasses
import math
import re

from bench.workload import parse_workload
from bench.workload.answer import Answer, EngineAnswer, Interval, LoadAnswer, decide, ranking

TEXT = """\
name: w
llm: {first_token_ms: 700, tokens_per_s: 80}
rate: 20
objective: {p95_ms: 6000}
streaming: STREAMING
scenarios: [customer_returns]
prices: {prompt_per_1m: 1.0, completion_per_1m: 0.0, core_hour: 0.04}
"""


def engine(name: str, *, met: bool, tokens: float, cpu_ms: float, streams: bool = True,
           role: str = "framework", missed: tuple[str, ...] = ()) -> EngineAnswer:  # fmt: skip
    token_cost = tokens * 1.0 / 1e6 * 1000
    cpu = Interval(cpu_ms, cpu_ms * 0.9, cpu_ms * 1.1)
    load = LoadAnswer(True, met, 1 if met else None, Interval(3000.0), Interval(3100.0),
                      "" if met else "achieved rate under the offered rate", cpu, 1)  # fmt: skip
    return EngineAnswer(
        engine=name, role=role, runs=3, of_runs=3, p50_ms=Interval(3000.0),
        p95_ms=Interval(3050.0), llm_calls=3.0, prompt_tokens=tokens, completion_tokens=0.0,
        ttft_p50_ms=math.nan, streams=streams, mix_llm_calls=3.0, mix_prompt_tokens=tokens,
        load=load, cores=cpu.times(0.02), cost=cpu.times(0.04 / 3600).plus(token_cost),
        token_cost=token_cost, missed=missed,
    )  # fmt: skip


def answer(engines: list[EngineAnswer], streaming: bool = False) -> Answer:
    w = parse_workload(TEXT.replace("STREAMING", str(streaming).lower()))
    out = Answer(w, w.latency_spec, "customer_returns", w.host_rate, engines, cores=2)
    decide(out)
    return out


def test_the_cheaper_engine_wins_when_both_meet_the_objective() -> None:
    a = engine("a", met=True, tokens=500, cpu_ms=10)
    b = engine("b", met=True, tokens=300, cpu_ms=80)
    out = answer([a, b])
    assert [e.engine for e in ranking(out)] == ["b", "a"]
    assert out.decision.startswith("**b** wins on cost per 1,000 runs")
    # b saves 200 tokens ($0.2 per 1,000 runs) and costs 70 ms CPU more: equal costs when
    # 70 / 1000 × price / 3600 × 1000 = 0.2, i.e. price = 0.2 × 3600 / 70
    even = 0.2 * 3600 / 70
    shown = re.search(r"core-hour price above \$([\d.]+)", out.turns_on)
    assert shown and math.isclose(float(shown.group(1)), even, rel_tol=1e-3), out.turns_on


def test_the_objective_gates_before_cost() -> None:
    a = engine("a", met=True, tokens=500, cpu_ms=10)
    b = engine("b", met=False, tokens=300, cpu_ms=80)
    out = answer([a, b])
    assert out.decision.startswith("**a** wins on the objective")
    assert "b would be in the running if it met the objective" in out.turns_on
    assert "would be the cheaper at a core-hour price below" in out.turns_on


def test_missed_expectations_rank_below_met_ones() -> None:
    a = engine("a", met=True, tokens=500, cpu_ms=10, missed=("tool_flaky: 3 of 3 runs",))
    b = engine("b", met=True, tokens=600, cpu_ms=10)
    out = answer([a, b])
    assert out.decision.startswith("**b** wins on expectations")


def test_a_streaming_workload_chooses_among_streaming_engines_and_never_the_floor() -> None:
    floor = engine("raw", met=True, tokens=100, cpu_ms=1, role="floor", streams=False)
    plain = engine("plain", met=True, tokens=100, cpu_ms=2, streams=False)
    stream = engine("stream", met=True, tokens=500, cpu_ms=20)
    out = answer([floor, plain, stream], streaming=True)
    assert [e.engine for e in ranking(out)] == ["stream"]
    assert "is the only candidate" in out.decision
    assert [e.engine for e in ranking(answer([floor, plain, stream]))] == ["plain", "stream"]


def test_headroom_at_the_top_rate_is_what_would_turn_it() -> None:
    a = engine("a", met=True, tokens=300, cpu_ms=80)
    b = engine("b", met=True, tokens=500, cpu_ms=10)
    a = dataclasses.replace(
        a, load=dataclasses.replace(a.load, peak_rate=30.0, peak_met=False, peak_why="p95 over")
    )
    b = dataclasses.replace(b, load=dataclasses.replace(b.load, peak_rate=30.0, peak_met=True))
    out = answer([a, b])
    assert out.decision.startswith("**a** wins on cost")
    assert out.turns_on.endswith(
        "Headroom: at 30 runs/s per host b met the objective and a did not (p95 over); a peak "
        "that high would turn it to b."
    )
