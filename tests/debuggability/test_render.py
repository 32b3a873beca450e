"""The score line and the excerpt that debuggability.csv shows next to a score."""

from __future__ import annotations

from bench.debuggability.render import excerpt, score_line
from bench.debuggability.score import score_output
from bench.debuggability.truth import CallRef, Fact, Failure, GroundTruth

ERROR = Fact("error", 1, "Connection reset by peer")
CALL = CallRef(1, "track_parcel", order=1)
TRUTH = GroundTruth(
    (Fact("tool", 1, "track_parcel"), ERROR),
    Failure(1, "track_parcel", ERROR, CALL, (CALL,)),
    (),
)
TRACEBACK = [f"  File 'x.py', line {n}, in f" for n in range(20)]
VERBOSE = "\n".join(
    [
        "> Entering new AgentExecutor chain...",
        "Invoking: `track_parcel` with `{'tracking_number': '0034'}`",
        "Traceback (most recent call last):",
        *TRACEBACK,
        "bench.engines.kit.tools.ToolFailure: Connection reset by peer",
        "",
    ]
)


def test_score_line_says_how_the_failure_was_localised() -> None:
    line = score_line(score_output(VERBOSE, TRUTH))
    assert line.endswith("; fault localised: yes (call yes, error yes, position yes by only)"), line


def test_excerpt_shows_the_error_and_the_call_it_belongs_to() -> None:
    first, text = excerpt(VERBOSE, score_output(VERBOSE, TRUTH), TRUTH)
    assert first == 2  # the Invoking line, then what was left out, then the window
    assert text.splitlines() == [
        "Invoking: `track_parcel` with `{'tracking_number': '0034'}`",
        "…",
        *TRACEBACK[-6:],
        "bench.engines.kit.tools.ToolFailure: Connection reset by peer",
    ]


def test_excerpt_of_a_run_without_failure_is_around_the_final_answer() -> None:
    final = Fact("final", None, "Your parcel is out for delivery")
    output = "\n".join(
        [*(f"line {n}" for n in range(20)), "answer: Your parcel is out for delivery"]
    )
    truth = GroundTruth((final,), None, ())
    first, text = excerpt(output, score_output(output, truth), truth)
    assert (first, text.splitlines()[-1]) == (15, "answer: Your parcel is out for delivery")
    assert len(text.splitlines()) == 7
    assert excerpt("", score_output("", truth), truth) == (0, "")
