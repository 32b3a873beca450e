"""``python -m bench.catalogue.catalogue_worker ENGINE...``: the catalogue of engines of this interpreter.

Run by ``bench.catalogue.run`` inside a peer's virtualenv: runs the engines' cells and
programs here (``in_process``) and sends the ``catalogue.json`` data as one ``catalogue``
message (``bench.runner.channel``); progress goes to stderr. ``--plain ENGINE`` sends instead
what each check finds wrong with the engine's plain agent (``plain``:
``harness.plain_failures``; the tests use it).
"""

from __future__ import annotations

import asyncio
import sys

from bench.catalogue.harness import plain_failures
from bench.catalogue.run import run_catalogue
from bench.results.files import clean
from bench.runner.channel import Channel


def main(argv: list[str]) -> int:
    channel = Channel.claim()  # the cells' and programs' own prints go to stderr
    if argv[:1] == ["--plain"]:
        channel.send({"type": "plain", "failures": asyncio.run(plain_failures(argv[1]))})
        return 0
    data = asyncio.run(
        run_catalogue(argv, progress=lambda t: print(t, file=sys.stderr), in_process=True)
    )
    channel.send({"type": "catalogue", "data": clean(data)})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
