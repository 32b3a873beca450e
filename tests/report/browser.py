"""Headless Chromium driven over the DevTools protocol, on a pipe (no sockets, no packages).

``--remote-debugging-pipe`` makes Chromium read protocol messages from fd 3 and write its
answers to fd 4, each message a JSON document ending in a NUL byte. ``Runtime.evaluate``
runs in the page regardless of its Content-Security-Policy, so the report under test stays
exactly as written (no script of ours is injected into it).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = shutil.which("chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
)


class Browser:
    """One Chromium process; ``evaluate_when`` loads a page and evaluates an expression."""

    def __init__(self, timeout_s: float = 30.0):
        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed")
        self.timeout_s = timeout_s
        self._profile = tempfile.TemporaryDirectory(prefix="schedbench-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()

        def wire() -> None:  # in the child: our pipe ends become fds 3 and 4
            read_end, write_end = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self._proc = subprocess.Popen(
            [
                CHROMIUM,
                *FLAGS,
                f"--user-data-dir={self._profile.name}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,
            close_fds=False,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next_id = 0

    def call(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self._next_id:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer["result"]
            ready, _, _ = select.select([self._from_chrome], [], [], 0.2)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buffer += chunk
        raise TimeoutError(f"no answer to {method} within {self.timeout_s:g} s")

    def evaluate_when(self, url: str, expression: str) -> Any:
        """Open ``url`` in a new tab; poll ``expression`` until it returns non-null."""
        target = self.call("Target.createTarget", {"url": url})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            result = self.call(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session
            )["result"]
            if result.get("value") is not None:
                return result["value"]
            time.sleep(0.1)
        raise TimeoutError(f"{url}: the page did not finish loading")

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close")
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)
        self._profile.cleanup()

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


PAGE_STATE = """(() => {
  // the new tab starts as about:blank, which is "complete" with no images: wait for ours
  if (location.protocol !== 'file:' || document.readyState !== 'complete') return null;
  const imgs = [...document.images];
  if (imgs.some(i => !i.complete)) return null;
  return {
    images: imgs.map(i => ({alt: i.alt, width: i.naturalWidth, height: i.naturalHeight,
                            inline: i.src.startsWith('data:image/png;base64,')})),
    matrixRows: document.querySelectorAll('table.decision-matrix tbody tr').length,
    ledgerRows: document.querySelectorAll('table.claims-ledger tbody tr').length,
    ledgerVerdicts: [...document.querySelectorAll('table.claims-ledger td[class^=verdict]')]
                      .map(td => td.textContent),
    scripts: document.scripts.length,
    pwned: window.__pwned === true,
    external: performance.getEntriesByType('resource')
                .map(e => e.name).filter(n => !n.startsWith('data:')),
    title: document.title,
  };
})()"""


def page_state(html: Path) -> dict[str, Any]:
    """What the report looks like to a browser: images, tables, scripts, outside requests."""
    with Browser() as browser:
        return browser.evaluate_when(html.resolve().as_uri(), PAGE_STATE)
