"""``python -m bench.probe.probe_worker --engine NAME``: probes one engine, in this fresh process.

Imports the harness, then the engine, then probes each scenario asked for (``--scenarios``,
plus the marginal variants of ``--marginal``) on one event loop, and writes one JSON line per
scenario (a ``row`` message of ``bench.runner.channel``, the harness's one worker protocol),
then ``done``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import traceback

from bench.probe.measure import TimedMock, counts_only, plan_named, probe_scenario
from bench.probe.variants import marginal_variants
from bench.referee import LatencyProfile
from bench.referee.tokens import request_tokens
from bench.runner.channel import Channel
from bench.runner.offline import offline_env
from scenarios import load_scenarios


async def _probe(args: argparse.Namespace, channel: Channel) -> None:
    from bench.engines.common import RecordingEngine
    from bench.engines.plugins import create_engine

    library = load_scenarios(args.scenario_dir)
    names = [n for n in args.scenarios.split(",") if n]
    scenarios = {n: library[n] for n in names}
    kinds = dict.fromkeys(names, "scenario")
    if args.marginal:
        for variant in marginal_variants(library[args.marginal]):
            scenarios[variant.name] = variant
            kinds[variant.name] = "variant"
    request_tokens([{"role": "user", "content": "warm up"}])  # the tokenizer's tables
    started = time.perf_counter()
    engine = create_engine(args.engine)
    import_ms = (time.perf_counter() - started) * 1000
    if not isinstance(engine, RecordingEngine):
        raise TypeError(f"{args.engine}: not a RecordingEngine; the probe cannot time execute")
    plan = plan_named("quick" if args.quick else args.plan)
    mock = TimedMock(scenarios=scenarios, latency=LatencyProfile())
    for name, scenario in scenarios.items():
        mine = plan if kinds[name] == "scenario" else counts_only(plan)
        base = {"scenario": name, "kind": kinds[name], "plan": mine.to_dict()}
        base["variant_of"] = args.marginal if kinds[name] == "variant" else None
        base["engine_import_ms"] = import_ms
        begun = time.perf_counter()
        try:
            row = await probe_scenario(engine, scenario, mock, mine)
        except Exception:
            row = {"status": "error", "error": traceback.format_exc(limit=8)[-2000:]}
        row["probe_s"] = time.perf_counter() - begun
        channel.send({"type": "row", "row": {**base, **row}})
    await engine.aclose()


def main(argv: list[str] | None = None) -> int:
    offline_env(os.environ)  # before the engine's framework is imported
    parser = argparse.ArgumentParser(prog="python -m bench.probe.probe_worker")
    parser.add_argument("--engine", required=True)
    parser.add_argument("--scenarios", required=True, help="comma-separated scenario names")
    parser.add_argument("--marginal", help="scenario whose marginal variants to probe too")
    parser.add_argument("--scenario-dir")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--plan", default="full", help="a plan of bench.probe.measure.PLANS (default: full)"
    )
    args = parser.parse_args(argv)
    channel = Channel.claim()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(_probe(args, channel))
    except BaseException:
        channel.fatal()
        os._exit(1)
    channel.send({"type": "done"})
    os._exit(0)  # hung sync tool threads (bench.engines.kit.tools) would block a normal exit


if __name__ == "__main__":
    sys.exit(main())
