"""The one worker protocol (``bench.runner.channel``): what a worker's code prints cannot
corrupt its messages, and a line that is not a message is named as such."""

from __future__ import annotations

import subprocess
import sys

from bench.runner.channel import GARBAGE, last_message, read_message
from tests.runner.conftest import ROOT

WORKER = """
from bench.runner.channel import Channel
print("before the claim")
channel = Channel.claim()
print("an engine's own print")
channel.send({"type": "row", "row": {"n": 1}})
print("{\\"type\\": \\"row\\", \\"row\\": \\"forged by a print\\"}")
try:
    1 / 0
except ZeroDivisionError:
    channel.fatal()
"""


def test_prints_go_to_stderr_and_the_messages_arrive_whole():
    done = subprocess.run(
        [sys.executable, "-c", WORKER], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "before the claim"  # before the claim, stdout was still stdout
    messages = [read_message(line) for line in lines[1:]]
    assert [m["type"] for m in messages] == ["row", "fatal"]
    assert messages[0]["row"] == {"n": 1}
    assert "ZeroDivisionError" in messages[1]["error"]
    assert "an engine's own print" in done.stderr and "forged by a print" in done.stderr
    assert last_message(done.stdout, "row") == messages[0]
    assert last_message(done.stdout, "done") is None


def test_a_line_that_is_not_a_message_is_garbage():
    undeclared = '{"type": "rows", "row": {}}'  # a type no worker sends
    incomplete = '{"type": "run", "phase": "timed", "row": {}}'  # a run without its index
    for line in ("not json", "[1, 2]", '{"no": "type"}', '{"type": 3}', undeclared, incomplete):
        assert read_message(line) == {"type": GARBAGE, "line": line}
    assert read_message('{"type": "ready", "footprint": {}}')["type"] == "ready"
