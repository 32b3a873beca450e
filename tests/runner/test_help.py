"""``schedbench run --help`` quotes the defaults it documents, read from ``RunConfig``."""

from __future__ import annotations

import dataclasses

import pytest

from bench.cli import main
from bench.runner.phases.load import plan as loadplan
from bench.runner.plan import RunConfig


def _help(capsys: pytest.CaptureFixture[str], command: str) -> str:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    return " ".join(capsys.readouterr().out.split())  # argparse wraps lines


def test_run_help_says_the_defaults_the_run_uses(capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, "run")
    d = {f.name: f.default for f in dataclasses.fields(RunConfig)}
    q = RunConfig.quick_defaults()
    assert (d["rounds"], d["min_repeats"], d["max_repeats"]) == (3, 5, 15)  # what is documented
    expected = [
        f"run time, {d['min_repeats']} to {d['max_repeats']}; --quick: {q['min_repeats']} to "
        f"{q['max_repeats']})",
        f"discarded runs before each batch (default {d['warmup']}; --quick: {q['warmup']})",
        f"fresh worker processes (default {d['rounds']}; --quick: {q['rounds']})",
        "comma-separated (default " + ",".join(map(str, d["concurrency"])) + ")",
        f"token stream on {d['ttft_scenario']})",
        # no --load-rates: the search, described from its constants
        f"a level at {loadplan.COMMON_RATE:g} runs/s",
        f"by ×{loadplan.STEP:g}",
        f"within ×{loadplan.RESOLUTION:g} (±10 %)",
        f"a {loadplan.CONFIRM_WINDOW:g}× longer second level",
        f"within ×{loadplan.MULTI_RESOLUTION:g}, unconfirmed",
        "(--quick: " + ",".join(f"{r:g}" for r in q["load_rates"]) + ")",
        f"(default {d['load_window_s']:g}; --quick: {q['load_window_s']:g})",
        f"(default {d['load_budget_s']:g}; --quick: {q['load_budget_s']:g})",
    ]  # fmt: skip
    missing = [phrase for phrase in expected if phrase not in text]
    assert missing == []
    assert d["load_rates"] == ()  # the default is the search
    assert loadplan.RESOLUTION <= 1.21  # what "±10 %" says: √1.21 = 1.1
