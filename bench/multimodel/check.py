"""Run the multi-model check: every variant on every scenario, judged by its expectations.

For each ``Variant`` (``bench.multimodel.variants``) and scenario, the benchmark's own engine
is prepared and executed once (``Engine.prepare`` / ``RecordingEngine.execute``: the same
agent, the same reading of its answer) against the mock on loopback, speaking the
variant's provider. What the run showed — its status and answer from the engine, its LLM
calls from the requests the mock received, its tool calls from the tools themselves — is
judged against the scenario's expectations for that engine (``scenarios.expect``, the same
ones the benchmark judges), so *works* means: every scenario ended as the benchmark expects
that engine to end it. The statements changed are counted from the code, not the run.

Nothing is timed. One event loop runs every check (LangChain's clients cache their HTTP
pools process-wide, bound to the first loop).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata
from pathlib import Path

from bench.engines.base import RunContext, RunRecord, ToolCallRecord
from bench.engines.common import exception_outcome
from bench.engines.kit.runlog import end_log, start_log
from bench.engines.statement_diff import statements_changed
from bench.multimodel.server import ThreadedMockServer
from bench.multimodel.variants import VARIANTS, Variant
from bench.referee import MockLLM
from bench.results.files import MULTIMODEL, dumps_line
from bench.results.rows import MultiModelCheck, MultiModelFile, MultiModelRow
from bench.runner.expectations import observed
from scenarios import Scenario

SCHEMA_VERSION = 1
# customer_returns (the seed: two tools in turn), parallel tool calls (several tool_use
# blocks in one answer, their results in one user message) and a conversation history
SCENARIOS = ("customer_returns", "parallel_tool_calls", "multi_turn_memory")
PACKAGES = ("langchain", "langchain-classic", "langchain-openai", "langchain-anthropic")
PACKAGES += ("langgraph", "openai", "anthropic", "httpx")
RUN_TIMEOUT_S = 30.0


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


async def check_one(
    variant: Variant, scenario: Scenario, server: ThreadedMockServer
) -> MultiModelCheck:
    """One run of one variant on one scenario, judged (never raises)."""
    engine = variant.build()
    url = server.openai_url if variant.provider == "openai" else server.anthropic_url
    ctx = RunContext(
        scenario=scenario,
        mock=None,
        base_url=url,
        transport="loopback",
        run_timeout_s=RUN_TIMEOUT_S,
    )
    server.mock.reset()
    prepared = None
    log, token = start_log()
    try:
        try:
            prepared = await engine.prepare(ctx)
            engine.before_run(prepared)
            outcome = await engine.execute(prepared)
        except Exception as exc:
            outcome = exception_outcome(exc)
    finally:
        end_log(token)
        agent = getattr(prepared, "agent", None)
        if hasattr(agent, "aclose"):
            await agent.aclose()
        await engine.aclose()
    requests = list(server.mock.requests)  # every request of this run, as the mock got it
    record = RunRecord(
        engine=variant.engine,
        scenario=scenario.name,
        status=outcome.status,
        final_answer=outcome.final_answer,
        llm_calls=len(requests),
        tool_calls=len(log.tools),
        tools=[ToolCallRecord(t.name, t.args, t.ok, t.duration_ms, t.error) for t in log.tools],
        wall_ms=0.0,
        cpu_ms=0.0,
        prompt_tokens=sum(r.prompt_tokens for r in requests),
        completion_tokens=sum(r.completion_tokens for r in requests),
        requests=[],
        request_tokens=[r.prompt_tokens for r in requests],
        termination=outcome.termination,
        error=outcome.error,
    )
    failures = scenario_misses(record, scenario)
    apis = sorted({r.api for r in requests})
    if apis and apis != [variant.provider]:
        failures.append(f"spoke {', '.join(apis)}, not {variant.provider}")
    return MultiModelCheck(
        scenario=scenario.name,
        ok=not failures,
        status=outcome.status,
        termination=outcome.termination,
        llm_calls=record.llm_calls,
        tool_calls=record.tool_calls,
        apis=tuple(apis),
        answer_shape=outcome.extra.get("answer_shape"),
        misses=tuple(failures),
        error=(outcome.error or "")[:500] or None,
    )


def scenario_misses(record: RunRecord, scenario: Scenario) -> list[str]:
    """How the run differs from the scenario's expectations for its engine."""
    from scenarios.expect import misses

    return misses(scenario.expect.for_engine(record.engine), observed(record, scenario))


def _note(variant: Variant, checks: Sequence[MultiModelCheck]) -> str:
    failed = [c for c in checks if not c.ok]
    parts = [variant.note] if variant.note else []
    if failed:
        first = failed[0]
        what = "; ".join(first.misses) or first.error or "failed"
        if first.answer_shape and first.answer_shape != "text":
            what += f" (the agent returned {first.answer_shape})"
        parts.append(f"{len(failed)}/{len(checks)} scenarios fail, e.g. {first.scenario}: {what}")
    return "; ".join(parts)


async def check_variants(
    variants: Iterable[Variant],
    scenarios: Sequence[Scenario],
    progress: Callable[[str], None] = lambda _: None,
) -> list[MultiModelRow]:
    """Every variant on every scenario, one row per variant."""
    mock = MockLLM(scenarios={s.name: s for s in scenarios})
    rows = []
    with ThreadedMockServer(mock) as server:
        for variant in variants:
            checks = [await check_one(variant, scenario, server) for scenario in scenarios]
            statements = sum(statements_changed(a, b) for a, b in variant.code)
            row = MultiModelRow(
                engine=variant.engine,
                provider=variant.provider,
                fixed=variant.fixed,
                works=all(c.ok for c in checks),
                statements_changed=statements,
                code=tuple(f"{a} -> {b}" for a, b in variant.code),
                checks=tuple(checks),
                note=_note(variant, checks),
            )
            progress(
                f"{variant.label}: {'works' if row.works else 'does not work'} "
                f"({sum(c.ok for c in checks)}/{len(checks)} scenarios), "
                f"{statements} statements changed"
            )
            rows.append(row)
    return rows


def run_check(
    out: Path,
    scenarios: Sequence[Scenario],
    variants: Iterable[Variant] = VARIANTS,
    progress: Callable[[str], None] = lambda _: None,
) -> Path:
    """Run the check and write ``out/multimodel.json``; returns its path."""
    started = time.monotonic()
    rows = asyncio.run(check_variants(variants, scenarios, progress))
    document = MultiModelFile(
        schema_version=SCHEMA_VERSION,
        scenarios=tuple(s.name for s in scenarios),
        packages={name: _version(name) for name in PACKAGES},
        duration_s=time.monotonic() - started,
        rows=tuple(rows),
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / MULTIMODEL
    path.write_text(dumps_line(document.model_dump(mode="json")), encoding="utf-8")
    return path
