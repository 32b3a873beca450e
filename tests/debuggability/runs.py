"""Runs made by hand for the ground-truth and scorer tests: request bodies and run records."""

from __future__ import annotations

from typing import Any

from bench.engines.base import RunRecord, ToolCallRecord


def tool_specs(scenario) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in scenario.tools
    ]


def bodies(scenario, steps: int, repeats: dict[int, int] | None = None) -> list[dict[str, Any]]:
    """Tool-protocol request bodies as a plain loop sends them: ``steps`` LLM steps, step
    ``s`` sent ``repeats[s]`` times (a retried call), the script's calls in the history."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": scenario.system_prompt},
        {"role": "user", "content": scenario.user},
    ]
    out = []
    for step in range(steps):
        body = {"model": f"scenario/{scenario.name}", "messages": list(messages)}
        body["tools"] = tool_specs(scenario)
        out.extend([body] * (repeats or {}).get(step + 1, 1))
        turn = scenario.script[step]
        calls = [
            {
                "id": f"c{step}{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": "{}"},
            }
            for i, c in enumerate(turn.tool_calls)
        ]
        messages.append({"role": "assistant", "content": turn.content, "tool_calls": calls})
        messages.extend({"role": "tool", "tool_call_id": c["id"], "content": "x"} for c in calls)
    return out


def record(
    scenario,
    requests: list[dict[str, Any]],
    tools: list[ToolCallRecord],
    status: str = "completed",
    final: str | None = None,
    termination: str = "stop",
) -> RunRecord:
    return RunRecord(
        engine="test",
        scenario=scenario.name,
        status=status,
        final_answer=final,
        llm_calls=len(requests),
        tool_calls=len(tools),
        tools=tools,
        wall_ms=1.0,
        cpu_ms=1.0,
        prompt_tokens=0,
        completion_tokens=0,
        requests=requests,
        termination=termination,
    )
