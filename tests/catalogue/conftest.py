"""One run of the whole catalogue (cells and programs) per test session: ~5 s."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bench.catalogue.run import run_catalogue


@pytest.fixture(scope="session")
def catalogue() -> dict[str, Any]:
    return asyncio.run(run_catalogue())
