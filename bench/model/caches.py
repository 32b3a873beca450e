"""Where schedbench keeps what it may reuse between runs: one directory for every cache (the
results cache, ``bench.runner.cache``; the code-size counts, ``bench.engines.codesize``)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VARIABLE = "SCHEDBENCH_CACHE_DIR"
# SCHEDBENCH_CACHE_DIR=off: nothing is read from or kept in a cache (the tests' setting)
OFF = "off"


def cache_directory() -> Path | None:
    """``$SCHEDBENCH_CACHE_DIR`` (``off``: None, no cache), else ``$XDG_CACHE_HOME/schedbench``,
    else ``~/.cache/schedbench``."""
    given = os.environ.get(ENV_VARIABLE)
    if given == OFF:
        return None
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "schedbench"
