"""Redaction: fields masked where they stand and wherever their values reappear."""

from __future__ import annotations

import json
import re

import pytest

from bench.traffic import MASK, Exchange, Redactor
from bench.traffic.redact import header_secrets, load_hook


def exchange(messages: list[dict], answer: dict, **request: object) -> Exchange:
    body = {"model": "m", "messages": messages, **request}
    response = {"choices": [{"index": 0, "message": answer, "finish_reason": "stop"}]}
    return Exchange(request=body, response=response, status=200)


def call(name: str, arguments: str, call_id: str = "c1") -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_field_is_masked_in_json_text_byte_for_byte_and_everywhere_it_reappears() -> None:
    tool_result = '{"user":"ann",  "email": "ann@example.com"}'  # odd spacing is kept
    before = exchange(
        [
            {"role": "user", "content": "Mail ann@example.com the invoice."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("find", '{"email":"ann@example.com"}')],
            },
            {"role": "tool", "tool_call_id": "c1", "content": tool_result},
        ],
        {"role": "assistant", "content": "Sent to ann@example.com."},
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "find",
                    "parameters": {"type": "object", "properties": {"email": {"type": "string"}}},
                },
            }
        ],
    )
    after = Redactor(fields=["EMAIL"])(before)
    assert after.request["messages"] == [
        {"role": "user", "content": f"Mail {MASK} the invoice."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("find", f'{{"email":"{MASK}"}}')],
        },
        {"role": "tool", "tool_call_id": "c1", "content": f'{{"user":"ann",  "email": "{MASK}"}}'},
    ]
    # tool definitions name parameters: a field called email is no secret there
    assert after.request["tools"] == before.request["tools"]
    assert after.message == {"role": "assistant", "content": f"Sent to {MASK}."}


def test_structured_values_and_short_values_are_masked_too() -> None:
    before = exchange(
        [{"role": "user", "content": "pin?"}],
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("unlock", '{"pin": 42, "card": {"number": "4111 1111", "cvc": "737"}}')
            ],
        },
        metadata={"card": {"number": "4111 1111"}},
    )
    after = Redactor(fields=["pin", "card"])(before)
    assert after.request["metadata"] == {"card": MASK}
    # 42 is too short to search for safely, so this JSON text is re-serialised
    assert after.message["tool_calls"][0]["function"]["arguments"] == json.dumps(
        {"pin": MASK, "card": MASK}
    )


def test_header_secrets_and_learned_secrets_mask_later_exchanges() -> None:
    secrets = header_secrets(
        {"Authorization": "Bearer sk-test-SECRET123", "api-key": "azure-KEY-1", "accept": "x"}
    )
    assert secrets == ["Bearer sk-test-SECRET123", "sk-test-SECRET123", "azure-KEY-1"]
    redactor = Redactor(fields=["token"], secrets=secrets)
    first = redactor(
        exchange(
            [{"role": "user", "content": "my key is sk-test-SECRET123"}],
            {"role": "assistant", "content": None, "tool_calls": [call("login", "{}")]},
        )
    )
    assert first.request["messages"][0]["content"] == f"my key is {MASK}"
    second = redactor(
        exchange(
            [{"role": "tool", "tool_call_id": "c1", "content": '{"token": "t-0451"}'}],
            {"role": "assistant", "content": "Logged in."},
        )
    )
    # learned from the second exchange: masked in an earlier one on request
    earlier = exchange(
        [{"role": "user", "content": "use t-0451"}], {"role": "assistant", "content": "ok"}
    )
    assert second.request["messages"][0]["content"] == f'{{"token": "{MASK}"}}'
    assert redactor.mask_known(earlier).request["messages"][0]["content"] == f"use {MASK}"


def upper_content(data: dict) -> dict:
    data["response"]["choices"][0]["message"]["content"] = "HOOKED"
    return data


def test_a_hook_runs_after_the_masking_and_bad_hooks_are_named() -> None:
    redactor = Redactor.from_specs(["name", "tests.traffic.test_redact:upper_content"])
    after = redactor(
        exchange(
            [{"role": "user", "content": "hi", "name": "Ann Lee"}],
            {"role": "assistant", "content": "Hi Ann Lee"},
        )
    )
    assert after.request["messages"] == [{"role": "user", "content": "hi", "name": MASK}]
    assert after.message == {"role": "assistant", "content": "HOOKED"}
    with pytest.raises(
        ValueError, match=re.escape("redaction hook 'tests.traffic.test_redact:nope'")
    ):
        load_hook("tests.traffic.test_redact:nope")
