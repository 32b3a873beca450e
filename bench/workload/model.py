"""The workload file: what a user's LLM, traffic and objective look like (``docs/workload.md``).

Read like a scenario file (``scenarios.loader``): the safe, bounded YAML loader, a strict model
(unknown fields refused, with a guess), and every problem of the file at once, one line each,
``FILE: FIELD: REASON``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scenarios.loader import DataFileError, read_text, validation_problems, yaml_mapping

MAX_FILE_BYTES = 64 * 1024
MAX_RATE = 5000.0  # runs/s one host is asked for (the load phase's own bound)
MAX_HOSTS = 100_000


class WorkloadError(DataFileError):
    """A workload file that cannot be used; ``str()`` is one line per problem, each naming the
    file, the field and the reason."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Llm(_Strict):
    """The hosted model's latency, as the mock plays it (``bench.referee.latency``): each call
    waits ``first_token_ms``, then its completion tokens at ``tokens_per_s``, both scaled by a
    factor drawn uniformly from [1 − jitter, 1 + jitter] (seeded per scripted turn). Or
    ``recorded: true``: every turn as the real model answered it when ``schedbench record``
    recorded the scenario (its ``timing``)."""

    recorded: bool = False
    first_token_ms: float | None = Field(None, ge=0, le=600_000)
    tokens_per_s: float | None = Field(None, gt=0, le=1_000_000)
    jitter: float = Field(0.0, ge=0, le=0.99)

    @model_validator(mode="after")
    def _one_kind(self) -> Llm:
        if self.recorded:
            given = [
                name
                for name, on in (
                    ("first_token_ms", self.first_token_ms is not None),
                    ("tokens_per_s", self.tokens_per_s is not None),
                    ("jitter", bool(self.jitter)),
                )
                if on
            ]
            if given:
                raise ValueError(
                    f"recorded: true plays the recorded timings; {', '.join(given)} cannot be "
                    "given with it"
                )
        elif self.first_token_ms is None:
            raise ValueError(
                "give first_token_ms (and optionally tokens_per_s, jitter), or recorded: true"
            )
        return self


class Objective(_Strict):
    """The end-to-end latency one run must stay within, at the target rate (ms)."""

    p95_ms: float | None = Field(None, gt=0, le=3_600_000)
    p99_ms: float | None = Field(None, gt=0, le=3_600_000)

    @model_validator(mode="after")
    def _one_at_least(self) -> Objective:
        if self.p95_ms is None and self.p99_ms is None:
            raise ValueError("give p95_ms, p99_ms or both")
        if self.p95_ms is not None and self.p99_ms is not None and self.p99_ms < self.p95_ms:
            raise ValueError(f"p99_ms ({self.p99_ms:g}) is below p95_ms ({self.p95_ms:g})")
        return self

    @property
    def load_target_ms(self) -> float:
        """What the load phase's p95 verdict tests: the p95 objective, else the p99 one (a
        p95 above the p99 objective fails it too)."""
        value = self.p95_ms if self.p95_ms is not None else self.p99_ms
        assert value is not None
        return value


class Tools(_Strict):
    """Your tools: every tool call of the workload's scenarios waits ``latency_ms`` instead of
    what the scenario scripts (a failing call waits it too), and fails with probability
    ``failure_rate`` (``failure_message``), a transient failure its retry gets through."""

    latency_ms: float | None = Field(None, ge=0, le=60_000)  # scenarios.schema.MAX_LATENCY_MS
    failure_rate: float = Field(0.0, ge=0, le=0.9)  # scenarios.schema.ToolBehavior.fail_rate
    failure_message: str = Field(
        "ConnectionResetError: [Errno 104] Connection reset by peer", min_length=1, max_length=500
    )

    @model_validator(mode="after")
    def _something(self) -> Tools:
        if self.latency_ms is None and not self.failure_rate:
            raise ValueError("give latency_ms, failure_rate or both")
        return self


class Conversation(_Strict):
    """How much conversation comes before each run: ``prior_turns`` earlier exchanges (a
    user message and the assistant's answer, ``words_per_message`` words each) prepended to
    every scenario's history."""

    prior_turns: int = Field(ge=0, le=100)
    words_per_message: int = Field(60, ge=1, le=2000)


class Prices(_Strict):
    """Token prices per million and the price of one core for an hour (any one currency)."""

    currency: str = Field("$", max_length=8)
    prompt_per_1m: float = Field(0.0, ge=0, le=1_000_000)
    completion_per_1m: float = Field(0.0, ge=0, le=1_000_000)
    core_hour: float = Field(0.0, ge=0, le=1_000_000)


class Workload(_Strict):
    """A user's workload: their LLM, rate, objective, streaming, scenarios and engines."""

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str = Field("", max_length=2000)
    llm: Llm
    rate: float = Field(gt=0, le=MAX_RATE * MAX_HOSTS)  # runs/s at peak, all hosts together
    hosts: int = Field(1, ge=1, le=MAX_HOSTS)  # the rate is spread over this many hosts
    objective: Objective
    streaming: bool = False
    scenarios: list[str] = Field(min_length=1, max_length=50)
    scenario_dir: str | None = None
    engines: list[str] | None = Field(None, min_length=1, max_length=50)
    tools: Tools | None = None
    conversation: Conversation | None = None
    prices: Prices | None = None

    @field_validator("scenarios", "engines")
    @classmethod
    def _distinct(cls, names: list[str] | None) -> list[str] | None:
        if names is not None:
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise ValueError(f"named more than once: {', '.join(twice)}")
        return names

    @model_validator(mode="after")
    def _host_rate(self) -> Workload:
        if self.host_rate * 1.5 > MAX_RATE:
            raise ValueError(
                f"rate: {self.rate:g} runs/s over {self.hosts} host(s) is {self.host_rate:g} "
                f"per host; the load phase measures up to 1.5× that, at most {MAX_RATE:g} "
                "runs/s: raise hosts"
            )
        return self

    @property
    def host_rate(self) -> float:
        """The runs/s one host serves at the target rate (what the load phase measures)."""
        return self.rate / self.hosts

    @property
    def latency_spec(self) -> str:
        """The mock's latency profile for this workload (a ``custom:`` spec string)."""
        from bench.referee.latency import LatencyProfile

        llm = self.llm
        if llm.recorded:
            return LatencyProfile.recorded().name
        assert llm.first_token_ms is not None  # Llm's validator
        return LatencyProfile.custom(llm.first_token_ms, llm.tokens_per_s, llm.jitter).name


def parse_workload(
    text: str,
    source: Path | str = "<string>",
    *,
    scenario_names: Collection[str] | None = None,
    happy_paths: Collection[str] | None = None,
    engine_names: Collection[str] | None = None,
) -> Workload:
    """Parse and validate a workload's YAML text; ``WorkloadError`` lists every problem.

    ``scenario_names`` / ``engine_names``: the names ``scenarios`` / ``engines`` may use
    (None: any); ``happy_paths``: the scenarios the load phase can play, one of which must
    come first (None: any)."""
    data = yaml_mapping(text, source, kind="workload", limit=MAX_FILE_BYTES, error=WorkloadError)
    try:
        workload = Workload.model_validate(data)
    except ValidationError as exc:
        raise WorkloadError(source, validation_problems(exc, Workload)) from None
    problems = _name_problems(workload, scenario_names, happy_paths, engine_names)
    if problems:
        raise WorkloadError(source, problems)
    return workload


def _name_problems(
    workload: Workload,
    scenario_names: Collection[str] | None,
    happy_paths: Collection[str] | None,
    engine_names: Collection[str] | None,
) -> list[str]:
    from scenarios.checks import did_you_mean

    problems = []

    def unknown(field: str, i: int, name: str, valid: Collection[str], what: str) -> None:
        guess = did_you_mean(name, valid)
        hint = f"; did you mean '{guess}'?" if guess else ""
        problems.append(f"{field}[{i}]: no {what} '{name}'{hint}")

    if scenario_names is not None:
        for i, name in enumerate(workload.scenarios):
            if name not in scenario_names:
                where = workload.scenario_dir or "scenarios/"
                unknown("scenarios", i, name, scenario_names, f"scenario in {where} called")
    first = workload.scenarios[0]
    known = scenario_names is None or first in scenario_names
    if happy_paths is not None and known and first not in happy_paths:
        problems.append(
            f"scenarios[0]: '{first}' is a fault scenario; the first scenario stands for "
            "the workload in the load phase, so it must be a happy path (list the fault "
            "scenarios after it)"
        )
    if engine_names is not None and workload.engines is not None:
        for i, name in enumerate(workload.engines):
            if name not in engine_names:
                unknown("engines", i, name, engine_names, "engine called")
    return problems


def load_workload(path: Path | str, *, engine_names: Collection[str] | None = None) -> Workload:
    """Read, validate and cross-check a workload file: its scenarios exist (in its
    ``scenario_dir``, relative to the file, else scenarios/) and its engines are known.
    The returned workload's ``scenario_dir`` is absolute."""
    from scenarios import ScenarioError, load_scenarios

    path = Path(path)
    text = read_text(path, kind="workload", limit=MAX_FILE_BYTES, error=WorkloadError)
    workload = parse_workload(text, path)
    directory = None
    if workload.scenario_dir is not None:
        directory = (path.parent / workload.scenario_dir).expanduser().resolve()
        if not directory.is_dir():
            raise WorkloadError(path, [f"scenario_dir: {directory} is not a directory"])
    try:
        available = load_scenarios(directory)
    except ScenarioError as exc:
        raise WorkloadError(path, [f"scenario_dir: cannot load its scenarios: {exc}"]) from None
    happy = [n for n, s in available.items() if s.is_performance]
    problems = _name_problems(workload, set(available), happy, engine_names)
    first = available.get(workload.scenarios[0])
    if workload.llm.recorded and first is not None:
        untimed = [i for i, turn in enumerate(first.script) if turn.timing is None]
        if untimed:
            problems.append(
                f"llm.recorded: the first scenario, '{first.name}', has turns without a "
                f"recorded timing (script[{', '.join(map(str, untimed))}]), which would answer "
                "at once: record it with schedbench record, or give llm.first_token_ms"
            )
    if problems:
        raise WorkloadError(path, problems)
    if directory is not None:
        workload = workload.model_copy(update={"scenario_dir": str(directory)})
    return workload


def describe(workload: Workload) -> Mapping[str, str]:
    """The workload's facts as the answer prints them (field → text)."""
    llm = workload.llm
    out = {
        "LLM": (
            "as recorded: every turn with the timing the real model had (schedbench record)"
            if llm.recorded
            else f"{llm.first_token_ms:g} ms to the first token"
            + (f", {llm.tokens_per_s:g} tokens/s" if llm.tokens_per_s else "")
            + (f", ±{llm.jitter * 100:g} % (uniform)" if llm.jitter else "")
        ),
        "rate": f"{workload.rate:g} runs/s"
        + (
            f" over {workload.hosts} hosts = {workload.host_rate:g} runs/s per host"
            if workload.hosts > 1
            else ""
        ),
        "objective": ", ".join(
            f"{q} ≤ {v:g} ms"
            for q, v in (("p95", workload.objective.p95_ms), ("p99", workload.objective.p99_ms))
            if v is not None
        ),
        "streaming": "yes" if workload.streaming else "no",
        "scenarios": ", ".join(workload.scenarios),
    }
    if workload.tools is not None:
        t = workload.tools
        parts = []
        if t.latency_ms is not None:
            parts.append(f"every tool call takes {t.latency_ms:g} ms")
        if t.failure_rate:
            parts.append(
                f"{t.failure_rate * 100:g} % of tool calls fail ('{t.failure_message}'), "
                "a retry gets through"
            )
        out["tools"] = (
            "; ".join(parts) + " (the played copies of the scenarios are in the run folder's "
            "scenarios/)"
        )
    if workload.conversation is not None:
        c = workload.conversation
        out["conversation"] = (
            f"{c.prior_turns} earlier exchanges of {c.words_per_message} words a message before "
            "each run (prepended to every scenario's history)"
        )
    if workload.prices is not None:
        p = workload.prices
        out["prices"] = (
            f"{p.currency}{p.prompt_per_1m:g} / 1M prompt tokens, {p.currency}"
            f"{p.completion_per_1m:g} / 1M completion tokens, {p.currency}{p.core_hour:g} "
            "per core-hour"
        )
    return out


def finite(value: float | None) -> bool:
    """A number that is there and finite."""
    return value is not None and math.isfinite(value)
