"""Debuggability, measured: capture each engine's debug output and score it against truth.

``truth`` derives the facts of a run, ``score`` finds them in a debug output, ``capture``
runs an engine with a debug mode on, ``modes`` lists the modes per engine. See
docs/debuggability.md.
"""
