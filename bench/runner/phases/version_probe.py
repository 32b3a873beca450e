"""``python -m bench.runner.phases.version_probe ENGINE``: does today's baseline run on this LangChain line?

Run by the runner in a fresh interpreter of a version engine's environment (the registry's
``version_line`` engines). It runs the reference scenario (tagged ``reference``: ``customer_returns``, in-process
mock) twice, each in its own fresh interpreter, so that neither sees the other's imports:

1. ``--unchanged``: today's AgentExecutor baseline exactly as it is
   (``bench.engines.lc_versions.UnchangedExecutor``: no change but the harness's recording
   client);
2. the registry's engine: the baseline with the line's changes applied.

Each records every warning raised from the first import of LangChain to the end of its run
(``simplefilter("always")``), grouped by category, message and place.

A run "works" when it ends as the scenario expects (``scenarios.expect``). It prints one
JSON line: ``bench.results.versions.VersionProbe``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

from bench.model.scenarios import reference_scenario
from bench.runner.offline import offline_env

_DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def _where(filename: str, lineno: int) -> str:
    marker = f"site-packages{os.sep}"
    short = filename.split(marker, 1)[1] if marker in filename else Path(filename).name
    return f"{short}:{lineno}"


def _run(engine: Any) -> tuple[bool, str | None]:
    from bench.engines.base import RunContext
    from bench.referee import MockLLM
    from bench.referee.transport import BASE_URL
    from bench.runner.expectations import expectation_failures
    from scenarios import load_scenarios

    scenario = load_scenarios()[str(reference_scenario())]

    async def once() -> Any:
        ctx = RunContext(
            scenario=scenario, mock=MockLLM({scenario.name: scenario}), base_url=BASE_URL
        )
        try:
            return await engine.run(await engine.prepare(ctx))
        finally:
            await engine.aclose()

    record = asyncio.run(once())
    failures = expectation_failures(scenario, engine.name, record)
    if not failures:
        return True, None
    return False, (record.error or "; ".join(failures))[:1000]


def probe_one(engine_name: str, *, unchanged: bool) -> dict[str, Any]:
    """One run in this interpreter: whether it worked, and the warnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if unchanged:
                from bench.engines.lc_versions import UnchangedExecutor

                engine = UnchangedExecutor()
            else:
                from bench.engines.plugins import create_engine

                engine = create_engine(engine_name)
            ok, error = _run(engine)
        except Exception as exc:
            ok, error = False, f"{type(exc).__name__}: {exc}"[:1000]
    seen: Counter[tuple[str, str, str, bool]] = Counter()
    for w in caught:
        key = (
            w.category.__name__,
            str(w.message).strip()[:500],
            _where(w.filename, w.lineno),
            issubclass(w.category, _DEPRECATIONS),
        )
        seen[key] += 1
    return {
        "ok": ok,
        "error": error,
        "warnings": [
            {"category": c, "message": m, "where": where, "count": n, "deprecation": d}
            for (c, m, where, d), n in seen.items()
        ],
    }


def probe(engine_name: str, python: str = sys.executable) -> dict[str, Any]:
    """Both runs, each in a fresh ``python`` (the engine's environment): a VersionProbe."""
    from bench import PROJECT_ROOT
    from bench.envs.build import installed_packages

    results = {}
    for unchanged in (True, False):
        command = [python, "-m", "bench.runner.phases.version_probe", "--one", engine_name]
        if unchanged:
            command.append("--unchanged")
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300, check=False
        )
        if done.returncode != 0 or not done.stdout.strip():
            tail = done.stderr.strip()[-1000:]
            results[unchanged] = {"ok": False, "error": f"probe failed: {tail}", "warnings": []}
        else:
            results[unchanged] = json.loads(done.stdout.strip().splitlines()[-1])
    return {
        "engine": engine_name,
        "unchanged": results[True]["ok"],
        "unchanged_error": results[True]["error"],
        "adapted": results[False]["ok"],
        "adapted_error": results[False]["error"],
        "packages": installed_packages(python),
        "warnings": results[False]["warnings"],
        "unchanged_warnings": results[True]["warnings"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.runner.phases.version_probe")
    parser.add_argument("engine")
    parser.add_argument("--one", action="store_true", help="one run in this interpreter")
    parser.add_argument("--unchanged", action="store_true", help="today's code as it is")
    args = parser.parse_args(argv)
    offline_env(os.environ)
    out = probe_one(args.engine, unchanged=args.unchanged) if args.one else probe(args.engine)
    print(json.dumps(out, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
