"""The package grouping: known functions land in the right groups; helpers and C functions
are charged to their callers."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import httpx2
import openai
import pydantic
from langchain_classic.agents import AgentExecutor
from langchain_core.callbacks.manager import AsyncCallbackManager
from langchain_core.messages import AIMessage
from langchain_core.runnables.base import RunnableSequence
from langchain_core.tracers.base import AsyncBaseTracer
from langchain_openai import ChatOpenAI
from langgraph.pregel import Pregel

import scheduler
from bench.engines.kit.tools import ScenarioTool
from bench.engines.raw import RawEngine
from bench.probe import groups
from bench.probe.counting import frame_group
from bench.probe.groups import HARNESS, HELPER, OTHER, class_of, group_of, owner_group
from bench.probe.timing import grouped_tottime, module_of_file
from bench.referee.core import MockLLM
from tests.probe import sample_code


def test_known_functions_are_grouped_by_their_package() -> None:
    functions = {
        AsyncCallbackManager.on_chain_start: "langchain_core.callbacks",
        AsyncBaseTracer._start_trace: "langchain_core.tracers",
        RunnableSequence.ainvoke: "langchain_core.runnables",
        AIMessage.__init__: "langchain_core (rest)",
        AgentExecutor._acall: "langchain_classic",
        ChatOpenAI._astream: "langchain_openai",
        Pregel.ainvoke: "langgraph",
        scheduler.LightweightAgent.run: "scheduler",
        openai.AsyncOpenAI.__init__: "openai",
        httpx.AsyncClient.send: "httpx",
        httpx2.AsyncClient.send: "httpx",
        pydantic.BaseModel.model_validate: "pydantic",
        asyncio.sleep: "asyncio",
        json.dumps: "json",
        MockLLM.handle: HARNESS,
        ScenarioTool.acall: HARNESS,
        RawEngine.execute: "engine code",
        uuid.uuid4: HELPER,
    }
    assert {f: group_of(f.__module__) for f in functions} == functions
    assert group_of("langchain.agents.factory") == "langchain"
    assert group_of("langchain_corex") == OTHER  # a prefix matches whole module names only
    assert group_of("numpy.core") == OTHER
    assert group_of("typing") == HELPER
    assert group_of(None) == OTHER
    assert set(groups.CALLBACK_RUNNABLE_GROUPS) <= set(groups.GROUPS)


def test_langsmiths_traceable_spans_count_as_callback_and_tracing_time() -> None:
    """create_agent wraps every wrap_* middleware layer in langsmith.traceable; its wrapper
    and the thread hand-off it makes are tracing machinery (claim 2), tracing on or off."""
    import langsmith
    from langsmith._internal import _aiter

    async def layer() -> None: ...

    wrapper = langsmith.traceable(name="layer")(layer)
    # a frame is grouped by the module its function was defined in (its globals' __name__)
    for module in (wrapper.__globals__["__name__"], _aiter.aio_to_thread.__module__):
        assert group_of(module) in groups.CALLBACK_RUNNABLE_GROUPS, module


def test_a_helper_is_charged_to_its_nearest_caller(sample_group: str) -> None:
    frame = sample_code.deepcopy_frame()  # copy.deepcopy's frame, called from sample_code
    assert frame.f_globals["__name__"] == "copy"
    assert frame_group(frame) == sample_group
    assert owner_group(["typing", "copy", "langgraph.pregel.main"]) == "langgraph"
    assert owner_group(["typing"]) == OTHER


def test_class_of_reads_the_qualified_name() -> None:
    assert class_of("RunnableSequence.ainvoke") == "RunnableSequence"
    assert class_of("recording_transport_class.<locals>.Recording.handle") == "Recording"
    assert class_of("f.<locals>.g") is None
    assert class_of("plain") is None


def test_cprofile_time_of_c_functions_and_helpers_goes_to_their_callers() -> None:
    site = "/venv/lib/python3.11/site-packages"
    callbacks = (f"{site}/langchain_core/callbacks/manager.py", 10, "on_chain_start")
    sdk = (f"{site}/openai/_base_client.py", 20, "request")
    helper = (f"{site}/typing_extensions.py", 30, "__instancecheck__")
    builtin = ("~", 0, "<built-in method builtins.isinstance>")
    orphan = ("~", 0, "<built-in method time.perf_counter>")
    stats = {
        callbacks: (1, 1, 0.010, 0.050, {}),
        sdk: (1, 1, 0.020, 0.050, {}),
        # 4 ms of helper: 3 from the callbacks, 1 from the SDK
        helper: (2, 2, 0.004, 0.004, {callbacks: (1, 1, 0.003, 0.003), sdk: (1, 1, 0.001, 0.001)}),
        # 8 ms of builtin: 6 from the helper, 2 from the SDK
        builtin: (3, 3, 0.008, 0.008, {helper: (2, 2, 0.006, 0.006), sdk: (1, 1, 0.002, 0.002)}),
        orphan: (1, 1, 0.001, 0.001, {}),
    }
    assert module_of_file(callbacks[0]) == "langchain_core.callbacks.manager"
    got = {g: round(s * 1000, 6) for g, s in grouped_tottime(stats).items()}
    # the builtin's 6 ms via the helper split 3:1 like the helper's own time
    assert got == {
        "langchain_core.callbacks": 10 + 3 + 4.5,
        "openai": 20 + 1 + 2 + 1.5,
        OTHER: 1,
    }


def test_peer_frameworks_have_their_group_and_are_probed_in_their_environment() -> None:
    from bench.engines.registry import REGISTRY
    from bench.probe.run import _interpreter, probed_engines

    for module in ("agents.run", "pydantic_ai.agent", "pydantic_graph", "agno.agent", "strands"):
        assert group_of(module) == groups.PEER, module
    assert group_of("pydantic.main") == "pydantic"  # pydantic_ai is not pydantic, and back
    assert group_of("agentsx") == OTHER
    measured, skipped = probed_engines()
    peers = [e for e in measured if REGISTRY[e].environment != "main"]
    assert "openai-agents" in peers and "pydantic-ai" in peers
    assert not [e for e in measured if REGISTRY[e].version_line or REGISTRY[e].outcome_only]
    assert "lc-agentexecutor@0.1" in skipped
    for family in {REGISTRY[e].family for e in measured} - {"raw", "openai-sdk"}:  # no framework
        assert set(groups.FRAMEWORK_GROUPS[family]) <= set(groups.GROUPS), family
    assert _interpreter("scheduler") == __import__("sys").executable
