"""Each false-simplicity program passes its test; the checks catch what they are for."""

from __future__ import annotations

from typing import Any

import pytest

from bench import PROJECT_ROOT
from bench.catalogue import simplicity
from bench.catalogue.observe import Request
from bench.catalogue.simplicity import (
    FIRST_ANSWER,
    HANDOFF,
    PROGRAMS,
    QUESTIONS,
    Backend,
    check_complex,
)
from bench.engines.codesize import measure_target


def _row(catalogue: dict[str, Any], engine: str, case: str) -> dict[str, Any]:
    (row,) = [p for p in catalogue["simplicity"] if (p["engine"], p["case"]) == (engine, case)]
    return row


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: f"{p.engine}-{p.case}")
def test_the_program_passes_its_test(catalogue: dict[str, Any], program: Any) -> None:
    row = _row(catalogue, program.engine, program.case)
    if program.note:  # a known limit of the mock (the note says which): it fails, and says so
        assert row["works"] is False and row["note"] == program.note and row["failures"]
        return
    assert row == {
        "engine": program.engine,
        "case": program.case,
        "target": program.target,
        "statements": measure_target(program.target).statements,
        "works": True,
        "failures": [],
        "note": "",
    }


def test_every_engine_has_both_programs_and_the_hand_over_text_is_one() -> None:
    engines = {p.engine for p in PROGRAMS}
    assert {(p.engine, p.case) for p in PROGRAMS} == {
        (e, c) for e in engines for c in simplicity.CASES
    }
    for program in PROGRAMS:  # read, not imported: a peer's program imports its framework
        if program.case == "complex":
            source = (PROJECT_ROOT / program.target).read_text(encoding="utf-8")
            assert f"HANDOFF = {HANDOFF!r}".replace("'", '"') in source


def _request(question: str, turn: int, extra: tuple[dict[str, Any], ...] = ()) -> Request:
    messages = ({"role": "system", "content": "s"}, *extra, {"role": "user", "content": question})
    return Request(turn, "scenario/simplicity_support", 200, messages, 10, 5)


def _session(memory: bool, stopped: bool) -> list[Request]:
    first = [_request(QUESTIONS[0], t) for t in range(3)]
    earlier = (
        ({"role": "user", "content": QUESTIONS[0]}, {"role": "assistant", "content": FIRST_ANSWER})
        if memory
        else ()
    )
    second = [_request(QUESTIONS[1], t, earlier) for t in range(2 if stopped else 3)]
    return first + second


def _backend() -> Backend:
    backend = Backend()
    for _ in QUESTIONS:
        backend.lookup_order("B777")
        backend.refund_policy("lamps")
        backend.issue_refund("B777", 120)
    return backend


def test_the_complex_check_passes_a_good_session_and_catches_each_fault() -> None:
    answers = [FIRST_ANSWER, HANDOFF]
    assert check_complex(answers, _backend(), _session(memory=True, stopped=True)) == []
    forgot = check_complex(answers, _backend(), _session(memory=False, stopped=True))
    assert forgot == ["the second question's request lacks the first exchange (memory)"]
    went_on = check_complex(answers, _backend(), _session(memory=True, stopped=False))
    assert went_on == [
        "turns per question [[0, 1, 2], [0, 1, 2]], expected [[0, 1, 2], [0, 1]]: the second "
        "run must stop right after the refund under review"
    ]
    wrong = check_complex([FIRST_ANSWER, "done"], _backend(), _session(True, True))
    assert len(wrong) == 1 and wrong[0].startswith("answers")
