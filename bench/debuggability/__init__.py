"""Debuggability, measured: capture each engine's debug output and score it against truth.

``truth`` derives the facts of a run, ``match`` holds the rules that find a fact in an
output, ``localise`` judges whether the failing call can be identified, ``score`` puts them
together, ``capture`` runs an engine with a debug mode on, ``modes`` lists the modes per
engine, ``results`` writes ``debuggability.csv`` and the outputs, ``render`` the excerpts and
side-by-side views. See docs/debuggability.md.
"""

from bench.debuggability.results import score_run_dir, write_debuggability

__all__ = ["score_run_dir", "write_debuggability"]
