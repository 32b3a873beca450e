"""The probe's plans by engine (bench.probe.measure.plan_for, bench.probe.run.engine_plan)."""

from __future__ import annotations

import math

import pytest

from bench.engines.registry import ENGINE_NAMES, REGISTRY, headline_engines
from bench.probe.measure import BRIEF, FULL, JUDGED_SAMPLE_S, plan_named
from bench.probe.run import engine_plan
from bench.results.metrics import _spread


def test_the_judged_engines_get_the_full_plan_and_every_other_the_brief_one():
    judged = set(headline_engines(ENGINE_NAMES))
    assert judged == {
        "raw",
        "scheduler-plain",
        "scheduler",
        "lc-create-agent",
        "lc-create-agent-prod",
    }
    plans = {e: engine_plan(e) for e in ENGINE_NAMES}
    for engine, plan in plans.items():
        if engine not in judged:
            assert plan == "brief", engine
        elif REGISTRY[engine].family == "langchain":
            assert plan == "judged-samples", engine  # claim 2 judges their shares
        else:
            assert plan == "full", engine


def test_the_plans_time_what_they_say():
    assert plan_named("full") == FULL
    judged = plan_named("judged-samples")
    assert judged.sample_s == JUDGED_SAMPLE_S >= 1.0 and judged.timed == FULL.timed
    assert (BRIEF.timed, BRIEF.cprofile, BRIEF.count) == (0, 0, 1)
    assert BRIEF.sample_s == FULL.sample_s  # the shares of every engine come from sampling
    with pytest.raises(ValueError, match="unknown probe plan 'everything'"):
        plan_named("everything")


def test_one_counted_run_has_no_spread_rather_than_a_perfect_one():
    assert math.isnan(_spread([120]))
    assert _spread([120, 120]) == 0.0
    assert _spread([100, 110]) == pytest.approx(10 / 105)
