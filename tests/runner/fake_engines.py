"""Test-only engines, registered through ``SCHEDBENCH_EXTRA_ENGINES`` (see bench.engines.plugins).

``FakeRaw`` is a minimal tool-calling loop against the mock (it stands in for ``raw``);
``FakeSlow`` adds a fixed delay per step and a longer system prompt (so it is measurably
slower and sends more tokens); ``FakeCrash`` kills its own process on its third run when
``SCHEDBENCH_FAKE_CRASH_FILE`` names an existing file (deleting it, so a resume succeeds).

For the load phase: ``FakeHog`` holds its process's event loop for 80 ms on every LLM step
(a deliberately slow engine: one process cannot keep up with 20 runs/s), ``FakeWrong``
answers without the scenario's key phrase (completed, but not as expected) and
``FakeFailing`` fails at once without calling the LLM (a fast failure).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sys
import time
from typing import Any

import httpx

from bench.engines.base import Engine, RunContext, RunRecord, ToolCallRecord
from bench.engines.kit.runlog import end_log, start_log
from bench.engines.kit.tools import build_tools


class FakeRaw(Engine):
    name = "fake-raw"
    description = "a minimal tool-calling loop (test double)"
    step_delay_s = 0.0
    extra_system = ""

    async def prepare(self, ctx: RunContext) -> Any:
        scenario = ctx.scenario
        if ctx.mock is not None:
            from bench.referee.transport import mock_async_client

            client = mock_async_client(ctx.mock)
        else:
            client = httpx.AsyncClient(base_url=ctx.base_url)
        tools = {t.name: t for t in build_tools(scenario)}
        return {"ctx": ctx, "client": client, "tools": tools, "runs": 0}

    async def run(self, prepared: Any) -> RunRecord:
        prepared["runs"] += 1
        self.before_run(prepared["runs"])
        ctx: RunContext = prepared["ctx"]
        scenario = ctx.scenario
        tools = prepared["tools"]
        log, token = start_log()
        start, cpu = time.perf_counter(), time.process_time()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": scenario.system_prompt + self.extra_system},
            {"role": "user", "content": scenario.user},
        ]
        schemas = [t.openai_schema() for t in tools.values()]
        bodies, llm_calls, prompt, completion = [], 0, 0, 0
        request_tokens: list[int] = []
        status, final, error, termination = "failed", None, None, "max_steps"
        try:
            for _ in range(scenario.limits.max_steps):
                self.before_step()
                if self.step_delay_s:
                    await asyncio.sleep(self.step_delay_s)
                body = {"model": f"scenario/{scenario.name}", "messages": list(messages)}
                if schemas:
                    body["tools"] = schemas
                bodies.append(body)
                llm_calls += 1
                response = await prepared["client"].post("/chat/completions", json=body)
                response.raise_for_status()
                data = response.json()
                prompt += data["usage"]["prompt_tokens"]
                request_tokens.append(data["usage"]["prompt_tokens"])
                completion += data["usage"]["completion_tokens"]
                message = data["choices"][0]["message"]
                messages.append(message)
                calls = message.get("tool_calls") or []
                if not calls:
                    status, final, termination = "completed", message.get("content"), "stop"
                    break
                for call in calls:
                    fn = call["function"]
                    result = await tools[fn["name"]].acall(**json.loads(fn["arguments"]))
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        except Exception as exc:
            status, error, termination = "error", f"{type(exc).__name__}: {exc}", "error"
        finally:
            end_log(token)
        wall = (time.perf_counter() - start) * 1000
        return RunRecord(
            engine=self.name,
            scenario=scenario.name,
            status=status,
            final_answer=final,
            llm_calls=llm_calls,
            tool_calls=len(log.tools),
            tools=[ToolCallRecord(t.name, t.args, t.ok, t.duration_ms, t.error) for t in log.tools],
            wall_ms=wall,
            cpu_ms=(time.process_time() - cpu) * 1000,
            prompt_tokens=prompt,
            completion_tokens=completion,
            requests=bodies,
            request_tokens=request_tokens,
            termination=termination,
            error=error,
            tool_ms=log.tool_time_ms(),
        )

    def before_run(self, number: int) -> None:
        pass

    def before_step(self) -> None:
        pass


class FakeSlow(FakeRaw):
    name = "fake-slow"
    description = "the fake loop with 2 ms per step and a longer system prompt"
    step_delay_s = 0.002
    extra_system = " Think step by step and always double-check the tool results before answering."


class FakeCrash(FakeRaw):
    name = "fake-crash"
    description = "the fake loop that kills its own process once (see module docstring)"

    def before_run(self, number: int) -> None:
        marker = os.environ.get("SCHEDBENCH_FAKE_CRASH_FILE")
        if number == 3 and marker and os.path.exists(marker):
            os.unlink(marker)
            print("fake-crash: dying on purpose", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)


class FakeHog(FakeRaw):
    name = "fake-hog"
    description = "the fake loop that blocks its event loop for 80 ms on every LLM step"

    def before_step(self) -> None:
        time.sleep(0.08)


class FakeWrong(FakeRaw):
    name = "fake-wrong"
    description = "the fake loop whose final answer misses the expected phrase"

    async def run(self, prepared: Any) -> RunRecord:
        record = await super().run(prepared)
        return dataclasses.replace(record, final_answer="I cannot tell.")


class FakeFailing(FakeRaw):
    name = "fake-failing"
    description = "the fake loop that fails at once, before any LLM call"

    async def run(self, prepared: Any) -> RunRecord:
        ctx: RunContext = prepared["ctx"]
        return RunRecord(
            engine=self.name,
            scenario=ctx.scenario.name,
            status="failed",
            final_answer=None,
            llm_calls=0,
            tool_calls=0,
            tools=[],
            wall_ms=0.1,
            cpu_ms=0.1,
            prompt_tokens=0,
            completion_tokens=0,
            requests=[],
            termination="llm_error",
            error="refused on purpose",
        )
