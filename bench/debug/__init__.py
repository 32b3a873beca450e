"""Debuggability, measured: capture each engine's debug output and score it against truth.

``truth`` derives the facts of a run, ``score`` finds them in a debug output, ``capture``
runs an engine with a debug mode on, ``modes`` lists the modes per engine, ``results``
writes ``debuggability.csv``. See docs/debuggability.md.
"""

from bench.debug.results import score_run_dir, write_debuggability

__all__ = ["score_run_dir", "write_debuggability"]
