"""Text from scenario files, tools and run folders made safe to show: control characters visible.

Every output (the console, report.md, report.html) passes untrusted text through ``visible``:
an escape sequence (``\\x1b[2J``), a carriage return that overwrites a line, a bidirectional
override that reorders what the reader sees, or a NUL reaches nobody's terminal or document
as itself; it is shown as its ``\\xNN`` / ``\\uNNNN`` escape instead. Tabs and newlines are
kept (each output decides what a newline means).
"""

from __future__ import annotations

import re

# C0 and C1 controls and DEL (but tab and newline), the bidirectional embeddings, overrides
# and isolates, and the Unicode line and paragraph separators
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control character (but tab and newline) shown as its escape."""
    text = str(text)
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text
