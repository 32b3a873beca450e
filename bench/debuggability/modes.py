"""The debug modes: how each engine's users debug a run, and what each mode outputs.

A mode is switched on the way its users switch it on — nothing of ours is added to the
output. The engines see the mode name in ``RunContext.debug``; the switches that LangChain
offers from outside an agent (globals, context managers, attributes of the built objects)
are applied here, around the engine's own ``prepare`` / ``run``:

=================  ==========================================================================
mode               what is switched on, and what counts as its output
=================  ==========================================================================
``none``           nothing (``raw`` has no debug facility: the zero line)
``tree``           scheduler: the trace printed as the article's tree (``print_tree()``)
``json``           scheduler: the trace exported as JSON (``RunResult.trace.to_json()``)
``verbose``        ``AgentExecutor(verbose=True)``: what it prints to stdout
``set-debug``      ``langchain_core.globals.set_debug(True)``: what it prints to stdout
``run-tree``       a ``RunCollectorCallbackHandler`` for the whole call (``collect_runs()``,
                   i.e. a callback in the call's config, which sees LLM and tool events):
                   the collected run tree, serialised to JSON
``stream-debug``   ``create_agent``: ``astream(..., stream_mode="debug")``: the debug events,
                   one JSON document per line
``graph-debug``    ``create_agent(..., debug=True)``: what the graph prints to stdout
=================  ==========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.engines.registry import REGISTRY

NONE = "none"


@dataclass(frozen=True)
class Mode:
    name: str
    description: str
    structured: bool  # the output is JSON (scored by flattening)


MODES: dict[str, Mode] = {
    m.name: m
    for m in (
        Mode(NONE, "no debug output (the zero line)", False),
        Mode("tree", "scheduler trace printed as a tree (print_tree)", False),
        Mode("json", "scheduler trace exported as JSON (to_json)", True),
        Mode("verbose", "AgentExecutor(verbose=True) stdout", False),
        Mode("set-debug", "langchain_core.globals.set_debug(True) stdout", False),
        Mode("run-tree", "RunCollectorCallbackHandler run tree, serialised to JSON", True),
        Mode("stream-debug", 'create_agent astream(stream_mode="debug") events, JSON lines', True),
        Mode("graph-debug", "create_agent(debug=True) stdout", False),
    )
}

# engine -> its debug modes, in the report's order (declared in the engine registry)
ENGINE_MODES: dict[str, tuple[str, ...]] = {name: s.debug_modes for name, s in REGISTRY.items()}


def modes_for(engine: str) -> tuple[str, ...]:
    """The debug modes of ``engine`` (KeyError for an unknown engine)."""
    return ENGINE_MODES[engine]
