"""``schedbench mock serve``: the mock LLM on a loopback port."""

from __future__ import annotations

import argparse

from bench.commands._options import check_range
from bench.errors import UsageError

HELP = "Run the scripted mock LLM (serve: an OpenAI-compatible server on 127.0.0.1)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    serve = sub.add_parser("serve", help="serve POST /v1/chat/completions on 127.0.0.1")
    serve.add_argument("--port", type=int, default=8765, help="TCP port (0 picks a free one)")
    serve.add_argument("--scenario-dir", help="directory of scenario YAML files")
    # the names of bench.referee.latency.PROFILE_NAMES (not imported: the CLI starts fast),
    # or a custom spec (checked in run)
    serve.add_argument(
        "--latency",
        default="zero",
        metavar="PROFILE",
        help="zero, realistic, ttft, recorded, or a custom spec like "
        "custom:ttft:1000,tps:50,jitter:0.2 (default zero)",
    )
    serve.add_argument(
        "--max-body-mb",
        type=int,
        default=8,
        help="refuse request bodies larger than this (413; default 8 MiB)",
    )
    serve.add_argument(
        "--request-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="answer 408 and close when a request is not received in full within S seconds",
    )


def run(args: argparse.Namespace) -> int:
    from bench.referee.server import serve
    from scenarios import ScenarioError

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, not {args.port}")
    check_range("--max-body-mb", args.max_body_mb, 1, 1024)
    check_range("--request-timeout", args.request_timeout, 0.1, 3600)
    from bench.referee.latency import LatencyProfile

    try:
        LatencyProfile.named(args.latency)
    except ValueError as exc:
        raise UsageError(f"--latency: {exc}") from None
    try:
        serve(
            args.port,
            args.scenario_dir,
            args.latency,
            max_body_bytes=args.max_body_mb * 2**20,
            request_timeout_s=args.request_timeout,
        )
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    except OSError as exc:
        raise UsageError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}") from None
    return 0
