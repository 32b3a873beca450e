"""Fixtures for the recording tests: an upstream on loopback, the proxy, agents to record.

The upstream is the project's own mock server (its own process, the ``ttft`` latency profile:
~100 ms to the first token, then 1,000 tokens/s, ±10 % per turn) playing ``src_orders``
below. The proxy runs in a thread of the test process. The agents under recording are the
scheduler (``LightweightAgent`` + ``OpenAIChatClient``) and LangChain's ``create_agent``, with
"real" tools: Python functions whose results the recorded scenario must give back.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from bench.referee.server import start_server_process
from bench.traffic.proxy import create_app
from bench.traffic.redact import MASK, Redactor
from bench.traffic.session import RecordingSession
from scenarios import Scenario, load_scenario

API_KEY = "sk-test-SECRET123"  # sent in the Authorization header, and echoed in the prompt
TOKEN = "tok-PRIVATE-789"  # a tool result's session_token (a redacted field)
REDACTED_FIELD = "session_token"
SECRETS = (API_KEY, TOKEN, "SECRET123", "PRIVATE-789")
MODEL = "scenario/src_orders"
FINAL = (  # the answer, as recorded
    f"Order A123 ships as PX-9 and PX-10; both arrive on Friday. Your session {MASK} is still "
    "valid.\nAnything else?"
)

SOURCE = """\
name: src_orders
description: What the upstream model answers in the recording tests.
system_prompt: You are a support agent. Use the tools.
user: unused - the agent under recording sends its own input
tools:
  - name: lookup_order
    description: Look up an order by its id.
    parameters: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  - name: track_parcel
    description: Track one parcel.
    parameters:
      type: object
      properties: {parcel: {type: string}, verbose: {type: boolean}}
      required: [parcel]
script:
  # arguments written the way a real model might: compact, or with odd spacing
  - content: Let me look that up.
    tool_calls: [{name: lookup_order, raw_arguments: '{"order_id":"A123"}', id: call_A}]
  - tool_calls:
      - {name: track_parcel, raw_arguments: '{"parcel": "PX-9",  "verbose": false}', id: call_B}
      - {name: track_parcel, args: {parcel: PX-10}, id: call_C}
  - content: |-
      Order A123 ships as PX-9 and PX-10; both arrive on Friday. Your session tok-PRIVATE-789 is still valid.
      Anything else?
"""

SYSTEM_PROMPT = "You are a support agent. Use the tools."
USER = f"Where is my order A123? My API key is {API_KEY}, if you need it."
TOOL_SCHEMAS = {
    "lookup_order": (
        "Look up an order by its id.",
        {
            "type": "object",
            "properties": {"order_id": {"type": "string"}},
            "required": ["order_id"],
        },
    ),
    "track_parcel": (
        "Track one parcel.",
        {
            "type": "object",
            "properties": {"parcel": {"type": "string"}, "verbose": {"type": "boolean"}},
            "required": ["parcel"],
        },
    ),
}


def lookup_order(order_id: str) -> str:
    return json.dumps({"order_id": order_id, "parcels": ["PX-9", "PX-10"], REDACTED_FIELD: TOKEN})


def track_parcel(parcel: str, verbose: bool = False) -> str:
    return json.dumps(
        {"parcel": parcel, "eta": "Friday", "hub": "Porto" if parcel == "PX-9" else "Faro"}
    )


REAL_TOOLS = {"lookup_order": lookup_order, "track_parcel": track_parcel}


@pytest.fixture(scope="session")
def source_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("upstream")
    (directory / "src_orders.yaml").write_text(SOURCE, encoding="utf-8")
    return directory


@pytest.fixture(scope="session")
def upstream(source_dir: Path) -> Iterator[str]:
    """The upstream's base URL: the mock server playing src_orders, ~100 ms per first token."""
    with start_server_process(source_dir, latency="ttft") as server:
        warm_up(server.base_url, MODEL)
        yield server.base_url


def warm_up(base_url: str, model: str) -> None:
    """One request first: a fresh mock loads its tokenizer on the first (~0.1 s), which would
    be recorded as the model's latency."""
    import httpx

    body = {
        "model": model,
        "messages": [{"role": "user", "content": "?"}],
        "tools": [{"type": "function", "function": {"name": "lookup_order", "parameters": {}}}],
    }
    for stream in (False, True):
        response = httpx.post(
            f"{base_url}/chat/completions", json={**body, "stream": stream}, timeout=30
        )
        assert response.status_code == 200, response.text


def serve_in_thread(app: Any) -> tuple[uvicorn.Server, threading.Thread, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the recording proxy did not start")
        time.sleep(0.01)
    return server, thread, f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


@dataclass
class Proxy:
    url: str
    session: RecordingSession


@contextlib.contextmanager
def recording_proxy(
    upstream_url: str, directory: Path, name: str, redact: tuple[str, ...] = (REDACTED_FIELD,)
) -> Iterator[Proxy]:
    """``schedbench record`` in a thread: the proxy's URL and its session."""
    session = RecordingSession(directory, name, Redactor(fields=redact))
    server, thread, url = serve_in_thread(create_app(upstream_url, session))
    try:
        yield Proxy(url, session)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# -- the agents under recording ---------------------------------------------------------


async def run_scheduler(
    base_url: str, *, stream: bool, model: str = MODEL, http_client: Any = None
) -> str:
    """One run of the scheduler through ``base_url``; returns its final answer."""
    from scheduler import AgentConfig, LightweightAgent, OpenAIChatClient, RunFinished, ToolSpec

    llm = OpenAIChatClient(base_url=base_url, model=model, api_key=API_KEY, http_client=http_client)
    agent = LightweightAgent(llm, AgentConfig(system_prompt=SYSTEM_PROMPT))
    agent.register_tools(
        ToolSpec(name=name, description=d, parameters=p, handler=REAL_TOOLS[name])
        for name, (d, p) in TOOL_SCHEMAS.items()
    )
    if not stream:
        result = await agent.run(USER)
    else:
        result = None
        async for event in agent.stream(USER):
            if isinstance(event, RunFinished):
                result = event.result
    try:
        assert result is not None and result.status.value == "completed", result
        return result.content
    finally:
        if http_client is None:
            await llm.aclose()


async def run_create_agent(base_url: str, model: str = MODEL) -> str:
    """One streamed run of LangChain's ``create_agent`` through ``base_url``."""
    import httpx2
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI

    # its own client: langchain_openai's default one is cached per process, on one loop
    client = httpx2.AsyncClient()
    llm = ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=API_KEY,
        streaming=True,
        stream_usage=True,
        http_async_client=client,
    )
    tools = [
        StructuredTool.from_function(func=REAL_TOOLS[name], name=name, description=d, args_schema=p)
        for name, (d, p) in TOOL_SCHEMAS.items()
    ]
    agent = create_agent(llm, tools=tools, system_prompt=SYSTEM_PROMPT)
    try:
        result = await agent.ainvoke({"messages": [{"role": "user", "content": USER}]})
    finally:
        await client.aclose()
    return result["messages"][-1].text


def masked(text: str) -> str:
    return text.replace(TOKEN, MASK).replace(API_KEY, MASK)


async def record(
    agent: str, upstream_url: str, directory: Path, name: str, model: str = MODEL
) -> Scenario:
    """Run ``agent`` (scheduler, scheduler-stream or create_agent) once through a recording
    proxy in front of ``upstream_url``; the scenario it wrote."""
    with recording_proxy(upstream_url, directory, name) as proxy:
        if agent == "create_agent":
            answer = await run_create_agent(proxy.url, model)
        else:
            answer = await run_scheduler(proxy.url, stream=agent == "scheduler-stream", model=model)
    assert masked(answer) == FINAL  # the agent really ran to its answer
    return load_scenario(directory / f"{name}.yaml")
