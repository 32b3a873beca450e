"""``schedbench probe --out DIR``: the profiling probe (calls, stack depth, time by package)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.errors import UsageError

HELP = (
    "Profile each engine on the happy-path scenarios in a fresh process (calls per step, "
    "stack depth to the HTTP send and the tool body, time by package) into DIR/profile.jsonl."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        required=True,
        help="run folder to write profile.jsonl into (replaced); with a meta.json there, the "
        "run's engines and scenario directory are used unless given",
    )
    parser.add_argument("--engines", help="comma-separated engine names, or all")
    parser.add_argument("--scenario-dir", help="directory of scenario YAML files")
    parser.add_argument(
        "--quick", action="store_true", help="two scenarios and fewer runs per pass (~25 s)"
    )


def _run_config(out: Path) -> dict:
    from bench.results.files import META
    from bench.results.folder import read_meta

    meta = read_meta(out / META) if out.is_dir() else None
    return (meta or {}).get("config") or {}


def run(args: argparse.Namespace) -> int:
    from bench.engines.plugins import engine_targets
    from bench.probe.report import console_table
    from bench.probe.run import default_config, probe_engines, probed_engines
    from bench.results.folder import read_rows
    from scenarios import ScenarioError, load_scenarios

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    stored = _run_config(out)
    scenario_dir = args.scenario_dir or stored.get("scenario_dir")
    try:
        library = load_scenarios(scenario_dir)
    except ScenarioError as exc:
        raise UsageError(f"cannot load scenarios:\n{exc}") from None
    measured, _ = probed_engines()
    if args.engines is None or args.engines.strip() == "all":
        engines = measured
        if stored.get("engines"):
            engines = tuple(e for e in stored["engines"] if e in measured)
    else:
        engines = tuple(dict.fromkeys(n.strip() for n in args.engines.split(",") if n.strip()))
        known = engine_targets()
        unknown = [e for e in engines if e not in known]
        if unknown or not engines:
            raise UsageError(
                f"unknown engine {', '.join(map(repr, unknown)) or repr(args.engines)}; "
                f"valid engines: {', '.join(known)}"
            )
    config = default_config(library, engines=engines, quick=args.quick, scenario_dir=scenario_dir)
    if not config.scenarios:
        raise UsageError(
            f"{scenario_dir or 'scenarios/'}: no performance scenario (tagged happy-path, or with nothing that fails)"
        )
    started = time.monotonic()
    path = probe_engines(out, config, progress=lambda text: print(text, file=sys.stderr))
    print(f"wrote {path} in {time.monotonic() - started:.0f} s")
    rows = read_rows(path).rows
    print(console_table(rows))
    return 1 if any(r.status == "error" for r in rows) else 0
