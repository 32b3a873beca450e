"""The run a workload's question needs (``schedbench decide``): its engines, and a RunConfig
that measures exactly that — the suite and fault scenarios at the workload's latency, TTFT
when it streams, the load phase on its first scenario at 0.5×, 1× and 1.5× the rate one host
serves, with the p95 target set to the objective. No throughput phase, no import probes."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from bench.workload.model import Workload

LOAD_FACTORS = (0.5, 1.0, 1.5)  # the load levels around the per-host target rate


@dataclasses.dataclass(frozen=True)
class EngineChoice:
    """The engines a workload compares, and a note per pair the registry could not match."""

    engines: tuple[str, ...]
    notes: tuple[str, ...] = ()


def default_engines(streaming: bool) -> EngineChoice:
    """The like-for-like headline pairs and the floor, from the registry: the bare loop
    (the first ``floor`` engine); LangChain's representative (``REPRESENTATIVE``) and the
    self-built engine of the same configuration (the default pair); the first production
    variant of each (the production pair). With ``streaming`` each member is its streaming
    variant of the same family and configuration where one exists (else the non-streaming
    engine, and a note says so)."""
    from bench.engines.registry import REPRESENTATIVE, SPECS

    specs = [s for s in SPECS if not s.outcome_only and not s.scenarios]
    lead = REPRESENTATIVE["langchain"]
    notes: list[str] = []

    def pick(label: str, configuration: str, match: Any) -> str | None:
        fits = [s for s in specs if s.configuration == configuration and match(s)]
        wanted = [s for s in fits if s.streams == streaming]
        if wanted:
            return wanted[0].name
        others = [s for s in fits if s.streams != streaming]
        if not others:
            return None
        kind = "streaming" if streaming else "non-streaming"
        notes.append(f"no {kind} {configuration} {label} engine: {others[0].name} stands in")
        return others[0].name

    floor = [s.name for s in specs if s.role == "floor"][:1]
    chosen = list(floor)
    for configuration in ("default", "production"):
        for label, match in (
            ("self-built", lambda s: s.role == "self-built"),
            ("LangChain", lambda s: s.name.startswith(lead) and s.family == "langchain"),
        ):
            name = pick(label, configuration, match)
            if name is not None and name not in chosen:
                chosen.append(name)
    return EngineChoice(tuple(chosen), tuple(notes))


def engines_for(workload: Workload) -> EngineChoice:
    """The workload's own engines, else ``default_engines``."""
    if workload.engines is not None:
        return EngineChoice(tuple(workload.engines))
    return default_engines(workload.streaming)


def load_rates(workload: Workload) -> tuple[float, ...]:
    """The offered rates of the load phase: ``LOAD_FACTORS`` × the per-host rate."""
    return tuple(sorted({round(workload.host_rate * f, 6) for f in LOAD_FACTORS}))


def target_factor(scenario: Any, workload: Workload) -> tuple[float, float]:
    """(the load phase's ``load_target_factor``, the scripted latency in ms): the factor
    that makes the load target (scripted latency × factor) equal the objective."""
    from bench.runner.phases.load.plan import scripted_latency_ms

    scripted = scripted_latency_ms(scenario, workload.latency_spec)
    return workload.objective.load_target_ms / scripted, scripted


def with_tool_latency(scenario: Any, latency_ms: float) -> Any:
    """``scenario`` with every tool's scripted latency set to ``latency_ms``."""
    tools = [
        t.model_copy(update={"behavior": t.behavior.model_copy(update={"latency_ms": latency_ms})})
        for t in scenario.tools
    ]
    return scenario.model_copy(update={"tools": tools})


FLOW_FIELDS = ("llm_calls", "tool_calls", "tools")  # the exact path: it varies with failures


def rated_tools(scenario: Any) -> set[str]:
    """The tools a failure rate applies to: those with one fixed result (the mock tells a
    retry from a success by it) that the scenario does not already make fail."""
    b = {t.name: t.behavior for t in scenario.tools}
    return {
        t.name
        for t in scenario.tools
        if t.fixed_result is not None and not (b[t.name].fail_times or b[t.name].fail_rate)
    }


def with_failure_rate(scenario: Any, rate: float, message: str) -> Any:
    """``scenario`` with its ``rated_tools`` failing at ``rate`` (``fail_rate``: drawn alike
    for every engine, a retry gets through) and the model's answer to a failure scripted:
    after each turn calling one of them, a ``retry`` turn repeating that turn's calls, which
    the mock plays only when a result was not the tool's (an engine that retried inside the
    tool node got it, and the model moves on). The limits grow by what the retries add, and
    the flow expectations (the exact calls, ``FLOW_FIELDS``) are dropped: the path varies
    from run to run now; every outcome expectation stays."""
    from scenarios.schema import Turn

    rated = rated_tools(scenario)
    if not rated or not rate:
        return scenario
    tools = [
        t.model_copy(
            update={
                "behavior": t.behavior.model_copy(
                    update={"fail_rate": rate, "fail_message": message}
                )
            }
        )
        if t.name in rated
        else t
        for t in scenario.tools
    ]
    script: list[Turn] = []
    inserted = extra_calls = 0
    turns = scenario.script
    for i, turn in enumerate(turns):
        script.append(turn)
        follows = turns[i + 1] if i + 1 < len(turns) else None
        calls = [c.model_copy(update={"id": None}) for c in turn.tool_calls]
        if (
            not turn.repeat
            and any(c.name in rated for c in calls)
            and not (follows is not None and follows.retry)
        ):
            script.append(
                turn.model_copy(
                    update={
                        "tool_calls": calls,
                        "content": None,
                        "retry": True,
                        "fault": None,
                        "needs": None,
                    }
                )
            )
            inserted += 1
            extra_calls += len(calls)
    limits = scenario.limits.model_copy(
        update={
            "max_steps": min(200, scenario.limits.max_steps + inserted),
            "max_same_tool_calls": scenario.limits.max_same_tool_calls + 1,
        }
    )

    def loosened(expect: Any) -> Any:
        update: dict[str, Any] = {name: None for name in FLOW_FIELDS}
        if expect.max_llm_calls is not None:
            update["max_llm_calls"] = expect.max_llm_calls + inserted
        if expect.max_tool_calls is not None:
            update["max_tool_calls"] = expect.max_tool_calls + extra_calls
        return expect.model_copy(update=update)

    expect = loosened(scenario.expect)
    expect = expect.model_copy(
        update={"engines": {name: loosened(o) for name, o in scenario.expect.engines.items()}}
    )
    note = (
        f" Played by schedbench decide with {rate * 100:g} % of the calls of "
        f"{', '.join(sorted(rated))} failing ('{message}'), a retry getting through."
    )
    return scenario.model_copy(
        update={
            "description": scenario.description + note,
            "tools": tools,
            "script": script,
            "limits": limits,
            "expect": expect,
        }
    )


# the words of the earlier exchanges (``with_prior_turns``): plain support-desk English, so
# that the tokenizer sees ordinary text (about 1.3 tokens a word)
_WORDS = [
    "the",
    "customer",
    "asked",
    "about",
    "the",
    "order",
    "and",
    "we",
    "checked",
    "the",
    "account",
    "history",
    "before",
    "we",
    "answered",
    "with",
    "the",
    "delivery",
    "date",
    "the",
    "refund",
    "policy",
    "and",
    "the",
    "next",
    "steps",
    "for",
    "the",
    "return",
]


def _text(words: int, seed: int) -> str:
    return " ".join(_WORDS[(seed + i) % len(_WORDS)] for i in range(words))


def with_prior_turns(scenario: Any, turns: int, words: int) -> Any:
    """``scenario`` with ``turns`` earlier exchanges (user, then assistant; ``words`` words
    a message, deterministic) before its own history."""
    from scenarios.schema import Message

    earlier = []
    for k in range(turns):
        earlier.append(Message(role="user", content=f"Earlier question {k + 1}: {_text(words, k)}"))
        earlier.append(
            Message(role="assistant", content=f"Earlier answer {k + 1}: {_text(words, k + 7)}")
        )
    return scenario.model_copy(update={"history": [*earlier, *scenario.history]})


def played_scenarios(workload: Workload, scenarios: dict[str, Any]) -> dict[str, Any]:
    """The workload's scenarios as the run plays them: with its tools' latency
    (``with_tool_latency``) and failure rate (``with_failure_rate``) and its earlier
    conversation (``with_prior_turns``) when it states them, else as they are."""
    if workload.tools is None and workload.conversation is None:
        return scenarios
    played = {}
    for name in workload.scenarios:
        scenario = scenarios[name]
        tools = workload.tools
        if tools is not None and tools.latency_ms is not None:
            scenario = with_tool_latency(scenario, tools.latency_ms)
        if tools is not None and tools.failure_rate:
            scenario = with_failure_rate(scenario, tools.failure_rate, tools.failure_message)
        if workload.conversation is not None:
            c = workload.conversation
            scenario = with_prior_turns(scenario, c.prior_turns, c.words_per_message)
        played[name] = scenario
    return played


def rewrites_scenarios(workload: Workload) -> bool:
    """The run plays rewritten copies of the workload's scenarios (``played_scenarios``)."""
    return workload.tools is not None or workload.conversation is not None


def write_scenarios(scenarios: dict[str, Any], directory: Path) -> str:
    """``scenarios`` as YAML files in ``directory`` (the run's own scenario directory: the
    run folder holds exactly what was played, for ``--resume`` and a sceptic); its path."""
    import yaml  # type: ignore[import-untyped]

    directory.mkdir(parents=True, exist_ok=True)
    for name, scenario in scenarios.items():
        # unset, not None: an override's explicit null drops a base expectation
        data = scenario.model_dump(mode="json", exclude_unset=True, by_alias=True)
        (directory / f"{name}.yaml").write_text(
            yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
    return str(directory.resolve())


def build_config(
    workload: Workload,
    scenarios: dict[str, Any],
    *,
    quick: bool,
    engines: tuple[str, ...],
    scenario_dir: str | None = None,
) -> Any:
    """The RunConfig that answers the workload (see the module docstring).

    Every cell gets the same explicit number of runs (``repeat``): the plan's budget by
    expected run time does not know a custom latency profile."""
    from bench.runner.plan import RunConfig, every_phase

    first = workload.scenarios[0]
    factor, scripted = target_factor(scenarios[first], workload)
    if factor < 1.0:
        raise ValueError(
            f"objective: {workload.objective.load_target_ms:g} ms is below what the LLM alone "
            f"takes for one run of {first} ({scripted:,.0f} ms scripted): no engine can meet it"
        )
    spec = workload.latency_spec
    rates = load_rates(workload)
    values: dict[str, Any] = RunConfig.quick_defaults() if quick else {}
    values.update(
        engines=engines,
        scenarios=tuple(workload.scenarios),
        scenario_dir=scenario_dir if scenario_dir is not None else workload.scenario_dir,
        latencies=(spec,),
        transport="inprocess",
        repeat=3 if quick else 12,
        warmup=1,
        rounds=1 if quick else 3,
        throughput=False,
        footprint=False,
        ttft=workload.streaming,
        ttft_scenario=first,
        ttft_latency=spec,
        ttft_repeat=3 if quick else 10,
        ttft_warmup=1,
        load=True,
        load_engines=every_phase(engines),
        load_scenario=first,
        load_latency=spec,
        load_rates=rates,
        load_start_rate=workload.host_rate,
        load_target_factor=factor,
        load_processes=(1,) if quick else None,
        # a window of a few seconds: the achieved rate counts completions inside a slot as
        # long as the window, so a short one misses the runs a busy engine finishes late
        load_window_s=2.0 if quick else 5.0,
        load_min_runs=20 if quick else 60,
        load_ramp=0.0 if quick else 1.0,
        load_budget_s=900.0 if quick else 3600.0,
    )
    return RunConfig(**values)


__all__ = [
    "LOAD_FACTORS",
    "EngineChoice",
    "build_config",
    "default_engines",
    "engines_for",
    "load_rates",
    "played_scenarios",
    "rated_tools",
    "rewrites_scenarios",
    "target_factor",
    "with_failure_rate",
    "with_prior_turns",
    "with_tool_latency",
    "write_scenarios",
]
