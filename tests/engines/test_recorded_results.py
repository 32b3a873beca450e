"""Scenario tools with recorded results: what the real tool returned, by arguments."""

from __future__ import annotations

import pytest

from bench.engines.kit.runlog import end_log, start_log
from bench.engines.kit.tools import ScenarioTool, ToolFailure
from scenarios import ToolDef

TOOL = ToolDef.model_validate(
    {
        "name": "track",
        "description": "Track a parcel.",
        "behavior": {
            "results": [
                {"args": {"parcel": "A"}, "returns": "A: in transit"},
                {"args": {"parcel": "B"}, "returns": "B: delivered"},
                {"args": {"parcel": "A"}, "returns": "A: delivered"},
            ]
        },
    }
)


async def test_each_call_gets_the_next_result_recorded_for_its_arguments() -> None:
    tool = ScenarioTool(TOOL)
    for _ in range(2):  # every run starts afresh
        log, token = start_log()
        try:
            answers = [
                await tool.acall(parcel="A"),
                tool.call(parcel="B"),
                await tool.acall(parcel="A"),
                await tool.acall(parcel="A"),  # past the recording: the last one repeats
            ]
            with pytest.raises(
                ToolFailure, match=r'no result was recorded for track\(\{"parcel": "C"\}\)'
            ):
                await tool.acall(parcel="C")
        finally:
            end_log(token)
        assert answers == ["A: in transit", "B: delivered", "A: delivered", "A: delivered"]
        assert [(t.name, t.args, t.ok) for t in log.tools] == [
            ("track", {"parcel": "A"}, True),
            ("track", {"parcel": "B"}, True),
            ("track", {"parcel": "A"}, True),
            ("track", {"parcel": "A"}, True),
            ("track", {"parcel": "C"}, False),
        ]
