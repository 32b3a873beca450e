"""Recording real agents through the proxy, end to end, all on loopback.

The scheduler (JSON and SSE) and LangChain's ``create_agent`` (SSE) run against the proxy in
front of the mock playing ``src_orders``. What they record must be a scenario that validates,
holds what the model said byte for byte and what the real tools returned, replays on every
engine with the recorded answers, and carries no secret of the traffic.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench.commands.scenarios import unknown_engines
from bench.engines import MAIN_ENGINES, RunContext, create_engine
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL
from bench.traffic import MASK, build_scenarios, read_log
from scenarios import (
    Expect,
    Limits,
    RecordedResult,
    Scenario,
    ScriptToolCall,
    ToolBehavior,
    ToolDef,
    Turn,
)
from scenarios.schema import ExpectOverride
from tests.engines.test_every_scenario import args_problem, check
from tests.traffic.conftest import (
    FINAL,
    SECRETS,
    SYSTEM_PROMPT,
    TOOL_SCHEMAS,
    lookup_order,
    masked,
    record,
    track_parcel,
)


def expected(name: str) -> Scenario:
    """What every recording of src_orders must give (timings aside)."""
    (lookup_description, lookup_schema), (track_description, track_schema) = TOOL_SCHEMAS.values()
    return Scenario(
        name=name,
        description="Recorded traffic of scenario/src_orders: 3 LLM calls, 3 tool calls. "
        "Play its measured timings with --latency recorded.",
        tags=["recorded"],
        system_prompt=SYSTEM_PROMPT,
        user=f"Where is my order A123? My API key is {MASK}, if you need it.",
        tools=[
            ToolDef(
                name="lookup_order",
                description=lookup_description,
                parameters=lookup_schema,
                behavior=ToolBehavior(returns=json.loads(masked(lookup_order("A123")))),
            ),
            ToolDef(
                name="track_parcel",
                description=track_description,
                parameters=track_schema,
                behavior=ToolBehavior(
                    results=[
                        RecordedResult(
                            args={"parcel": "PX-9", "verbose": False},
                            returns=track_parcel("PX-9", False),
                        ),
                        RecordedResult(args={"parcel": "PX-10"}, returns=track_parcel("PX-10")),
                    ]
                ),
            ),
        ],
        script=[
            Turn(
                content="Let me look that up.",
                tool_calls=[
                    ScriptToolCall(
                        name="lookup_order",
                        args={"order_id": "A123"},
                        recorded_arguments='{"order_id":"A123"}',
                        id="call_A",
                    )
                ],
            ),
            Turn(
                tool_calls=[
                    ScriptToolCall(
                        name="track_parcel",
                        args={"parcel": "PX-9", "verbose": False},
                        recorded_arguments='{"parcel": "PX-9",  "verbose": false}',
                        id="call_B",
                    ),
                    ScriptToolCall(name="track_parcel", args={"parcel": "PX-10"}, id="call_C"),
                ]
            ),
            Turn(content=FINAL),
        ],
        limits=Limits(),
        expect=Expect(
            status="completed",
            llm_calls=3,
            tool_calls=3,
            tools=["lookup_order", "track_parcel", "track_parcel"],
            final_contains="Order A123 ships as PX-9 and PX-10; both arrive on Friday. Your session",
            engines={
                "lc-react": ExpectOverride(
                    reason="ReAct text carries one action per turn: parallel calls take a turn "
                    "each.",
                    llm_calls=4,
                )
            },
        ),
    )


def without_timing(scenario: Scenario) -> dict[str, Any]:
    data = scenario.model_dump()
    for turn in data["script"]:
        turn.pop("timing")
    return data


AGENTS = ("scheduler", "scheduler-stream", "create_agent")


@pytest.fixture(scope="module")
def recordings(upstream: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each agent recorded once into its own folder: {agent: (folder, scenario)}."""
    import asyncio

    out = {}
    for agent in AGENTS:
        directory = tmp_path_factory.mktemp(agent.replace("-", "_"))
        name = agent.replace("-", "_")
        scenario = asyncio.run(record(agent, upstream, directory, name))
        out[agent] = (directory, scenario)
    return out


@pytest.mark.parametrize("agent", AGENTS)
def test_a_recording_is_the_scenario_of_what_happened(agent: str, recordings: dict) -> None:
    directory, scenario = recordings[agent]
    name = agent.replace("-", "_")
    assert without_timing(scenario) == without_timing(expected(name))
    assert unknown_engines(scenario) == []
    streamed = agent != "scheduler"
    for turn in scenario.script:
        timing = turn.timing
        assert timing is not None and timing.stream is streamed
        assert timing.prompt_tokens is not None and timing.completion_tokens is not None
        # the upstream's ttft profile: 100 ms ± 10 % to the first token (plus a chunk)
        assert 90.0 <= (timing.ttft_ms if streamed else timing.total_ms) < 2000
        if streamed:
            assert len(timing.gaps_ms) >= 1
            assert timing.ttft_ms + sum(timing.gaps_ms) <= timing.total_ms + 0.01
    assert sorted(p.name for p in directory.iterdir()) == [f"{name}.jsonl", f"{name}.yaml"]


@pytest.mark.parametrize("agent", AGENTS)
def test_no_secret_of_the_traffic_reaches_the_folder(agent: str, recordings: dict) -> None:
    directory, _ = recordings[agent]
    for path in directory.rglob("*"):
        data = path.read_bytes()
        assert [s for s in SECRETS if s.encode() in data] == [], path


@pytest.mark.parametrize("agent", AGENTS)
def test_the_proxy_log_imports_to_the_same_scenario(agent: str, recordings: dict) -> None:
    directory, scenario = recordings[agent]
    name = agent.replace("-", "_")
    built = build_scenarios(read_log(directory / f"{name}.jsonl"), name)
    assert (built.notes, built.errors) == ([], [])
    assert [s.model_dump() for s in built.scenarios] == [scenario.model_dump()]


@pytest.mark.parametrize("agent", AGENTS)
def test_the_replay_answers_byte_for_byte(agent: str, recordings: dict) -> None:
    """The mock sends the recorded content and argument strings, JSON and SSE alike."""
    _, scenario = recordings[agent]
    mock = MockLLM(scenarios={scenario.name: scenario}, record=False)
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    for index, turn in enumerate(scenario.script):
        messages = [{"role": "user", "content": "?"}] + [{"role": "assistant"}] * index
        body = {"model": f"scenario/{scenario.name}", "messages": messages, "tools": tools}
        message = json.loads(mock.handle(json.dumps(body).encode()).body)["choices"][0]["message"]
        streamed = mock.handle(json.dumps({**body, "stream": True}).encode()).chunks
        deltas = [
            json.loads(c[6:])["choices"][0]["delta"]
            for c in streamed
            if c.startswith(b"data: {") and b'"choices":[{' in c
        ]
        sent = [
            (c["id"], c["function"]["name"], c["function"]["arguments"])
            for c in message.get("tool_calls") or ()
        ]
        recorded = [
            (c.id, c.name, c.recorded_arguments or json.dumps(c.args)) for c in turn.tool_calls
        ]
        assert (message["content"], sent) == (turn.content, recorded)
        joined: dict[int, str] = {}
        for delta in deltas:
            for fragment in delta.get("tool_calls") or ():
                joined[fragment["index"]] = joined.get(fragment["index"], "") + (
                    fragment["function"].get("arguments") or ""
                )
        content = "".join(d.get("content") or "" for d in deltas) or None
        assert (content, list(joined.values())) == (turn.content, [a for _, _, a in recorded])


@pytest.mark.parametrize("agent", AGENTS)
async def test_a_recording_replays_on_every_engine(agent: str, recordings: dict) -> None:
    _, scenario = recordings[agent]
    mock = MockLLM(scenarios={scenario.name: scenario})
    outcomes = {}
    for name in MAIN_ENGINES:
        engine = create_engine(name)
        try:
            mock.reset()
            ctx = RunContext(scenario=scenario, mock=mock, base_url=BASE_URL)
            record = await engine.run(await engine.prepare(ctx))
        finally:
            await engine.aclose()
        tool_messages = [
            m["content"]
            for body in record.requests
            for m in body["messages"]
            if m["role"] == "tool"
        ]
        outcomes[name] = (
            check(record, scenario),
            args_problem(record, scenario),
            record.final_answer,
            # the tools answered what the real ones did (ReAct reads them as text)
            name == "lc-react"
            or tool_messages[-3:]
            == [
                masked(lookup_order("A123")),
                track_parcel("PX-9", False),
                track_parcel("PX-10"),
            ],
        )
    assert outcomes == {name: ([], None, FINAL, True) for name in MAIN_ENGINES}
