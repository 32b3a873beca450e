"""A load node's log folder (bench.runner.phases.load.nodes.LoadNode): a node on another host
has no run folder, so its workers log to a temporary one, which must not outlive the node
unless a log in it has something to say."""

from __future__ import annotations

import shutil

from bench.runner.phases.load.nodes import LoadNode


def test_a_nodes_empty_temporary_log_folder_goes_with_it():
    node = LoadNode()
    folder = node.log_dir
    assert folder.is_dir() and folder.name.startswith("schedbench-load-")
    node.shutdown()
    assert not folder.exists()


def test_a_temporary_log_folder_with_a_log_to_read_is_kept():
    node = LoadNode()
    log = node.log_dir / "raw.load.1.log"
    log.write_text("Traceback (most recent call last): ...\n")
    try:
        node.shutdown()
        assert log.read_text().startswith("Traceback")
    finally:
        shutil.rmtree(node.log_dir, ignore_errors=True)


def test_a_given_log_folder_is_the_runs_and_stays(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    node = LoadNode(str(folder))
    node.shutdown()
    assert folder.is_dir()
