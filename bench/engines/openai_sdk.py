"""``openai-sdk``: the floor's loop on the official ``openai`` client (``AsyncOpenAI``).

The same minimal loop as ``raw`` (post, run the tools, append, repeat; tool errors become
``Error: ...`` tool messages), but each LLM call goes through
``AsyncOpenAI.chat.completions.create`` — the client ``langchain-openai`` sends through. Next
to ``raw`` it separates what the SDK itself costs (request building, pydantic response
models, its retry machinery) from what LangChain adds on top. It gets the settings
``ChatOpenAI`` passes to the SDK: the scenario's LLM timeout and ``max_retries`` (so it
retries 429 / 5xx / timeouts as LangChain does, and ``raw`` does not).

The client is built once per worker on the recording ``httpx2`` client (in-process: served
by the mock, no sockets), outside the timed region.
"""

from __future__ import annotations

from typing import Any

import openai

from bench.engines.raw import LLMCallFailed, Message, RawEngine, RawPrepared, StreamedMessage
from bench.model.mock import PLACEHOLDER_KEY


class OpenAISDKEngine(RawEngine):
    def client(self, ctx: Any, base_url: str) -> openai.AsyncOpenAI:
        limits = ctx.scenario.limits
        return openai.AsyncOpenAI(
            base_url=base_url,
            api_key=PLACEHOLDER_KEY,
            timeout=limits.llm_timeout_s,
            max_retries=limits.max_retries,
            http_client=self.http_client(ctx, "httpx2"),
        )

    async def complete(self, p: RawPrepared, body: dict[str, Any]) -> tuple[Message, None]:
        try:
            response = await p.client.chat.completions.create(**body)
        except openai.APIError as exc:
            raise LLMCallFailed(f"{type(exc).__name__}: {exc}") from exc
        message = response.choices[0].message
        calls = message.tool_calls
        return {
            "role": "assistant",
            "content": message.content,
            "tool_calls": [call.model_dump() for call in calls] if calls else None,
        }, None

    async def complete_streamed(
        self, p: RawPrepared, body: dict[str, Any]
    ) -> tuple[Message, float | None]:
        streamed = StreamedMessage()
        try:
            stream = await p.client.chat.completions.create(**body)
            async for chunk in stream:
                if not chunk.choices:
                    continue
                delta = chunk.choices[0].delta
                fragments = [
                    {
                        "index": fragment.index,
                        "id": fragment.id,
                        "function": fragment.function.model_dump() if fragment.function else {},
                    }
                    for fragment in delta.tool_calls or ()
                ]
                streamed.add({"content": delta.content, "tool_calls": fragments})
        except openai.APIError as exc:
            raise LLMCallFailed(f"{type(exc).__name__}: {exc}") from exc
        return streamed.message(), streamed.first_content_at
