"""One virtualenv per engine family (or LangChain line) that cannot share the main one.

The peer frameworks do not install side by side (LlamaIndex and Strands pull openai 2.x,
langchain-openai 1.x wants openai 3.x, LangChain 0.1-0.3 cannot live next to 1.x), so each
such family declares its own environment here, in one place: a folder
``bench/envs/<name>/`` holding

- ``requirements.txt`` — the framework's own packages, pinned (written by hand);
- ``constraints.txt`` — the whole environment locked (the framework, the harness's core
  dependencies and everything they pull), each file's hashes included, written by
  ``python -m bench.envs lock NAME``; a build checks every download against them.

``ensure(name)`` builds the environment once (``uv`` when it is installed — it is a pinned
dependency of the project — else ``venv`` + pip) into ``.envs/<name>`` at the project root
(``SCHEDBENCH_ENVS_DIR`` moves it), installs the pinned framework and the harness itself
(the project in editable mode with its core dependencies only: no LangChain, no openai
3.x), and reuses it while its fingerprint holds: the two files, the project's core
dependencies, the interpreter's version and this recipe. A change to any of them rebuilds
it. The registry's ``EngineSpec.environment`` names the environment an engine runs in;
``main`` is the interpreter running the harness.

A build that fails raises ``EnvironmentUnavailable`` with the tail of the installer's output;
the runner then records that family's runs as skipped, with that reason, and goes on.
Building downloads packages: ``schedbench run`` never does it unasked (``ensure(name,
build=False)`` raises ``EnvironmentNotBuilt``); ``make envs`` builds them all, ``run
--build-envs`` lets a run build what it needs.
"""

from bench.envs.build import (
    MAIN,
    Environment,
    EnvironmentNotBuilt,
    EnvironmentSpec,
    EnvironmentUnavailable,
    ensure,
    environment_spec,
    environments,
    envs_root,
    installed_packages,
    is_built,
)

__all__ = [
    "MAIN",
    "Environment",
    "EnvironmentNotBuilt",
    "EnvironmentSpec",
    "EnvironmentUnavailable",
    "ensure",
    "environment_spec",
    "environments",
    "envs_root",
    "installed_packages",
    "is_built",
]
