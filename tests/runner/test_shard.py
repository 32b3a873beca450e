"""``run --shard I/N``: the split by scenario (every scenario on exactly one shard, about equal
expected time, the same split on every host) and the phases on one shard each."""

from __future__ import annotations

import pytest

from bench.errors import UsageError
from bench.runner.plan import RunConfig
from bench.runner.shard import Shard, phase_homes, shard_config, split, weights
from scenarios import load_scenarios

SCENARIOS = load_scenarios(None)
CONFIG = RunConfig(engines=("raw", "scheduler", "lc-create-agent"), scenarios=tuple(SCENARIOS))
PHASES = ("footprint", "versions", "ttft", "throughput", "load")


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8])
def test_every_scenario_is_on_exactly_one_shard_in_the_runs_order(count):
    shards = [shard_config(CONFIG, SCENARIOS, Shard(i, count)) for i in range(1, count + 1)]
    names = [name for s in shards for name in s.scenarios]
    assert sorted(names) == sorted(CONFIG.scenarios)
    assert len(names) == len(set(names))
    order = {name: i for i, name in enumerate(CONFIG.scenarios)}
    for s in shards:
        assert s.scenarios, "no shard is empty"
        assert list(s.scenarios) == sorted(s.scenarios, key=order.__getitem__)
        assert s.shard == f"{s.shard.split('/')[0]}/{count}"
        assert s.shard_scenarios == tuple(x.scenarios for x in shards)


@pytest.mark.parametrize("count", [2, 3, 5, 8])
def test_each_phase_runs_on_exactly_one_shard(count):
    shards = [shard_config(CONFIG, SCENARIOS, Shard(i, count)) for i in range(1, count + 1)]
    for phase in PHASES:
        assert sum(bool(getattr(s, phase)) for s in shards) == 1, phase
    assert {name: home for name, home in phase_homes(count).items()}["load"] == count


def test_a_phase_switched_off_stays_off_on_every_shard():
    config = RunConfig(engines=CONFIG.engines, scenarios=CONFIG.scenarios, load=False, ttft=False)
    for i in (1, 2):
        shard = shard_config(config, SCENARIOS, Shard(i, 2))
        assert not shard.load and not shard.ttft


def test_the_split_balances_expected_time_and_is_the_same_on_every_host():
    weight = weights(CONFIG, SCENARIOS)
    parts = split(CONFIG.scenarios, weight, 4)
    loads = [sum(weight[n] for n in part) for part in parts]
    # greedy longest-first: no part exceeds the mean by more than the heaviest scenario
    assert max(loads) - sum(loads) / len(loads) <= max(weight.values()) + 1e-9
    assert split(CONFIG.scenarios, dict(weight), 4) == parts


def test_a_split_of_toy_weights_is_the_greedy_one():
    assert split(("a", "b", "c", "d"), {"a": 5, "b": 4, "c": 3, "d": 3}, 2) == (
        ("a", "d"),
        ("b", "c"),
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2", "expected I/N"),
        ("a/b", "expected I/N"),
        ("0/2", "I must be between 1 and N"),
        ("3/2", "I must be between 1 and N"),
        ("1/0", "N must be between 1 and 64"),
        ("1/65", "N must be between 1 and 64"),
    ],
)
def test_a_bad_shard_is_a_usage_error_naming_the_reason(text, reason):
    with pytest.raises(UsageError, match=reason):
        Shard.parse(text)


def test_more_shards_than_scenarios_is_refused():
    with pytest.raises(UsageError, match=r"2 scenario.*cannot fill 3 shards"):
        split(("a", "b"), {}, 3)


def test_a_shard_config_round_trips_through_meta_json():
    shard = shard_config(CONFIG, SCENARIOS, Shard(2, 3))
    assert RunConfig.from_dict(shard.to_dict()) == shard
