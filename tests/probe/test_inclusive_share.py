"""Claim 2 on inclusive time (bench.results.metrics.inclusive_callback_share)."""

from __future__ import annotations

import json

import pytest

from bench.results.metrics import inclusive_callback_share
from bench.results.rows import ProfileRow

CB, TR, RUN = "langchain_core.callbacks", "langchain_core.tracers", "langchain_core.runnables"


def row(stacks, scenario="s") -> ProfileRow:
    n = sum(c for _, _, c in stacks)
    groups: dict[str, int] = {}
    for group, _, count in stacks:
        groups[group] = groups.get(group, 0) + count
    record = {"engine": "e", "scenario": scenario, "kind": "scenario", "status": "ok",
              "samples": n, "samples_by_group": groups, "stack_samples": stacks}  # fmt: skip
    return ProfileRow.model_validate_json(json.dumps(record))  # as profile.jsonl is read


def test_a_sample_counts_when_a_callback_is_anywhere_on_its_stack_or_a_runnable_is_its_own():
    stacks = [
        ["pydantic", [CB], 20],  # a callback manager validating: inclusive, not self time
        [CB, [CB], 10],  # the manager itself
        [RUN, [], 10],  # a runnable's own frame
        ["openai", [], 50],  # the SDK under a runnable: not the claim's
        ["harness", [], 10],  # the mock (the sampler clears the stack groups there)
    ]
    share, error = inclusive_callback_share([row(stacks)])
    assert share == pytest.approx(0.40)
    assert error == pytest.approx((0.4 * 0.6 / 100) ** 0.5)
    # scenarios weigh once each; a probe without stack samples has no inclusive share
    other = row([[TR, [TR], 10], ["openai", [], 90]], scenario="t")
    assert inclusive_callback_share([row(stacks), other])[0] == pytest.approx(0.25)
    assert inclusive_callback_share([row([])]) is None
