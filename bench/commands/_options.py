"""Checks of option values shared by the sub-commands: a bad value is a ``UsageError``."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from bench.errors import UsageError


def check_range(option: str, value: float | None, low: float, high: float) -> None:
    """A number option outside ``low..high`` is a usage error that names the allowed range."""
    if value is not None and not low <= value <= high:
        raise UsageError(f"{option} must be between {low:,} and {high:,}, not {value:,}")


def writable_dir(directory: Path, option: str, hint: str = "") -> None:
    """Create ``directory`` if needed and prove it writable (a probe file), before any work
    that would only fail at its first write."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UsageError(f"{option} {directory}: cannot write there ({reason}){hint}") from None


def defaults_of(cls: type) -> dict[str, Any]:
    """A dataclass's plain defaults by field name (what a ``--help`` text quotes)."""
    return {
        f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING
    }
