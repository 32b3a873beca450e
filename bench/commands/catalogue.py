"""``schedbench catalogue --out DIR``: the customisation catalogue and false simplicity."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from bench.commands._options import writable_dir
from bench.errors import UsageError

HELP = (
    "Run every customisation of the catalogue on each engine (its effect checked against the "
    "mock, its statements counted, its use of internals read from the source) and the "
    "false-simplicity programs, into DIR/catalogue.json (~8 s; a peer in its own environment)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="run folder to write catalogue.json into")
    parser.add_argument(
        "--engines", help="comma-separated catalogue engines (default: all of them)"
    )


def run(args: argparse.Namespace) -> int:
    from bench.catalogue.run import run_catalogue, write_catalogue
    from bench.catalogue.table import FAMILIES
    from bench.report.catalogue import console_table

    engines = None
    if args.engines is not None and args.engines.strip() != "all":
        engines = tuple(dict.fromkeys(e.strip() for e in args.engines.split(",") if e.strip()))
        unknown = [e for e in engines if e not in FAMILIES]
        if unknown or not engines:
            raise UsageError(
                f"unknown catalogue engine {', '.join(map(repr, unknown)) or repr(args.engines)}"
                f"; valid: {', '.join(FAMILIES)}"
            )
    out = Path(args.out)
    writable_dir(out, "--out")
    started = time.monotonic()
    data = asyncio.run(run_catalogue(engines, progress=lambda t: print(t, file=sys.stderr)))
    path = write_catalogue(out, data)
    print(f"wrote {path} in {time.monotonic() - started:.0f} s")
    print(console_table(data))
    return 0
