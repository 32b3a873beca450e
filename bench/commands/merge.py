"""``schedbench merge --out DIR SHARD…``: the shards of one run (``run --shard I/N``) as one
run folder, its tables rebuilt; ``schedbench report DIR`` then reports it."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands._options import writable_dir

HELP = (
    "Merge the shard folders of one run (schedbench run --shard I/N on several hosts) into one "
    "run folder: rows tagged with their shard and host, the tables rebuilt."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shards", metavar="SHARD", nargs="+", help="the shards' run folders")
    parser.add_argument("--out", required=True, help="the merged run folder (must not hold a run)")


def run(args: argparse.Namespace) -> int:
    from bench.results.merge import merge
    from bench.results.store import RunStore
    from bench.runner.finish import write_tables
    from bench.runner.plan import RunConfig

    writable_dir(Path(args.out), "--out")
    merged = merge(args.shards, args.out)
    store = RunStore(merged.directory)
    write_tables(store, RunConfig.from_dict(store.read_meta()["config"]))
    rows = ", ".join(f"{n:,} {name}" for name, n in merged.rows.items())
    print(
        f"merged {merged.shards} shards from {len(merged.hosts)} host(s) "
        f"({', '.join(merged.hosts)}) → {merged.directory}: {rows}"
    )
    for name, n in merged.skipped.items():
        print(f"warning: {name}: {n} line(s) that are not JSON objects left out")
    for index, cores in sorted(merged.busy.items()):
        print(
            f"warning: shard {index} ran beside other processes using {cores:.2f} cores of its "
            "host; its ratios may be off (docs/cluster.md: a busy host is not a slower one)"
        )
    if not merged.complete:
        print("warning: a shard is incomplete (meta.json: complete false); the merge is too")
    return 0 if merged.complete else 1
