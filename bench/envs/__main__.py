"""``python -m bench.envs {list,build,lock} [NAME ...]``: the engine environments by hand.

``build`` builds (or reuses) the named environments, all by default, and says how long each
took; ``lock`` re-resolves their constraints.txt; ``list`` shows each with its pins and
whether a build for the current pins exists. Exit code 2 on an unknown name, 1 when a
build or lock failed.
"""

from __future__ import annotations

import argparse
import sys

from bench.envs.build import (
    STAMP,
    EnvironmentUnavailable,
    ensure,
    environment_spec,
    environments,
    envs_root,
    lock,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.envs")
    parser.add_argument("command", choices=["list", "build", "lock"])
    parser.add_argument("names", nargs="*", help="environments (default: all)")
    args = parser.parse_args(argv)
    names = args.names or list(environments())
    try:
        specs = [environment_spec(name) for name in names]
    except EnvironmentUnavailable as exc:
        print(f"python -m bench.envs: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for spec in specs:
        try:
            if args.command == "lock":
                print(f"{spec.name}: locked {lock(spec.name)}")
            elif args.command == "build":
                env = ensure(spec.name)
                how = "reused" if env.reused else f"built in {env.build_s:.1f}s with {env.tool}"
                print(f"{spec.name}: {how} → {env.python}")
            else:
                pins = ", ".join(f"{k}=={v}" for k, v in spec.pins().items())
                stamp = envs_root() / spec.name / STAMP
                built = "built" if stamp.exists() else "not built"
                print(f"{spec.name}: {pins} ({built})")
        except EnvironmentUnavailable as exc:
            print(str(exc), file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
