"""What a cell is given: the scenario's tools and a chat model in the engine's own types, on the mock.

A cell is ``build(kit) -> ask`` where ``ask(user, question)`` serves one request. The kit holds
only what every program has anyway and is not the customisation: the model client (built
here because it must point at the mock), the scenario's tools (the same behaviour for every
engine, recording each execution), the system prompt, and where traces go. ``Kit`` is the
same class for every engine; ``kit_for`` fills it with the engine's own types.

Traces: LangChain's go to LangSmith, so a small LangSmith-shaped collector listens on
127.0.0.1 (``TraceSink``) and keeps what a ``langsmith.Client`` uploads to it:
``kit.trace_client(**options)`` is ``langsmith.Client(**options)`` pointed there (and flushed
by the harness after each request, as a service flushes at shutdown); a cell whose trace is
an object (ours) appends its export to ``kit.traces`` itself.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.engines.kit.tools import build_tools
from bench.model.mock import PLACEHOLDER_KEY
from bench.referee import MockLLM
from bench.referee.transport import BASE_URL, mock_async_client
from scenarios import Scenario

Ask = Callable[[str, str], Awaitable[Any]]
API_KEY = PLACEHOLDER_KEY  # the mock accepts any key
TRACE_API_KEY = "lsv2-schedbench-catalogue"


@dataclass
class Kit:
    """The ingredients of one cell (see the module docstring)."""

    scenario: Scenario
    tools: list[Any]  # the engine's own tool objects
    chat_model: Callable[..., Any]  # (model=None, max_retries=None) -> the engine's chat model
    system_prompt: str
    large_model: str  # switch_model: the model to move to
    sink: TraceSink | None = None  # where LangSmith clients made by trace_client upload
    traces: list[str] = field(default_factory=list)  # trace text that left the process
    prompt: Any = None  # AgentExecutor: the docs' tool-calling prompt
    _clients: list[Any] = field(default_factory=list)

    @property
    def model(self) -> str:
        return f"scenario/{self.scenario.name}"

    def trace_client(self, **options: Any) -> Any:
        """``langsmith.Client(**options)``, uploading to the loopback sink."""
        from langsmith import Client

        if self.sink is None:
            raise RuntimeError("this kit has no trace sink")
        client = Client(api_url=self.sink.url, api_key=TRACE_API_KEY, **options)
        self._clients.append(client)
        return client

    def collect_traces(self) -> None:
        """Flush the LangSmith clients made here; keep what reached the sink (blocking)."""
        for client in self._clients:
            client.flush()
        if self.sink is not None:
            self.traces.extend(self.sink.take())


class TraceSink:
    """A LangSmith-shaped endpoint on 127.0.0.1 that keeps every body uploaded to it."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.lock = lock = threading.Lock()
        bodies = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                with lock:
                    bodies.append(body)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = do_PATCH = _answer

            def log_message(self, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def take(self) -> list[str]:
        """The bodies received since the last call, as text."""
        with self.lock:
            taken = list(self.bodies)
            self.bodies.clear()
        return [b.decode("utf-8", "replace") for b in taken if b]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def langchain_model(mock: MockLLM, default_model: str) -> Callable[..., Any]:
    from langchain_baseline.common import AgentSettings, make_chat_model

    def chat_model(model: str | None = None, max_retries: int | None = None) -> Any:
        settings = AgentSettings(max_retries=3 if max_retries is None else max_retries)
        return make_chat_model(
            model=model or default_model,
            base_url=BASE_URL,
            settings=settings,
            api_key=API_KEY,
            http_async_client=mock_async_client(mock, "httpx2"),
        )

    return chat_model


def scheduler_model(mock: MockLLM, default_model: str) -> Callable[..., Any]:
    from scheduler.llm import OpenAIChatClient

    def chat_model(model: str | None = None, max_retries: int | None = None) -> Any:
        return OpenAIChatClient(
            base_url=BASE_URL,
            model=model or default_model,
            api_key=API_KEY,
            http_client=mock_async_client(mock, "httpx"),
            max_retries=3 if max_retries is None else max_retries,
        )

    return chat_model


def openai_agents_model(mock: MockLLM, default_model: str) -> Callable[..., Any]:
    import openai
    from agents import OpenAIChatCompletionsModel, set_trace_processors

    set_trace_processors([])  # no export to OpenAI's backend; a cell may add its own
    lib = "httpx2" if int(openai.__version__.split(".", 1)[0]) >= 3 else "httpx"

    def chat_model(model: str | None = None, max_retries: int | None = None) -> Any:
        client = openai.AsyncOpenAI(
            base_url=BASE_URL,
            api_key=API_KEY,
            http_client=mock_async_client(mock, lib),
            max_retries=2 if max_retries is None else max_retries,
        )
        return OpenAIChatCompletionsModel(model=model or default_model, openai_client=client)

    return chat_model


def openai_agents_tools(tools: list[Any]) -> list[Any]:
    """The scenario tools as the SDK's ``FunctionTool`` (as ``bench.engines``' adapter does)."""
    import json

    from agents import FunctionTool

    def function_tool(tool: Any) -> Any:
        async def on_invoke_tool(_context: Any, arguments: str) -> str:
            return await tool.acall(**json.loads(arguments or "{}"))

        return FunctionTool(
            name=tool.name,
            description=tool.description,
            params_json_schema=tool.parameters,
            on_invoke_tool=on_invoke_tool,
            strict_json_schema=False,
        )

    return [function_tool(t) for t in tools]


def chat_model_factory(engine: str, mock: MockLLM, model: str) -> Callable[..., Any]:
    """``(model=None, max_retries=None) -> chat model`` of ``engine``'s family, on the mock."""
    if engine == "scheduler":
        return scheduler_model(mock, model)
    if engine == "openai-agents":
        return openai_agents_model(mock, model)
    return langchain_model(mock, model)


def executor_prompt(system_prompt: str) -> Any:
    """The tool-calling prompt of LangChain's AgentExecutor docs."""
    from langchain_core.prompts import ChatPromptTemplate

    return ChatPromptTemplate.from_messages(
        [
            ("system", system_prompt),
            ("placeholder", "{chat_history}"),
            ("human", "{input}"),
            ("placeholder", "{agent_scratchpad}"),
        ]
    )


def scheduler_tools(tools: list[Any]) -> list[Any]:
    from scheduler import ToolSpec

    return [
        ToolSpec(name=t.name, description=t.description, parameters=t.parameters, handler=t.acall)
        for t in tools
    ]


def kit_for(engine: str, scenario: Scenario, mock: MockLLM, sink: TraceSink | None) -> Kit:
    """The kit of ``engine`` (``lc-create-agent``, ``lc-agentexecutor``, ``scheduler``, or a
    peer: ``openai-agents``, in its own environment)."""
    tools = build_tools(scenario)
    model = f"scenario/{scenario.name}"
    common = {
        "scenario": scenario,
        "system_prompt": scenario.system_prompt,
        "large_model": f"scenario/{scenario.name}_large",
        "sink": sink,
    }
    if engine in ("lc-create-agent", "lc-agentexecutor"):
        from langchain_baseline.common import structured_tools

        prompt = executor_prompt(scenario.system_prompt) if engine == "lc-agentexecutor" else None
        return Kit(
            tools=structured_tools(tools),
            chat_model=langchain_model(mock, model),
            prompt=prompt,
            **common,
        )
    if engine == "scheduler":
        return Kit(tools=scheduler_tools(tools), chat_model=scheduler_model(mock, model), **common)
    if engine == "openai-agents":
        return Kit(
            tools=openai_agents_tools(tools), chat_model=openai_agents_model(mock, model), **common
        )
    raise ValueError(f"no catalogue kit for engine {engine!r}")
