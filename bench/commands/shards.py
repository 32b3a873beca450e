"""``schedbench shards RUN --hosts 2,4,8``: how long RUN would take split over that many hosts."""

from __future__ import annotations

import argparse

from bench.errors import UsageError

HELP = (
    "Project the wall time of a one-host run split over N hosts (run --shard / --cluster), from "
    "its own files: each shard's scenarios' run time, its phases, the run's overhead."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", metavar="RUN", help="the run folder of a one-host schedbench run")
    parser.add_argument(
        "--hosts", default="2,4,8", help="host counts, comma-separated (default 2,4,8)"
    )


def _hosts(text: str) -> list[int]:
    try:
        counts = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise UsageError(f"--hosts: expected integers like 2,4,8, not {text!r}") from None
    if not counts or any(not 1 <= n <= 64 for n in counts):
        raise UsageError(f"--hosts: each count must be between 1 and 64 (got {text!r})")
    return counts


def run(args: argparse.Namespace) -> int:
    from bench.runner.shard_projection import project

    for hosts in _hosts(args.hosts):
        p = project(args.run, hosts)
        print(f"{hosts} host(s): {p.low_s:,.0f}–{p.high_s:,.0f} s (the slowest shard)")
        for s in p.shards:
            phases = ", ".join(s.phases) or "no other phase"
            print(
                f"  shard {s.index}/{hosts}: {len(s.scenarios)} scenarios ({s.run_s:,.0f} s of "
                f"runs), {phases} ({s.phase_s:,.0f} s): {s.low_s:,.0f}–{s.high_s:,.0f} s"
            )
    return 0
