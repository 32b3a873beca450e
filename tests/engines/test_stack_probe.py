"""The import probe measures what a service pays: after it imports an engine's stack and runs
its ``probe_warmup``, the framework imports of the engine's own adapter load (almost) nothing
more.

A framework that loads its classes lazily (Agent Framework's packages define module
``__getattr__``) would otherwise be credited with the cost of its package ``__init__`` files
only: 81 modules, where the classes the adapter uses load 861.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

from bench.engines.registry import SPECS
from bench.envs import ensure
from bench.runner.phases.footprint import _PROBE, probe_env

ROOT = Path(__file__).resolve().parents[2]
# what the adapter's framework imports may load beyond the probe (a few submodules that a
# class touches on first import): a share of the probe's own count, and a floor
ALLOWED_SHARE = 0.10
ALLOWED_FLOOR = 10

# after the probe's own lines: run the adapter's framework imports, count the new modules
AFTER = """
import sys
before = len(sys.modules)
exec(sys.stdin.read())
print(json.dumps({"after_adapter": len(sys.modules) - before}))
"""


def framework_imports(spec) -> str:
    """The adapter module's top-level import statements of the engine's stack packages."""
    module = spec.target.split(":")[0]
    source = Path(importlib.util.find_spec(module).origin).read_text()  # type: ignore[union-attr,arg-type]
    roots = {name.split(".")[0] for name in spec.stack}
    lines = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        if any(name.split(".")[0] in roots for name in names):
            lines.append(ast.unparse(node))
    return "\n".join(lines)


CASES = {}
for _spec in SPECS:
    if _spec.stack and not _spec.outcome_only:
        _imports = framework_imports(_spec)
        if _imports:
            key = (_spec.environment, _spec.stack, _spec.probe_warmup, _imports)
            CASES.setdefault(key, _spec.name)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("key", list(CASES), ids=list(CASES.values()))
def test_the_probe_loads_what_the_adapter_imports(key):
    environment, stack, warmup, imports = key
    done = subprocess.run(
        [ensure(environment).python, "-c", _PROBE + AFTER, warmup, *stack],
        input=imports,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=probe_env(),
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    probe, after = (json.loads(line) for line in done.stdout.splitlines()[-2:])
    allowed = max(ALLOWED_FLOOR, ALLOWED_SHARE * probe["modules"])
    assert after["after_adapter"] <= allowed, (
        f"{CASES[key]}: the probe loaded {probe['modules']} modules, the adapter's imports "
        f"{after['after_adapter']} more:\n{imports}"
    )
