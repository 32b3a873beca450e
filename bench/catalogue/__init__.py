"""The customisation catalogue and the false-simplicity programs (issue 16; docs/catalogue.md).

``customisations``  what each customisation requires and how its effect is checked
``kit``, ``harness`` what a cell is given; running a cell against the mock, observed at the edges
``langchain_v1``, ``agentexecutor``, ``scheduler``  the cells, one module per engine family
``openai_agents``   the cells of a peer (run in its own virtualenv by ``worker``)
``table``           the one table of cells: engine × customisation → code, internals, note
``internals``       the static check of that table's declarations against the source
``programs/``       the false-simplicity programs (simple and complex, per engine)
``simplicity``      their specification, backend and checks
``run``             everything run and measured → ``catalogue.json``
``worker``          ``python -m bench.catalogue.catalogue_worker ENGINE...``: a peer's rows, from its env
"""

from pathlib import Path

SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
