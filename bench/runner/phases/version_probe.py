"""``python -m bench.runner.phases.version_probe ENGINE``: does code written for older LangChain lines run here?

The runner calls ``probe(engine, python)`` for each version engine (the registry's
``version_line`` engines) with the Python of that line's environment. Every program of
``bench.engines.lc_versions.PROGRAMS`` written for this line or an older one — the reference
agent as that line's docs wrote it — runs the reference scenario (``customer_returns``)
*unchanged*, each in its own fresh interpreter of the environment so that no run sees
another's imports (``--program LINE``), against the mock on 127.0.0.1. Where one fails and
its ``Program.fixes`` has edits for this line, the fixed program runs too (``--fixed-for``),
and the fix is measured: the statements changed between the program as written and the
program that runs (``statements_changed``), and the distributions the fixed program imports
that the line it was written for did not install.

Each run records every warning raised from the first import of LangChain to the end of the
run (``simplefilter("always")``), grouped by category, message and place. A run "works"
when it ends as the scenario expects (``scenarios.expect``). ``ENGINE`` prints one JSON
line, a ``bench.results.rows.VersionProbe``; ``--program`` one ``ProgramRun``.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import types
import warnings
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.model.mock import PLACEHOLDER_KEY
from bench.model.scenarios import reference_scenario
from bench.runner.channel import Channel, last_message
from bench.runner.offline import offline_env

_DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)
BROKE = "the program's run broke"  # its interpreter failed, not the program


def _where(filename: str, lineno: int) -> str:
    marker = f"site-packages{os.sep}"
    short = filename.split(marker, 1)[1] if marker in filename else Path(filename).name
    return f"{short}:{lineno}"


# -- measuring a fix ------------------------------------------------------------------------


def statements_changed(before: str, after: str) -> int:
    """How many statements change from the program ``before`` to ``after``: the statement
    diff of ``bench.engines.statement_diff`` (formatting, comments and docstrings never count;
    each differing run of statements counts the longer of its two sides: one import
    rewritten is 1), over whole programs."""
    from bench.engines.statement_diff import changed, flat_statements

    return changed(*(flat_statements(ast.parse(source).body) for source in (before, after)))


def _imported_distributions(source: str) -> list[str]:
    """The installed distributions that provide the top-level modules ``source`` imports."""
    from importlib.metadata import packages_distributions

    from bench.engines.lc_versions import normal_name

    provides = packages_distributions()
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return sorted({normal_name(d) for module in modules for d in provides.get(module, ())})


# -- one run of one program, in this interpreter ---------------------------------------------


class Harness:
    """The benchmark's side of a program, the same for every one: the scenario's question and
    system prompt, its tools' behaviour (recorded) and the mock's address.

    The mock listens on 127.0.0.1 (``serving``), so a program connects the way its docs
    connect — a ``base_url`` and a key — whatever HTTP client its chat model builds."""

    def __init__(self, scenario: Any, base_url: str):
        from bench.engines.kit.tools import build_tools

        self.question: str = scenario.user
        self.system_prompt: str = scenario.system_prompt
        self.model = f"scenario/{scenario.name}"
        self.connection = {
            "base_url": base_url,
            "api_key": PLACEHOLDER_KEY,
        }  # ChatOpenAI's arguments
        self._tools = {tool.name: tool for tool in build_tools(scenario)}

    def tool(self, name: str, **args: Any) -> str:
        return self._tools[name].call(**args)


@contextlib.contextmanager
def serving(mock: Any) -> Iterator[str]:
    """``mock`` behind uvicorn on a free 127.0.0.1 port, in a thread of this process (the
    probe is not timed); yields its base URL."""
    import socket
    import threading

    import uvicorn

    from bench.referee.server import HOST, create_app

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms Nagle stalls
    sock.bind((HOST, 0))
    sock.listen(64)
    config = uvicorn.Config(create_app(mock), log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the mock server did not start")
            thread.join(0.01)
        yield f"http://{HOST}:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def _without_paths(error: str) -> str:
    """The error without the absolute paths of the environment (``ImportError``'s "(…/x.py)")."""
    return re.sub(r" \((?:/|[A-Za-z]:\\)[^()]*\)", "", error).strip()


def _warnings_seen(caught: list[warnings.WarningMessage]) -> list[dict[str, Any]]:
    seen: Counter[tuple[str, str, str, bool]] = Counter()
    for w in caught:
        key = (
            w.category.__name__,
            str(w.message).strip()[:500],
            _where(w.filename, w.lineno),
            issubclass(w.category, _DEPRECATIONS),
        )
        seen[key] += 1
    return [
        {"category": c, "message": m, "where": where, "count": n, "deprecation": d}
        for (c, m, where, d), n in seen.items()
    ]


def run_program(line: str, fixed_for: str | None = None) -> dict[str, Any]:
    """Run the program written for ``line`` (fixed for ``fixed_for``) once, here: a
    ``ProgramRun`` as a dict, plus the distributions the program imports (``imports``)."""
    from bench.engines.kit.runlog import end_log, start_log
    from bench.engines.lc_versions import PROGRAMS
    from bench.referee import MockLLM
    from scenarios import load_scenarios
    from scenarios.expect import misses

    program = next(p for p in PROGRAMS if p.line == line)
    source = program.source(fixed_for)
    scenario = load_scenarios()[str(reference_scenario())]
    mock = MockLLM({scenario.name: scenario})
    filename = str(program.path) if fixed_for is None else f"{program.path} (fixed for {fixed_for})"
    answer, error = None, None
    with serving(mock) as base_url:
        harness = Harness(scenario, base_url)
        log, token = start_log()
        # from the first import of LangChain (the program's own) to the end of its run
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                # not "langchain…": LangChain hides its deprecations from callers so named
                module = types.ModuleType(f"agent_written_for_{line.replace('.', '_')}")
                module.__file__ = filename
                with contextlib.redirect_stdout(io.StringIO()):  # verbose=True prints the run
                    exec(compile(source, filename, "exec"), module.__dict__)
                    answer = module.answer(harness)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
            finally:
                end_log(token)
    observed = {
        "status": "completed" if error is None else "error",
        "final_answer": answer if isinstance(answer, str) else None,
        "llm_calls": len(mock.requests),
        "tool_calls": len(log.tools),
        "tools": [t.name for t in log.tools],
    }
    failures = misses(scenario.expect.for_engine("lc-agentexecutor"), observed)
    if error is None and failures:
        error = "; ".join(failures)
    return {
        "ran": not failures,
        "error": _without_paths(error)[:1000] if error else None,
        "warnings": _warnings_seen(caught),
        "imports": _imported_distributions(source),
    }


# -- every program on this line, each in a fresh interpreter ----------------------------------


def _fresh_run(python: str, line: str, fixed_for: str | None) -> dict[str, Any]:
    from bench import PROJECT_ROOT

    command = [python, "-m", "bench.runner.phases.version_probe", "--program", line]
    if fixed_for is not None:
        command += ["--fixed-for", fixed_for]
    done = subprocess.run(
        command, capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=300, check=False
    )
    message = last_message(done.stdout, "program")
    if done.returncode != 0 or message is None:
        tail = done.stderr.strip()[-1000:]
        return {"ran": False, "error": f"{BROKE}: {tail}", "warnings": []}
    return dict(message["result"])


def probe(engine_name: str, python: str = sys.executable) -> dict[str, Any]:
    """Every program written for this engine's line or an older one, run unchanged (and
    fixed, where it fails and a fix is declared) in fresh ``python`` interpreters (the
    line's environment): a VersionProbe as a dict."""
    from bench.engines.lc_versions import PROGRAMS
    from bench.engines.registry import spec
    from bench.envs.build import installed_packages
    from bench.results.rows import line_key

    line = spec(engine_name).version_line
    if line is None:
        raise ValueError(f"{engine_name} is not a LangChain version engine")
    cells = []
    for program in PROGRAMS:
        if line_key(program.line) > line_key(line):
            continue
        first = _fresh_run(python, program.line, None)
        cell = {k: first[k] for k in ("ran", "error", "warnings")}
        cell |= {"written_for": program.line, "run_on": line}
        if not first["ran"] and line in program.fixes:
            fixed = _fresh_run(python, program.line, line)
            added = set(fixed.get("imports", ())) - program.installed_distributions()
            cell["fix"] = {
                **{k: fixed[k] for k in ("ran", "error", "warnings")},
                "statements": statements_changed(program.source(), program.source(line)),
                "edits": [str(edit) for edit in program.fixes[line]],
                "packages": sorted(added),
            }
        cells.append(cell)
    return {
        "engine": engine_name,
        "line": line,
        "packages": installed_packages(python),
        "upgrades": cells,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.runner.phases.version_probe")
    parser.add_argument("engine", nargs="?", help="a version engine: run every program here")
    parser.add_argument("--program", metavar="LINE", help="run this line's program, here")
    parser.add_argument("--fixed-for", metavar="LINE", help="with its fix for this line")
    args = parser.parse_args(argv)
    if (args.engine is None) == (args.program is None):
        parser.error("give an engine or --program LINE")
    offline_env(os.environ)
    if args.program is None:  # by hand: the whole probe, printed
        print(json.dumps(probe(args.engine), sort_keys=True))
        return 0
    channel = Channel.claim()  # the program runs in this process: what it prints is not ours
    channel.send({"type": "program", "result": run_program(args.program, args.fixed_for)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
