"""What a scenario is for: ``Scenario.is_performance``, ``fault_kinds``, ``is_reference`` —
derived from what the scenario contains, plus the tags docs/scenarios.md names, nothing more."""

from __future__ import annotations

import pandas as pd
import pytest

from bench.report.frames import RunData
from bench.report.from_folder import _scenarios
from bench.runner.plan import RunConfig, pick_reference
from scenarios import load_scenarios, parse_scenario

NEWCOMER = """\
name: newcomer
description: Four tools, one failing once, one needing confirmation, realistic latency.
tags: {tags}
user: Refund order A1 if it is eligible.
tools:
  - name: find_order
    description: Find an order.
    parameters: {{type: object, properties: {{id: {{type: string}}}}, required: [id]}}
    behavior: {{returns: {{id: A1, total: 30}}, latency_ms: 120, fail_times: 1}}
  - name: policy
    description: The refund policy.
    behavior: {{returns: "Refunds within 30 days.", latency_ms: 80}}
  - name: refund
    description: Refund an order.
    parameters: {{type: object, properties: {{id: {{type: string}}}}, required: [id]}}
    require_confirmation: true
    behavior: {{returns: {{refunded: true}}, latency_ms: 300}}
  - name: notify
    description: Tell the customer.
    behavior: {{returns: sent}}
script:
  - tool_calls: [{{name: find_order, args: {{id: A1}}}}]
  - tool_calls: [{{name: find_order, args: {{id: A1}}}}]
    retry: true
  - tool_calls: [{{name: policy}}, {{name: refund, args: {{id: A1}}}}]
  - tool_calls: [{{name: notify}}]
  - content: Order A1 is refunded.
"""


def newcomer(tags: str):
    return parse_scenario(NEWCOMER.format(tags=tags))


@pytest.mark.parametrize(
    ("tags", "fault_kinds", "performance"),
    [
        ("[]", {"tool"}, False),  # something fails: in the fault matrix, untagged or not
        ("[fault]", {"tool"}, False),
        ("[happy-path]", {"tool"}, True),  # both, as the author asks
        ("[happy-path, fault]", {"tool"}, True),
    ],
)
def test_a_newcomers_scenario_is_classified_by_its_content_and_its_tags(
    tags, fault_kinds, performance
):
    scenario = newcomer(tags)
    assert (scenario.fault_kinds, scenario.is_fault, scenario.is_performance) == (
        fault_kinds,
        True,
        performance,
    )
    assert scenario.fault_kind == "tool"


def test_the_fault_tag_alone_adds_to_the_fault_matrix_and_removes_nothing():
    text = NEWCOMER.format(tags="[fault]").replace(", fail_times: 1", "")
    text = text.replace(
        "  - tool_calls: [{name: find_order, args: {id: A1}}]\n    retry: true\n", ""
    )
    scenario = parse_scenario(text)
    assert (scenario.fault_kinds, scenario.fault_kind) == ({"guard"}, "guard")
    assert (scenario.is_fault, scenario.is_performance) == (True, True)
    untagged = parse_scenario(text.replace("tags: [fault]", "tags: []"))
    assert (untagged.fault_kinds, untagged.is_fault, untagged.is_performance) == (
        frozenset(),
        False,
        True,
    )


def test_every_builtin_scenario_is_classified_as_its_tags_said_before():
    library = load_scenarios()
    table = {name: (s.is_performance, s.fault_kind, s.is_reference) for name, s in library.items()}
    performance = {n for n, (p, _, _) in table.items() if p}
    assert performance == {n for n, s in library.items() if "happy-path" in s.tags}
    assert {n: k for n, (_, k, _) in table.items() if k} == {
        "confirmation_required": "guard",
        "huge_tool_result": "guard",
        "loop_detection": "guard",
        "malformed_tool_args": "guard",
        "max_steps": "guard",
        "unknown_tool": "guard",
        "tool_circuit_breaker": "tool",
        "tool_flaky": "tool",
        "tool_timeout": "tool",
        **{n: "llm" for n in library if n.startswith("llm_")},
    }
    assert {n for n, (_, k, _) in table.items() if k} == {
        n for n, s in library.items() if "fault" in s.tags
    }
    assert [n for n, (_, _, r) in table.items() if r] == ["customer_returns"]


def test_the_report_counts_a_scenario_that_is_both_in_both(tmp_path):
    (tmp_path / "newcomer.yaml").write_text(NEWCOMER.format(tags="[happy-path, fault]"))
    text = NEWCOMER.format(tags="[]").replace("name: newcomer", "name: plain")
    (tmp_path / "plain.yaml").write_text(text.replace(", fail_times: 1", "").replace(
        "  - tool_calls: [{name: find_order, args: {id: A1}}]\n    retry: true\n", ""
    ))  # fmt: skip
    names = {"newcomer", "plain"}
    frame = _scenarios({"config": {"scenario_dir": str(tmp_path)}}, names, [])
    shown = frame[["scenario", "fault", "performance", "fault_kind"]].astype(object)
    assert shown.where(shown.notna(), None).to_dict("records") == [
        {"scenario": "newcomer", "fault": True, "performance": True, "fault_kind": "tool"},
        {"scenario": "plain", "fault": False, "performance": True, "fault_kind": None},
    ]
    runs = pd.DataFrame(
        {"engine": ["raw", "raw"], "scenario": ["newcomer", "plain"], "status": ["completed"] * 2}
    )
    data = RunData(runs=runs, scenarios=frame)
    assert (data.fault_scenarios, data.happy_scenarios) == (["newcomer"], ["newcomer", "plain"])


def test_the_reference_scenario_is_the_one_tagged_reference():
    library = load_scenarios()
    config = RunConfig(engines=("raw",), scenarios=("single_tool", "customer_returns"))
    assert pick_reference(config, library) == "customer_returns"
    renamed = {
        "my_seed" if n == "customer_returns" else n: s for n, s in library.items()
    }  # the tag, not the name, makes it the reference
    config = RunConfig(engines=("raw",), scenarios=("single_tool", "my_seed"))
    assert pick_reference(config, renamed) == "my_seed"
