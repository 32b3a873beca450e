"""A run that allocates without limit: its row is an error, the machine and the run survive."""

from __future__ import annotations

import json

from tests.hostile.conftest import good, schedbench

HOG = """\
name: hog
description: A tool (trusted code) that allocates memory until it fails.
user: Use all the memory.
tools:
  - name: hog
    description: Allocates.
    handler: hogs:hog
script:
  - tool_calls: [{name: hog}]
  - content: done
expect:
  status: completed
"""


HOGS = """\
import resource


def hog(**_):
    \"\"\"Allocate (and touch) memory 32 MiB at a time until an allocation fails.\"\"\"
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        raise RuntimeError("no memory cap in force: refusing to eat the machine")
    chunks = []
    while len(chunks) < 1024:  # 32 GiB: far past the cap
        chunks.append(b"x" * (32 * 2**20))
    return "allocated %d MiB" % (len(chunks) * 32)
"""


def test_a_run_past_the_memory_cap_is_an_error_row_and_the_rest_carries_on(folder, tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "hogs.py").write_text(HOGS)
    (folder / "hog.yaml").write_text(HOG)
    (folder / "fine.yaml").write_text(good("fine"))
    out = tmp_path / "out"
    done = schedbench(
        "run", "--scenario-dir", str(folder), "--handlers-from", str(code),
        "--engines", "raw,scheduler", "--repeat", "2", "--rounds", "1", "--warmup", "0",
        "--no-throughput", "--no-footprint", "--no-ttft", "--out", str(out),
        env={"SCHEDBENCH_WORKER_MEMORY_MB": "256"},
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    outcomes = sorted(
        (r["engine"], r["scenario"], r["repeat"], r["status"], r["termination"]) for r in rows
    )
    assert outcomes == [
        ("raw", "fine", 0, "completed", "stop"),
        ("raw", "fine", 1, "completed", "stop"),
        ("raw", "hog", 0, "error", "memory_limit"),
        ("raw", "hog", 1, "error", "memory_limit"),
        ("scheduler", "fine", 0, "completed", "stop"),
        ("scheduler", "fine", 1, "completed", "stop"),
        ("scheduler", "hog", 0, "error", "memory_limit"),
        ("scheduler", "hog", 1, "error", "memory_limit"),
    ]
    hog = next(r for r in rows if r["scenario"] == "hog")
    assert hog["error"] == (
        "MemoryError in a tool: the run needed more than the worker's memory cap (256 MiB above "
        "its size when ready; SCHEDBENCH_WORKER_MEMORY_MB sets it)"
    )
    assert not any(r.get("crashed") for r in rows)  # the workers themselves survived
    workers = [
        json.loads(line)
        for line in (out / "footprint.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] == "worker"
    ]
    assert {w["memory_cap_mb"] for w in workers} == {256}
