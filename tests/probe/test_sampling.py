"""The sampler: samples charged to the right group, the harness counted by subtree."""

from __future__ import annotations

from bench.probe.groups import HARNESS
from bench.probe.sampling import Sampler, standard_error
from tests.probe import sample_code


def test_a_sample_inside_a_harness_root_is_harness_and_its_leaf_is_kept(
    sample_group: str,
) -> None:
    sampler = Sampler(frozenset({sample_code.root.__code__}), mock_code=sample_code.root.__code__)
    sampler.sample(sample_code.root())  # a frame of inner(), called by the root
    sampler.sample(sample_code.inner())  # the same code, outside the root
    assert dict(sampler.groups) == {HARNESS: 1, sample_group: 1}
    assert dict(sampler.leaf) == {sample_group: 2}
    assert (sampler.samples, sampler.in_mock) == (2, 1)


def test_busy_code_collects_samples_while_active_only(sample_group: str) -> None:
    with Sampler(frozenset(), interval_s=0.001) as sampler:
        sample_code.spin(0.05)  # not active: no samples
        assert sampler.samples == 0
        sampler.active = True
        sample_code.spin(0.2)
        sampler.active = False
    # ~200 expected; a generous floor (a loaded machine delays signals, never drops most)
    assert sampler.samples >= 40
    assert sampler.groups[sample_group] >= 0.9 * sampler.samples


def test_standard_error_of_a_share() -> None:
    assert standard_error(0.5, 100) == 0.05
    assert standard_error(0.0, 100) == 0.0
