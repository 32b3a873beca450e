"""Fixtures of the report's tests: synthetic runs, and one full report built from them."""

from __future__ import annotations

import pytest

from bench.report.build import Report, build_report
from tests.report.synth import Params, make


@pytest.fixture(scope="session")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """A full report (charts included) of synthetic results with hostile text everywhere."""
    out = tmp_path_factory.mktemp("hostile-report")
    return build_report(make(Params(hostile=True)), out)
