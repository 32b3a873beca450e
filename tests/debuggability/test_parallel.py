"""debug-score in child processes (bench.debuggability.parallel): the same table as in one."""

from __future__ import annotations

import re

from bench.debuggability.csvrows import read_rows
from bench.debuggability.parallel import child_command, groups_of
from bench.debuggability.results import write_debuggability
from bench.debuggability.truth import LATENCY

ENGINES = ["raw", "scheduler", "lc-create-agent"]
SCENARIOS = ["customer_returns", "tool_flaky"]
# measured, or holding measured times and random run ids (they differ between any two runs)
VARYING = {"run_ms", "mode_cost_ms", "mode_off_ms", "mode_on_ms", "bytes", "bytes_per_fact",
           "excerpt", "excerpt_line"}  # fmt: skip
# a latency fact is found when a printed duration is within 5 ms (or 50 %) of the call's own
# clock: on a busy machine a pause between the two clocks loses it in one run and not the
# other, so the scores are compared without it (every other kind of fact exactly)
BY_SPEED = {"recall", "facts_found", f"recall_{LATENCY}"}
_LATENCY_MISSED = re.compile(rf"\b{LATENCY}:\d+\s*")


def _scores(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows' scores that do not depend on how fast the runs went."""
    kept = [{k: v for k, v in r.items() if k not in VARYING | BY_SPEED} for r in rows]
    for row in kept:
        row["missed"] = _LATENCY_MISSED.sub("", row["missed"]).strip()
    return kept


def test_engines_are_split_by_their_debug_modes_in_their_order() -> None:
    groups = groups_of(ENGINES, 2)
    assert sorted(e for g in groups for e in g) == sorted(ENGINES)
    assert groups_of(ENGINES, 1) == [ENGINES]
    assert ["lc-create-agent"] in groups  # the heaviest (most modes) alone
    assert len(groups_of(ENGINES, 10)) == len(ENGINES)


def test_an_engine_without_debug_modes_is_in_no_group_and_a_child_never_splits_again(
    tmp_path,
) -> None:
    # the peers declare no debug mode of their own; before, they all went to one group,
    # whose child (default --jobs 4) split it again without end
    peers = ["openai-agents", "agno", "strands"]
    assert groups_of([*peers, "raw"], 4) == [["raw"]]
    assert groups_of(peers, 4) == []
    command = child_command(tmp_path, ["raw", "scheduler"], "customer_returns", "all", None)
    assert command[command.index("--jobs") + 1] == "1"


def test_child_processes_give_the_table_one_process_gives(tmp_path) -> None:
    one = read_rows(write_debuggability(tmp_path / "one", ENGINES, SCENARIOS, cost_runs=1))
    two = read_rows(write_debuggability(tmp_path / "two", ENGINES, SCENARIOS, cost_runs=1, jobs=2))

    assert _scores(two) == _scores(one)
    assert [r["facts_total"] for r in two] == [r["facts_total"] for r in one]
    assert all(r["mode_cost_ms"] != "" and r["cost_runs"] == "1" for r in two)
    written = sorted(p.relative_to(tmp_path / "two") for p in (tmp_path / "two").rglob("*.txt"))
    assert written == sorted(
        p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*.txt")
    )
    assert not list((tmp_path / "two").glob(".debug-score-*"))  # the scratch folder is gone
