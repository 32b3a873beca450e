"""Stack depth from the engine's execute to the HTTP send and the tool body."""

from __future__ import annotations

import asyncio

from bench.engines.kit import runlog
from bench.engines.raw import RawEngine
from tests.probe.deep_engines import EXTRA, AnextRawEngine, DeepRawEngine
from tests.probe.helpers import edge_hits

SEND_END = "bench.engines.kit.runlog:recording_transport_class.<locals>.RecordingAsyncTransport.handle_async_request"


async def test_the_raw_loop_stacks_are_its_own_code_and_httpx() -> None:
    hits = await edge_hits(RawEngine(), "customer_returns")
    assert [h.edge for h in hits] == ["send", "tool", "send", "tool", "send"]
    assert all(h.anchored for h in hits)
    tool = hits[1]
    assert tool.text() == [
        "bench.engines.raw:RawEngine.execute",
        "bench.engines.raw:RawEngine._loop",
        "bench.engines.raw:RawEngine._call_tool",  # a task of asyncio.gather: across tasks
        "bench.engines.kit.tools:ScenarioTool.acall",
    ]
    assert (tool.depth, tool.modules, tool.classes) == (
        2,
        ["bench.engines.raw"],
        ["bench.engines.raw.RawEngine"],
    )
    send = hits[0]
    assert send.text()[:4] == [
        "bench.engines.raw:RawEngine.execute",
        "bench.engines.raw:RawEngine._loop",
        "bench.engines.raw:RawEngine.complete",
        "httpx._client:AsyncClient.post",
    ]
    assert send.text()[-1] == SEND_END
    assert send.depth == len(send.text()) - 2
    assert send.modules == ["bench.engines.raw", "httpx._client"]
    assert send.frames_by_group() == {"engine code": 2, "httpx": send.depth - 2}


async def test_an_engine_with_n_more_layers_is_n_frames_deeper() -> None:
    raw = await edge_hits(RawEngine(), "customer_returns")
    deep = await edge_hits(DeepRawEngine(), "customer_returns")
    assert [(h.edge, h.depth) for h in deep] == [(h.edge, h.depth + EXTRA) for h in raw]
    # the extra layers live in one more module, in the deep engine's class and a function
    assert deep[0].modules == sorted([*raw[0].modules, "tests.probe.deep_engines"])
    assert "tests.probe.deep_engines.DeepRawEngine" in deep[0].classes


async def test_a_task_started_from_an_async_generator_still_leads_back_to_execute() -> None:
    raw = await edge_hits(RawEngine(), "single_tool")
    anext_hits = await edge_hits(AnextRawEngine(), "single_tool")
    tool = next(h for h in anext_hits if h.edge == "tool")
    assert tool.anchored
    assert tool.text() == [
        "bench.engines.raw:RawEngine.execute",
        "bench.engines.raw:RawEngine._loop",
        "tests.probe.deep_engines:AnextRawEngine._call_tool",
        "tests.probe.deep_engines:AnextRawEngine._call_tool.<locals>.results",
        "bench.engines.raw:RawEngine._call_tool",
        "bench.engines.kit.tools:ScenarioTool.acall",
    ]
    assert tool.depth == next(h for h in raw if h.edge == "tool").depth + 2


async def test_the_probe_leaves_the_timed_path_as_it_found_it() -> None:
    assert runlog.EDGE_HOOK is None
    await edge_hits(RawEngine(), "single_tool")
    assert runlog.EDGE_HOOK is None
    assert asyncio.get_running_loop().get_task_factory() is None
