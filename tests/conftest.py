"""Test-wide guards: no network but loopback, LangSmith off."""

from __future__ import annotations

import ipaddress
import os
import socket

import pytest

from bench.model.caches import ENV_VARIABLE, OFF
from bench.runner.offline import offline_env

offline_env(os.environ)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


class NetworkBlocked(AssertionError):
    """A test tried to reach something other than loopback."""


def _check(address: object) -> None:
    if isinstance(address, tuple) and address:
        host = address[0]
        try:
            if ipaddress.ip_address(host).is_loopback:
                return
        except ValueError:
            if host == "localhost":
                return
        raise NetworkBlocked(f"tests may only connect to loopback, not {address!r}")


def _guarded_connect(self: socket.socket, address: object) -> None:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: object) -> int:
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _check(address)
    return _real_connect_ex(self, address)


@pytest.fixture(autouse=True, scope="session")
def loopback_only():
    """Fail any connection that is not to 127.0.0.0/8 or ::1."""
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex


# No test reads or writes a results cache (the user's least of all): every run a test makes
# measures its outcome cells; the cache's own tests take one (``results_cache``)
os.environ[ENV_VARIABLE] = OFF


@pytest.fixture
def results_cache(tmp_path, monkeypatch):
    """An empty results cache of this test's own (``bench.runner.cache``), for the runs it
    starts."""
    directory = tmp_path / "results-cache"
    monkeypatch.setenv(ENV_VARIABLE, str(directory))
    return directory


# The test tiers: `make test-fast` runs the quick in-process tier (`-m "not subprocess and
# not peers and not slow"`), `make test` everything. A module's tier is what it starts, not how long it took:
# `peers`: the peer frameworks' and older LangChain lines' own environments (.envs/);
# `subprocess`: schedbench runs, workers, servers, probes or a browser in other processes;
# `slow`: every engine played through whole scenarios, scripted timeouts and back-offs
# included (test_every_scenario's 480 cells and test_langchain_rebuild together: 109 s of
# wall time for 17 s of CPU, measured alone on 2 cores).
PEER_MODULES = (
    "tests/envs/",
    "tests/engines/test_peers.py",
    "tests/engines/test_peer_fairness.py",
    "tests/engines/test_peer_errors.py",
    "tests/engines/test_stack_probe.py",
)
SLOW_MODULES = (
    "tests/debuggability/test_capture.py",
    "tests/engines/test_every_scenario.py",
    "tests/engines/test_langchain_rebuild.py",
    "tests/engines/test_repeated_runs.py",
)
SUBPROCESS_MODULES = (
    "tests/catalogue/",
    "tests/cluster/",
    "tests/debuggability/test_debug_score_cli.py",
    "tests/debuggability/test_parallel.py",
    "tests/debuggability/test_trace_cli.py",
    "tests/engines/test_imports.py",
    "tests/engines/test_langchain_prod.py",
    "tests/hostile/",
    "tests/multimodel/test_check.py",
    "tests/probe/test_cli.py",
    "tests/referee/test_server.py",
    "tests/referee/test_anthropic.py",
    "tests/report/test_charts.py",
    "tests/report/test_html.py",
    "tests/report/test_load.py",
    "tests/runner/test_crash_and_resume.py",
    "tests/runner/test_load_phase.py",
    "tests/runner/test_outcome_phase.py",
    "tests/runner/test_prespawn.py",
    "tests/runner/test_resume_books.py",
    "tests/runner/test_run_cli.py",
    "tests/runner/test_ttft_phase.py",
    "tests/scenarios/test_docs_example.py",
    "tests/scenarios/test_validation_errors.py",
    "tests/test_metadata.py",
    "tests/traffic/",
    "tests/workload/test_decide_cli.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    for item in items:
        where = item.path.relative_to(root).as_posix()
        if where.startswith(PEER_MODULES):
            item.add_marker(pytest.mark.peers)
        if where.startswith(SUBPROCESS_MODULES):
            item.add_marker(pytest.mark.subprocess)
        if where.startswith(SLOW_MODULES):
            item.add_marker(pytest.mark.slow)
