from __future__ import annotations

import pytest

from bench.probe import groups


@pytest.fixture
def sample_group(monkeypatch: pytest.MonkeyPatch) -> str:
    """Map ``tests.probe.sample_code`` to a group of its own (``sample``)."""
    monkeypatch.setattr(groups, "RULES", (("tests.probe.sample_code", "sample"), *groups.RULES))
    monkeypatch.setattr(groups, "_cache", {})
    return "sample"
