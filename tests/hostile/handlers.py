"""An importable handler module for the hostile tests (it lacks the function they name)."""

from __future__ import annotations


def greet(name: str) -> str:
    return f"hello {name}"
