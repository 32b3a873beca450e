"""The merge's sums of figures only some shards have (the merge end to end, on shards of a
real local cluster: tests/cluster/test_cluster.py)."""

from __future__ import annotations

from bench.results.merge import _summed_outcome


def test_a_figure_only_some_shards_have_is_the_sum_of_those_that_have_it():
    """A shard without the load phase records ``load_s: None``; the load shard's seconds
    are the run's (a None first shard once crashed the merge of every run with a load
    phase)."""
    summed = _summed_outcome(
        [{"load_s": None, "timed_runs": 6}, {"load_s": 22.2, "timed_runs": 6, "x": None}]
    )
    assert summed == {"load_s": 22.2, "timed_runs": 12, "x": None}
