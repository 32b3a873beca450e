"""A faithful recording: what the agent's tools did reaches the scenario (issue 26).

The agent under recording is the scheduler with two real tools, wrapped by the documented
``ToolObserver``: ``query_order`` takes 300 ms and fails on its first call, ``issue_refund``
needs a confirmation, which the supervisor refuses. The upstream is the mock playing
``refund_flaky`` — which is also the *live* scenario: the same tools, failure, latency and
refusal, written by hand. Recorded, then replayed, the scenario must give every engine the
outcome the live scenario gives it: the robustness differences between engines survive.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.engines import RunContext, create_engine
from bench.referee import MockLLM
from bench.referee.server import start_server_process
from bench.referee.transport import BASE_URL
from bench.traffic import ToolRun, build_scenarios, read_traffic
from bench.traffic.observe import ToolObserver
from bench.traffic.proxy import WARMED_UP, create_app
from bench.traffic.session import RecordingSession
from scenarios import Scenario, load_scenario, parse_scenario
from tests.traffic.conftest import recording_proxy, serve_in_thread, warm_up

LIVE = """\
name: refund_flaky
description: The order service fails once; the refund needs a supervisor, who says no.
tags: [fault]
system_prompt: You are a support agent. Refunds need a supervisor's approval.
user: Please refund order A123, the shoes arrived damaged.
tools:
  - name: query_order
    description: Look up an order by its id.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
    behavior:
      returns: {order_id: A123, status: delivered, total_eur: 89.0}
      fail_times: 1
      fail_message: "RuntimeError: order service unavailable"
      latency_ms: 300
  - name: issue_refund
    description: Refund an order to the original payment method. Irreversible.
    parameters:
      type: object
      properties: {order_id: {type: string}, amount_eur: {type: number}}
      required: [order_id, amount_eur]
    behavior:
      returns: {refund_id: RF-5521, status: issued}
    require_confirmation: true
    approval: deny
script:
  - tool_calls: [{name: query_order, args: {order_id: A123}, id: call_q1}]
  - tool_calls: [{name: query_order, args: {order_id: A123}, id: call_q2}]
    retry: true
  - tool_calls: [{name: issue_refund, args: {order_id: A123, amount_eur: 89.0}, id: call_r1}]
  - content: I am sorry, the refund was not approved, so no refund has been issued.
expect:
  status: completed
  forbidden_tools: [issue_refund]
  final_contains: no refund has been issued
"""
MODEL = "scenario/refund_flaky"
ORDER = {"order_id": "A123", "status": "delivered", "total_eur": 89.0}
ENGINES = ("raw", "scheduler", "lc-create-agent", "lc-create-agent-prod")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Scenario]:
    directory = tmp_path_factory.mktemp("live")
    (directory / "refund_flaky.yaml").write_text(LIVE, encoding="utf-8")
    return directory, parse_scenario(LIVE)


async def run_agent(base_url: str) -> tuple[str, list[str]]:
    """The scheduler with its real tools, observed; (its answer, the refunds it issued)."""
    from scheduler import AgentConfig, LightweightAgent, OpenAIChatClient, ToolSpec

    observer = ToolObserver(base_url)
    calls: list[str] = []
    issued: list[str] = []

    def query_order(order_id: str) -> str:
        time.sleep(0.3)
        calls.append(order_id)
        if len(calls) == 1:
            raise RuntimeError("order service unavailable")
        return json.dumps(ORDER)

    def issue_refund(order_id: str, amount_eur: float) -> str:
        issued.append(order_id)
        return json.dumps({"refund_id": "RF-1", "status": "issued"})

    def supervisor(*, call: Any, arguments: dict[str, Any], state: Any) -> bool:
        observer.denied(call.name, arguments)  # the documented hook for a refusal
        return False

    llm = OpenAIChatClient(base_url=base_url, model=MODEL, api_key="sk-test")
    agent = LightweightAgent(llm, AgentConfig(system_prompt="Refunds need approval."))
    agent.register_tools(
        [
            ToolSpec(
                name="query_order",
                description="Look up an order by its id.",
                parameters={
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                },
                handler=observer.wrap(query_order),
            ),
            ToolSpec(
                name="issue_refund",
                description="Refund an order to the original payment method. Irreversible.",
                parameters={
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string"},
                        "amount_eur": {"type": "number"},
                    },
                    "required": ["order_id", "amount_eur"],
                },
                handler=observer.wrap(issue_refund, require_confirmation=True),
                require_confirmation=True,
            ),
        ]
    )
    agent.set_approver(supervisor)
    try:
        result = await agent.run("Please refund order A123, the shoes arrived damaged.")
    finally:
        await llm.aclose()
    assert result.status.value == "completed", result
    return result.content, issued


@pytest.fixture(scope="module")
def recorded(
    live: tuple[Path, Scenario], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Scenario]:
    source, _ = live
    directory = tmp_path_factory.mktemp("recorded")
    with start_server_process(source) as upstream:
        warm_up(upstream.base_url, MODEL)
        with recording_proxy(upstream.base_url, directory, "refund", redact=()) as proxy:
            answer, issued = asyncio.run(run_agent(proxy.url))
    assert (answer, issued) == (parse_scenario(LIVE).script[-1].content, [])
    return directory, load_scenario(directory / "refund.yaml")


def test_the_tools_failure_latency_and_refusal_reach_the_scenario(recorded: Any) -> None:
    _, scenario = recorded
    query, refund = scenario.tools
    latency = query.behavior.latency_ms
    assert 300 <= latency < 3000  # measured at the tool: its 300 ms sleep and a little more
    assert query.model_dump(exclude={"description", "parameters"}) == {
        "name": "query_order",
        "behavior": {
            "returns": ORDER,
            "raises": None,
            "hangs": False,
            "latency_ms": latency,
            "fail_times": 1,
            "fail_message": "RuntimeError: order service unavailable",
            "fail_rate": 0.0,
            "returns_size_kb": None,
            "results": [],
        },
        "handler": None,
        "require_confirmation": False,
        "approval": "approve",
    }
    # never ran: no result is known, the refusal is
    assert (refund.require_confirmation, refund.approval, refund.behavior.returns) == (
        True,
        "deny",
        None,
    )
    assert scenario.tags == ["recorded", "fault"]
    assert [(t.retry, [c.name for c in t.tool_calls]) for t in scenario.script] == [
        (False, ["query_order"]),
        (True, ["query_order"]),  # the model's retry of the failed call
        (False, ["issue_refund"]),
        (False, []),
    ]
    assert scenario.expect.forbidden_tools == ["issue_refund"]
    assert (scenario.expect.llm_calls, scenario.expect.tools) == (4, ["query_order"] * 2)


def test_the_log_with_its_tool_runs_imports_to_the_same_scenario(recorded: Any) -> None:
    directory, scenario = recorded
    traffic = read_traffic(directory / "refund.jsonl")
    assert [(r.name, r.outcome, r.error) for r in traffic.tool_runs] == [
        ("query_order", "raised", "RuntimeError: order service unavailable"),
        ("query_order", "returned", None),
        ("issue_refund", "denied", None),
    ]
    built = build_scenarios(traffic.exchanges, "refund", traffic.tool_runs)
    assert built.errors == []
    assert [s.model_dump() for s in built.scenarios] == [scenario.model_dump()]


def outcome(record: Any) -> tuple[Any, ...]:
    return (
        str(record.status),
        record.termination,
        [t.name for t in record.tools],
        record.final_answer,
    )


async def run_on(engine_name: str, scenario: Scenario) -> tuple[Any, ...]:
    mock = MockLLM(scenarios={scenario.name: scenario})
    engine = create_engine(engine_name)
    try:
        ctx = RunContext(scenario=scenario, mock=mock, base_url=BASE_URL)
        return outcome(await engine.run(await engine.prepare(ctx)))
    finally:
        await engine.aclose()


async def test_the_replay_gives_each_engine_the_live_outcome(live: Any, recorded: Any) -> None:
    _, live_scenario = live
    _, replayed = recorded
    outcomes = {
        name: (await run_on(name, live_scenario), await run_on(name, replayed)) for name in ENGINES
    }
    assert {name: live for name, (live, _) in outcomes.items()} == {
        name: again for name, (_, again) in outcomes.items()
    }
    # and the engines do differ, as they do live
    final = live_scenario.script[-1].content
    assert {name: live[:3] for name, (live, _) in outcomes.items()} == {
        # no confirmation gate: the refund runs unapproved
        "raw": ("completed", "stop", ["query_order", "query_order", "issue_refund"]),
        "scheduler": ("completed", "stop", ["query_order", "query_order"]),
        # the tool's exception escapes create_agent
        "lc-create-agent": ("failed", "tool_error", ["query_order"]),
        # ToolRetryMiddleware retries inside the tool node; HumanInTheLoop refuses
        "lc-create-agent-prod": ("completed", "stop", ["query_order", "query_order"]),
    }
    assert outcomes["scheduler"][1][3] == final


def test_a_fresh_mock_upstream_is_warmed_before_the_first_recorded_call(
    live: Any, tmp_path: Path
) -> None:
    """Its first answer pays for loading its tokenizer: not the model's latency. A real
    provider (no schedbench models listed) gets only the connection-opening GET."""
    source, _ = live
    events: list[str] = []
    session = RecordingSession(tmp_path, "warm", on_event=events.append)
    with start_server_process(source) as upstream:
        server, thread, _ = serve_in_thread(create_app(upstream.base_url, session))
        server.should_exit = True
        thread.join(timeout=30)
    assert (events, session.exchanges) == ([WARMED_UP], [])
    other: list[str] = []
    session = RecordingSession(tmp_path, "other", on_event=other.append)
    server, thread, _ = serve_in_thread(create_app("http://127.0.0.1:9/v1", session))
    server.should_exit = True
    thread.join(timeout=30)
    assert other == []


def test_tool_runs_are_checked_and_refused_from_a_browser(tmp_path: Path) -> None:
    with recording_proxy("http://127.0.0.1:9/v1", tmp_path, "runs", redact=()) as proxy:
        origin = proxy.url.removesuffix("/v1")
        bad = httpx.post(f"{origin}/_schedbench/tools", json={"name": "q", "outcome": "maybe"})
        browser = httpx.post(
            f"{origin}/_schedbench/tools",
            json={"name": "q", "outcome": "returned"},
            headers={"Origin": "https://evil.example"},
        )
        good = httpx.post(
            f"{origin}/_schedbench/tools",
            json={"name": "q", "args": {"x": 1}, "outcome": "returned", "duration_ms": 5.5},
        )
    assert (bad.status_code, bad.json()["error"]["message"]) == (
        400,
        "schedbench record: a tool run: outcome: Input should be 'returned', 'raised' or 'denied'",
    )
    assert browser.status_code == 403
    assert good.status_code == 204
    assert proxy.session.tool_runs == [
        ToolRun(name="q", args={"x": 1}, outcome="returned", duration_ms=5.5)
    ]


async def test_the_observer_keeps_a_tool_as_it_was_and_never_breaks_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import inspect

    async def lookup(order_id: str, verbose: bool = False) -> str:
        """Look up an order."""
        if order_id == "bad":
            raise ValueError("no such order")
        return order_id.upper()

    with recording_proxy("http://127.0.0.1:9/v1", tmp_path, "obs", redact=()) as proxy:
        observer = ToolObserver(proxy.url)
        wrapped = observer.wrap(lookup, name="lookup_order")
        assert (wrapped.__name__, wrapped.__doc__) == ("lookup", "Look up an order.")
        assert inspect.signature(wrapped) == inspect.signature(lookup)
        assert inspect.iscoroutinefunction(wrapped)
        assert await wrapped("a1") == "A1"
        with pytest.raises(ValueError, match="no such order"):
            await wrapped(order_id="bad", verbose=True)
    runs = [(r.name, r.args, r.outcome, r.error) for r in proxy.session.tool_runs]
    assert runs == [
        ("lookup_order", {"order_id": "a1"}, "returned", None),
        (
            "lookup_order",
            {"order_id": "bad", "verbose": True},
            "raised",
            "ValueError: no such order",
        ),
    ]
    # no proxy listening: the tool works all the same, and one warning says why
    gone = ToolObserver(proxy.url).wrap(lookup)
    assert [await gone("x"), await gone("y")] == ["X", "Y"]
    warnings = [r.getMessage() for r in caplog.records if r.name == "schedbench.observe"]
    assert len(warnings) == 1 and warnings[0].startswith("cannot report tool runs to ")
