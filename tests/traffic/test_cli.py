"""``schedbench record`` and ``schedbench scenarios import`` from the command line."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import build_parser, main
from bench.referee.latency import PROFILE_NAMES
from bench.traffic.proxy import WARMED_UP
from tests.traffic.conftest import REDACTED_FIELD, SECRETS, run_scheduler


def no_secrets(directory: Path) -> list[str]:
    return [
        f"{p.name}: {s}"
        for p in directory.rglob("*")
        for s in SECRETS
        if s.encode() in p.read_bytes()
    ]


async def test_record_runs_until_interrupted_and_writes_a_valid_scenario(
    upstream: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "My Agent"
    command = [
        sys.executable,
        "-m",
        "bench.cli",
        "record",
        "--upstream",
        upstream,
        "--port",
        "0",
        "--out",
        str(out),
        "--redact",
        REDACTED_FIELD,
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        intro = process.stdout.readline().strip()
        ready = process.stdout.readline().strip()
        assert ready.startswith("schedbench record: proxy listening on http://127.0.0.1:"), ready
        await run_scheduler(ready.rsplit(" ", 1)[1], stream=True)
        process.send_signal(signal.SIGINT)
        rest, errors = process.communicate(timeout=30)
    finally:
        process.kill()
    assert (process.returncode, errors) == (0, "")
    assert intro == f"recording into {out}/my_agent.yaml (log: my_agent.jsonl); Ctrl-C to stop"
    warmed, *lines = rest.splitlines()
    assert warmed == WARMED_UP  # the upstream is the mock
    assert [line.split(",")[0] for line in lines[:3]] == [
        f"exchange {i}: HTTP 200" for i in (1, 2, 3)
    ]
    assert lines[3:] == [
        f"wrote {out}/my_agent.yaml (3 LLM calls, 3 tool calls)",
        f"next: schedbench scenarios validate --scenario-dir {out}",
    ]
    assert no_secrets(out) == []
    assert main(["scenarios", "validate", "--scenario-dir", str(out)]) == 0
    assert capsys.readouterr().out == "1 valid, 0 invalid (1 files)\n"

    # the same log imports to the same scenario, into another folder
    again = tmp_path / "again"
    assert (
        main(
            [
                "scenarios",
                "import",
                str(out / "my_agent.jsonl"),
                "--name",
                "my_agent",
                "--scenario-dir",
                str(again),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == (
        f"wrote {again}/my_agent.yaml (3 LLM calls, 3 tool calls)\n"
        # what the log holds and a scenario does not is said
        f"{out}/my_agent.jsonl:1-3: request.temperature not replayed (each engine sends its own)\n"
        f"next: schedbench scenarios validate --scenario-dir {again}\n"
    )
    assert (again / "my_agent.yaml").read_text() == (out / "my_agent.yaml").read_text()
    # and never overwrites
    assert (
        main(
            [
                "scenarios",
                "import",
                str(out / "my_agent.jsonl"),
                "--name",
                "my_agent",
                "--scenario-dir",
                str(again),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err == (
        f"schedbench scenarios: error: {again}/my_agent.yaml already exists; choose another "
        "--name or delete it first\n"
    )


def test_import_masks_a_gateway_log_and_reports_what_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = [
        {
            "type": "function",
            "function": {"name": "t", "description": "T.", "parameters": {"type": "object"}},
        }
    ]
    ask = {
        "model": "m",
        "tools": tools,
        "messages": [{"role": "user", "content": "token sk-test-SECRET123?"}],
    }
    answer = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "It is sk-test-SECRET123."}}
        ]
    }
    log = tmp_path / "Gateway Export.jsonl"
    log.write_text(
        json.dumps({"request": ask, "response": {"error": {}}, "status": 429})
        + "\n"
        + json.dumps(
            {
                "request": ask,
                "response": answer,
                "headers": {"authorization": "Bearer sk-test-SECRET123"},
            }
        )
        + "\n"
    )
    assert main(["scenarios", "import", str(log), "--scenario-dir", str(tmp_path / "s")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"wrote {tmp_path}/s/gateway_export.yaml (1 LLM calls, 0 tool calls)",
        "exchange 1: left out: HTTP 429",
        f"next: schedbench scenarios validate --scenario-dir {tmp_path}/s",
    ]
    assert no_secrets(tmp_path / "s") == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["record", "--upstream", "localhost:1234", "--out", "{tmp}"],
            "--upstream must be an http:// or https:// URL, not 'localhost:1234'",
        ),
        (
            ["record", "--upstream", "http://x", "--out", "{tmp}", "--name", "Bad-Name"],
            "invalid scenario name 'Bad-Name': use lowercase letters, digits and underscores (it is also the file name)",
        ),
        (
            ["record", "--upstream", "http://x", "--out", "{tmp}", "--port", "70000"],
            "--port must be between 0 and 65535, not 70000",
        ),
        (
            ["record", "--upstream", "http://x", "--out", "{tmp}", "--redact", "nosuch_module_x:f"],
            "--redact: redaction hook 'nosuch_module_x:f': No module named 'nosuch_module_x'",
        ),
        (
            ["record", "--upstream", "http://x", "--out", "{tmp}", "--name", "taken"],
            "{tmp}/taken.yaml already exists; choose another --name or --out, or delete it first",
        ),
        (
            ["scenarios", "import", "{tmp}/none.jsonl"],
            "{tmp}/none.jsonl: cannot read: No such file or directory",
        ),
        (
            ["scenarios", "import", "{tmp}/taken.yaml", "--scenario-dir", "{tmp}"],
            "{tmp}/taken.yaml:1: not JSON (Expecting value)",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "taken.yaml").write_text("name: taken\n")
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    command = argv[0] if argv[0] == "record" else "scenarios"
    assert (
        capsys.readouterr().err == f"schedbench {command}: error: {message.format(tmp=tmp_path)}\n"
    )


def test_every_latency_profile_can_be_asked_for() -> None:
    parser = build_parser()
    served = [parser.parse_args(["mock", "serve", "--latency", n]).latency for n in PROFILE_NAMES]
    assert served == list(PROFILE_NAMES)
    assert parser.parse_args(["run", "--latency", "recorded"]).latency == "recorded"
