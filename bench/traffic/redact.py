"""Masking what must never reach a scenario folder.

Headers are never recorded at all, so API keys in ``Authorization`` (or ``api-key``) never
reach a file; the values of every credential-bearing header are still masked wherever they
appear in a body (an agent that echoes its own key, a cookie repeated in a prompt): the
headers named in ``SECRET_HEADERS``, and any whose name contains one of ``SECRET_WORDS``
(``x-goog-api-key``, ``X-Auth-Token``, ``X-Session-Id``) when its value is at least
``_MIN_GUESSED_CHARS`` long. A ``Cookie`` gives its whole value and each cookie's value;
an ``Authorization`` its value with and without the scheme (``Bearer``, ``Basic``, ...). ``Redactor(fields=...)`` masks more: every value of a JSON key with one of
those names (case-insensitive), in the request and the response, also inside JSON text
carried in a string (tool-call arguments, tool results). Each masked value becomes a secret:
every later occurrence of it, in any string of any exchange (the model repeating it in its
answer), is masked too; JSON text is masked in place, keeping its bytes, and re-serialised
only where that cannot hide a value (one shorter than four characters). ``hooks`` are the user's own functions: each gets and returns
``{"request": ..., "response": ...}`` after the built-in masking.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from bench.traffic.exchange import Exchange, ToolRun

MASK = "[REDACTED]"
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "cookie",
        "set-cookie",
        "x-goog-api-key",
        "x-auth-token",
        "x-amz-security-token",
        "ocp-apim-subscription-key",
    }
)
# a header whose name holds one of these carries a credential (x-my-service-token, ...)
SECRET_WORDS = ("key", "token", "auth", "secret", "cookie", "session", "password", "credential")
_MIN_GUESSED_CHARS = 8  # a guessed header's short value ("on", "true") is no credential
_DEFINITIONS = ("tools", "functions")  # request keys holding tool definitions
_MIN_SECRET_CHARS = 4  # shorter values are masked where they stand, not searched for

Hook = Callable[[dict[str, Any]], dict[str, Any]]


def load_hook(spec: str) -> Hook:
    """A redaction hook named ``module:function``; raises ValueError with the reason."""
    module_name, _, function_name = spec.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), function_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"redaction hook {spec!r}: {exc}") from None
    if not callable(function):
        raise ValueError(f"redaction hook {spec!r}: not a callable")
    return function


def header_secrets(headers: Mapping[str, Any]) -> list[str]:
    """The credentials carried by request headers: each listed or credential-named header's
    value, without its scheme (``Bearer``), and each cookie's value."""
    secrets = []
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str) or not value.strip():
            continue
        lower = name.lower()
        listed = lower in SECRET_HEADERS
        if not listed and not (
            any(word in lower for word in SECRET_WORDS) and len(value) >= _MIN_GUESSED_CHARS
        ):
            continue
        value = value.strip()
        secrets.append(value)
        if "cookie" in lower:
            for pair in value.split(";"):
                _, equals, cookie = pair.partition("=")
                if equals and len(cookie.strip()) >= _MIN_GUESSED_CHARS:  # not "theme=dark"
                    secrets.append(cookie.strip())
            continue
        scheme, space, credential = value.partition(" ")
        if space and credential.strip() and scheme.isalpha():
            secrets.append(credential.strip())
    return [s for s in dict.fromkeys(secrets) if len(s) >= _MIN_SECRET_CHARS]


class Redactor:
    """Masks fields and known secrets in exchanges; remembers every secret it has masked."""

    def __init__(
        self, fields: Iterable[str] = (), hooks: Iterable[Hook] = (), secrets: Iterable[str] = ()
    ):
        self.fields = frozenset(f.lower() for f in fields)
        self.hooks = tuple(hooks)
        self._secrets: set[str] = set()
        for secret in secrets:
            self.add_secret(secret)

    @classmethod
    def from_specs(cls, specs: Iterable[str]) -> Redactor:
        """``--redact`` values: field names, and ``module:function`` hooks (ValueError)."""
        specs = list(specs)
        hooks = [load_hook(spec) for spec in specs if ":" in spec]
        return cls(fields=[spec for spec in specs if ":" not in spec], hooks=hooks)

    def add_secret(self, value: str) -> None:
        """Mask ``value`` wherever it appears from now on."""
        if len(value) >= _MIN_SECRET_CHARS and value != MASK:
            self._secrets.add(value)
            escaped = json.dumps(value, ensure_ascii=False)[1:-1]
            if escaped != value:
                self._secrets.add(escaped)  # as it reads inside JSON text

    def __call__(self, exchange: Exchange) -> Exchange:
        request = exchange.request
        definitions = {}
        if isinstance(request, dict):
            # tool definitions hold property *names* (a field ``city`` is also a parameter
            # called city): no field is masked there, only known secret values
            definitions = {k: request[k] for k in _DEFINITIONS if k in request}
            request = {k: v for k, v in request.items() if k not in _DEFINITIONS}
        data = self._mask_fields({"request": request, "response": exchange.response})
        if definitions:
            data["request"] = {**data["request"], **definitions}
        data = self._mask_secrets(data)
        for hook in self.hooks:
            data = hook(data)
        return exchange.with_bodies(data["request"], data["response"])

    def mask_known(self, exchange: Exchange) -> Exchange:
        """Mask the secrets known by now in an exchange masked earlier (a value learned
        later, e.g. from a tool result, may already have been in the user's message)."""
        return exchange.with_bodies(
            self._mask_secrets(exchange.request), self._mask_secrets(exchange.response)
        )

    def mask_run(self, run: ToolRun) -> ToolRun:
        """A tool run with its arguments masked like the tool calls they answer (fields and
        secrets), and the secrets known by now masked in its error text."""
        args = self._mask_secrets(self._mask_fields(run.args))
        error = self._mask_secrets(run.error)
        return run.model_copy(update={"args": args, "error": error})

    def _mask_fields(self, node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if isinstance(key, str) and key.lower() in self.fields:
                    self._remember(value)
                    out[key] = MASK
                else:
                    out[key] = self._mask_fields(value)
            return out
        if isinstance(node, list):
            return [self._mask_fields(item) for item in node]
        if isinstance(node, str) and self.fields and node.lstrip()[:1] in ("{", "["):
            return self._mask_json_text(node)
        return node

    def _mask_json_text(self, text: str) -> str:
        """JSON text inside a string (tool-call arguments, tool results): its fields' values
        become secrets, which the secret pass masks in place, byte for byte. Where that
        would not hide them (a value too short to search for), the text is re-serialised."""
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        masked = self._mask_fields(parsed)
        if masked == parsed:
            return text
        try:
            if json.loads(self._mask_secrets(text)) == masked:
                return text
        except ValueError:
            pass  # e.g. a masked number leaves ``[REDACTED]`` unquoted
        return json.dumps(masked, ensure_ascii=False)

    def _remember(self, value: Any) -> None:
        if isinstance(value, str):
            self.add_secret(value)
        elif isinstance(value, dict | list):
            self._mask_fields(value)  # nested fields of a masked subtree
            for leaf in _strings(value):
                self.add_secret(leaf)
        elif value is not None and not isinstance(value, bool):
            self.add_secret(json.dumps(value))

    def _mask_secrets(self, node: Any) -> Any:
        if not self._secrets:
            return node
        if isinstance(node, dict):
            return {key: self._mask_secrets(value) for key, value in node.items()}
        if isinstance(node, list):
            return [self._mask_secrets(item) for item in node]
        if isinstance(node, str):
            for secret in sorted(self._secrets, key=len, reverse=True):
                if secret in node:
                    node = node.replace(secret, MASK)
        return node


def _strings(node: Any) -> Iterable[str]:
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)
