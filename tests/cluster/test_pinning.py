"""A shard measures the launcher's code: ``run_shard`` refuses a node whose checkout is not the
pinned one, and flags a shard during which the checkout moved. The node here is a throwaway
git repository whose ``bench/cli.py`` stands in for ``schedbench`` (``python -m`` imports it
from the shard's working directory)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from bench.runner.cluster import code_fingerprint, run_shard

FAKE_CLI = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    out = Path(sys.argv[sys.argv.index("--out") + 1])
    out.mkdir(parents=True)
    (out / "runs.jsonl").write_text("")
    if "--edit" in sys.argv:  # the checkout moves while the shard runs
        Path("code.txt").write_text("edited mid-shard\\n")
    """
)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def node(tmp_path: Path) -> Path:
    root = tmp_path / "node"
    (root / "bench").mkdir(parents=True)
    (root / "bench" / "__init__.py").write_text("")
    (root / "bench" / "cli.py").write_text(FAKE_CLI)
    (root / "code.txt").write_text("v1\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "v1")
    return root


def test_the_fingerprint_is_head_plus_the_uncommitted_changes(node):
    head = git(node, "rev-parse", "HEAD")
    assert code_fingerprint(node) == head
    (node / "code.txt").write_text("v2\n")
    edited = code_fingerprint(node)
    assert edited.startswith(head + "+") and edited != head
    (node / "code.txt").write_text("v3\n")
    assert code_fingerprint(node) not in (head, edited)
    (node / "untracked.txt").write_text("not code the shard runs\n")
    (node / "code.txt").write_text("v1\n")
    assert code_fingerprint(node) == head


def test_a_node_on_other_code_is_refused_before_it_runs(node):
    outcome = run_shard(1, 2, ["--quick"], str(node), pinned="0" * 40)
    assert outcome.returncode == 2 and outcome.archive == b""
    assert "at the shard's start" in outcome.moved and "0" * 40 in outcome.moved


def test_a_shard_on_the_pinned_code_runs_and_is_not_flagged(node):
    outcome = run_shard(1, 2, ["--quick"], str(node), pinned=code_fingerprint(node))
    assert outcome.returncode == 0, outcome.stderr_tail
    assert outcome.archive and outcome.moved == ""


def test_a_checkout_that_moves_during_the_shard_is_flagged(node):
    outcome = run_shard(1, 2, ["--edit"], str(node), pinned=code_fingerprint(node))
    assert outcome.returncode == 0, outcome.stderr_tail
    assert outcome.archive, "the shard's folder still comes back (kept, not merged)"
    assert "at the shard's end" in outcome.moved
