"""``schedbench trace``: one mode's output, side by side, and one-line errors (exit 2)."""

from __future__ import annotations

import re

import pytest

from bench.cli import main
from bench.debuggability.render import side_by_side
from bench.engines import ENGINE_NAMES

_DURATION = re.compile(r" \(\d+(?:\.\d+)?m?s\)")

SCHEDULER_TREE = """\
[Agent: customer_returns] completed, reason=stop
[LLM Reasoning] step 1
├── Input: [system: You are a customer-service agent. Use..., user: I want to return order A123. What is...]
├── Output: calling tool search_knowledge_base
└── Tokens: 121 input, 11 output
[Tool: search_knowledge_base] step 1
├── Args: {query: return policy}
└── Result: {"article_id": "KB-17", "title": "Returns policy", "text"... (159 chars)
[LLM Reasoning] step 2
├── Input: [... 1 earlier, user: I want to return order A123. What is..., assistant: -> search_knowledge_base, tool: {"article_id": "KB-17", "title": "Ret...]
├── Output: calling tool query_order
└── Tokens: 182 input, 10 output
[Tool: query_order] step 2
├── Args: {order_id: A123}
└── Result: {"order_id": "A123", "status": "delivered", "delivered_on... (146 chars)
[LLM Reasoning] step 3
├── Input: [... 3 earlier, tool: {"article_id": "KB-17", "title": "Ret..., assistant: -> query_order, tool: {"order_id": "A123", "status": "deliv...]
├── Output: Order A123 (trail shoes, delivered on 2026-11-20) can be returned within 30 d...
└── Tokens: 258 input, 45 output
"""


def test_trace_prints_the_scheduler_tree(capsys) -> None:
    assert main(["trace", "customer_returns", "--engine", "scheduler", "--mode", "tree"]) == 0
    out = capsys.readouterr().out
    assert _DURATION.sub("", out) == SCHEDULER_TREE


def test_trace_default_mode_and_score_line(capsys) -> None:
    assert main(["trace", "customer_returns", "--engine", "scheduler", "--score"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("[Agent: customer_returns]")
    last = out.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(
        r"# scheduler · tree · customer_returns: recall 0\.\d\d \(\d+/\d+ facts\), "
        r"[\d,]+ bytes, 19 lines, [\d,]+ bytes/fact",
        last,
    ), last


def test_side_by_side_shows_two_engines(capsys) -> None:
    argv = ["trace", "customer_returns", "--engine", "scheduler", "--engine", "raw"]
    assert main([*argv, "--side-by-side", "--width", "101"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{'scheduler · tree':<49} │ raw · none"
    assert lines[1] == "─" * 50 + "┼" + "─" * 50
    assert lines[2].startswith("[Agent: customer_returns]")
    assert lines[2].endswith(" │ (no debug output)")
    assert all(" │" in line for line in lines[2:])
    assert max(len(line) for line in lines) <= 101


def test_side_by_side_renderer_wraps_and_pads() -> None:
    text = side_by_side("left", "abcdefghijklm\nxy", "right", "\x1b[1mbold\x1b[0m", width=25)
    assert text.split("\n") == [
        "left        │ right",
        "─" * 11 + "─┼─" + "─" * 11,
        "abcdefghijk │ bold",
        "lm          │",
        "xy          │",
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["nope", "--engine", "raw"],
            "unknown scenario 'nope'; valid scenarios: confirmation_required, customer_returns,",
        ),
        (
            ["customer_returns", "--engine", "langchain"],
            "unknown engine 'langchain'; valid engines: " + ", ".join(ENGINE_NAMES),
        ),
        (
            ["customer_returns", "--engine", "lc-agentexecutor", "--mode", "tree"],
            "unknown debug mode 'tree' for engine 'lc-agentexecutor'; "
            "valid modes: verbose, set-debug, run-tree",
        ),
        (
            ["customer_returns", "--engine", "raw", "--side-by-side"],
            "--side-by-side needs exactly two --engine options",
        ),
        (
            ["customer_returns", "--engine", "raw", "--engine", "scheduler"],
            "give one --engine (or two with --side-by-side)",
        ),
    ],
)
def test_bad_names_are_one_line_and_exit_2(capsys, argv: list[str], message: str) -> None:
    assert main(["trace", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"schedbench trace: error: {message}")
