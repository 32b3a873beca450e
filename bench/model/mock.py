"""What every client of the mock sends it: an API key (the mock accepts any)."""

from __future__ import annotations

PLACEHOLDER_KEY = "sk-schedbench-mock"  # the key every client of the mock sends
