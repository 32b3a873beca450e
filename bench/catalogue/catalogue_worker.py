"""``python -m bench.catalogue.catalogue_worker ENGINE...``: the catalogue of engines of this interpreter.

Run by ``bench.catalogue.run`` inside a peer's virtualenv: runs the engines' cells and
programs here (``in_process``) and prints the ``catalogue.json`` data as one JSON document
on stdout; progress goes to stderr. ``--plain ENGINE`` prints instead what each check finds
wrong with the engine's plain agent (``harness.plain_failures``; the tests use it).
"""

from __future__ import annotations

import asyncio
import json
import sys

from bench.catalogue.harness import plain_failures
from bench.catalogue.run import run_catalogue
from bench.results.files import clean


def main(argv: list[str]) -> int:
    if argv[:1] == ["--plain"]:
        print(json.dumps(asyncio.run(plain_failures(argv[1]))))
        return 0
    data = asyncio.run(
        run_catalogue(argv, progress=lambda t: print(t, file=sys.stderr), in_process=True)
    )
    print(json.dumps(clean(data), sort_keys=True, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
