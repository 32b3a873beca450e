"""The multi-model check end to end: ``schedbench multimodel`` runs each engine on OpenAI and
on Anthropic against the loopback mock, and its multimodel.json holds what it saw."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bench.cli import main
from bench.engines.scheduler_engine import SchedulerEngine
from bench.multimodel.check import SCENARIOS, check_variants
from bench.multimodel.variants import Variant
from bench.results.files import MULTIMODEL
from bench.results.folder import load_run_folder, read_multimodel
from bench.results.rows import MultiModelCheck
from scenarios import load_scenarios


def test_the_command_writes_what_each_engine_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert main(["multimodel", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    document, skipped = read_multimodel(out / MULTIMODEL)
    assert document is not None and skipped == []
    assert document.scenarios == SCENARIOS
    assert document.packages["langchain-anthropic"] and document.packages["anthropic"]
    summary = {
        (r.engine, r.provider, r.fixed): (
            r.works,
            r.statements_changed,
            sum(c.ok for c in r.checks),
        )
        for r in document.rows
    }
    assert summary == {
        ("lc-create-agent", "openai", False): (True, 0, 3),
        ("lc-create-agent", "anthropic", False): (True, 2, 3),
        ("lc-agentexecutor", "openai", False): (True, 0, 3),
        # ChatAnthropic streams content blocks: the executor returns a list, not the answer
        ("lc-agentexecutor", "anthropic", False): (False, 2, 0),
        ("lc-agentexecutor", "anthropic", True): (True, 4, 3),
        ("lc-agentexecutor-nostream", "openai", False): (True, 0, 3),
        ("lc-agentexecutor-nostream", "anthropic", False): (True, 2, 3),
        ("scheduler", "openai", False): (True, 0, 3),
        ("scheduler", "anthropic", False): (True, 2, 3),
        ("scheduler-stream", "openai", False): (True, 0, 3),
        ("scheduler-stream", "anthropic", False): (True, 2, 3),
    }
    for row in document.rows:  # each spoke its own provider's API, and only that
        assert {c.apis for c in row.checks} == {(row.provider,)}, row
    broken = next(r for r in document.rows if r.engine == "lc-agentexecutor" and not r.works)
    assert broken.checks[0] == MultiModelCheck(
        scenario="customer_returns",
        ok=False,
        status="failed",
        termination="empty_answer",
        llm_calls=3,
        tool_calls=2,
        apis=("anthropic",),
        answer_shape="a list of 1 content block (text)",
        misses=("status failed, expected completed", "final answer lacks 'within 30 days'"),
        error="the agent returned an empty answer",
    )
    assert "the agent returned a list of 1 content block (text)" in broken.note
    assert "lc-agentexecutor           anthropic  the chat model only      no     0/3" in printed
    folder = load_run_folder(out, require_runs=False)
    assert folder.multimodel == document


def test_an_engine_that_cannot_run_is_an_error_row_and_the_rest_carries_on() -> None:
    class Broken(SchedulerEngine):
        def chat_model(self, ctx):
            raise RuntimeError("no such provider")

    library = load_scenarios()
    variants = [
        Variant("scheduler", "anthropic", Broken),
        Variant("scheduler", "openai", SchedulerEngine),
    ]
    # the plain engine talks to the mock on its own recording client: it works on OpenAI
    rows = asyncio.run(check_variants(variants, [library["customer_returns"]]))
    assert [(r.provider, r.works) for r in rows] == [("anthropic", False), ("openai", True)]
    (check,) = rows[0].checks
    assert (check.status, check.error, check.llm_calls) == (
        "error",
        "RuntimeError: no such provider",
        0,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--scenarios", "nope"], "unknown scenario 'nope'; valid scenarios: "),
        (["--scenarios", ","], "unknown scenario ','"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["multimodel", "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"schedbench multimodel: error: {message}") and "\n" not in err
    assert not (tmp_path / MULTIMODEL).exists()


def test_out_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = tmp_path / "x"
    file.write_text("")
    assert main(["multimodel", "--out", str(file)]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b"{not json", "Invalid JSON"),
        (json.dumps({"schema_version": 1, "rows": [{"engine": 3}]}).encode(), "rows[0].engine"),
        (json.dumps({"schema_version": 2}).encode(), "schema_version 2 is not the one"),
    ],
)
def test_a_corrupt_file_is_left_out_with_its_reason(
    tmp_path: Path, text: bytes, reason: str
) -> None:
    (tmp_path / MULTIMODEL).write_bytes(text)
    document, skipped = read_multimodel(tmp_path / MULTIMODEL)
    assert document is None and len(skipped) == 1
    assert skipped[0].file == MULTIMODEL and reason in skipped[0].reason
    folder = load_run_folder(tmp_path, require_runs=False)
    assert folder.multimodel is None and folder.skipped == tuple(skipped)
