"""``schedbench run --cluster ADDRESS``: the shards of a run (``bench.runner.shard``) placed one
per node of a Dask distributed cluster, gathered and merged (``bench.results.merge``).

Why Dask distributed, measured on this 2-core VM (fresh venvs, Python 3.11, 2026-12-02):
``pip install distributed`` took 4.8 s and 44 MB beyond an empty venv, and a local cluster of
two worker processes with a client started in 1.0 s. ``pip install ray`` took 8.8 s and 259 MB,
and ``ray.init`` took 4.3-4.6 s. Both can place a task on a chosen node (Dask: ``workers=``;
Ray: node-affinity strategies). Both re-run a task whose worker died. The shards need nothing
more, so the lighter one was chosen.

How a run goes:

- every worker of the cluster stands for one node (start one ``dask worker --nthreads 1`` per
  node: a shard starts its own processes, one per core); shard *i* of *n* = the number of
  workers is submitted to worker *i*, free to move to another one if its node is lost;
- on its node a shard runs ``schedbench run --shard i/n`` in a child process (which dies with
  the worker: ``PR_SET_PDEATHSIG``), into a temporary folder, and sends the folder back
  packed when it ends;
- the launcher writes each shard into ``OUT/shards/shard-i`` as soon as it arrives. A shard
  whose worker died is re-run by the scheduler on a live worker (Dask's
  ``allowed-failures``); a shard lost for good is **reported missing**, with the command that
  re-runs it by hand. Then the shards are merged into ``OUT`` (only when all of them are
  there), and the tables are rebuilt;
- every shard measures the code the launcher saw: the launcher takes the checkout's
  fingerprint (HEAD and a hash of its uncommitted changes to tracked files) and each shard
  checks its node's checkout against it before it starts and after it ends. A shard whose
  checkout differs, or moved while it ran (a commit, a ``git pull``, an edit), is refused and
  reported missing with the reason, instead of failing the merge half an hour later.

``--cluster local`` (or ``local:N``) starts a local cluster of 2 (N) worker processes on
loopback, with no dashboard: the same code path on one machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import io
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import UsageError

LOCAL = "local"
LOCAL_WORKERS = 2
TAIL_CHARS = 4000
PROJECT_ROOT = Path(__file__).resolve().parents[2]
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ShardOutcome:
    """What one shard's task sent back."""

    index: int
    host: str
    returncode: int
    stderr_tail: str
    archive: bytes  # the shard's run folder, tar.gz (empty: it wrote none)
    moved: str = ""  # why the node's code was not the launcher's (empty: it was)


def _git(root: str, *args: str) -> bytes:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else b""


def code_fingerprint(root: str | Path) -> str:
    """The code a shard measures: HEAD plus a hash of the uncommitted changes to tracked files
    (``unknown`` outside a git checkout)."""
    head = _git(str(root), "rev-parse", "HEAD").decode().strip()
    if not head:
        return "unknown"
    changes = _git(str(root), "diff", "HEAD", "--binary", "--", ".", ":(exclude)reports")
    if not changes:
        return head
    return f"{head}+{hashlib.sha256(changes).hexdigest()[:12]}"


def _moved(pinned: str, root: str, when: str) -> str:
    now = code_fingerprint(root)
    if now == pinned:
        return ""
    return f"the node's checkout {when} is {now}, the launcher's was {pinned}"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    with contextlib.suppress(OSError):  # not glibc: a lost worker's child may outlive it
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def run_shard(
    index: int, count: int, argv: Sequence[str], root: str, pinned: str, command: str = "run"
) -> ShardOutcome:
    """On a worker: ``schedbench COMMAND ARGV --shard index/count`` (``run``, or ``decide``)
    into a temporary folder, packed, if the node's checkout at ``root`` holds the ``pinned``
    code before and after."""
    host = socket.gethostname()
    moved = _moved(pinned, root, "at the shard's start")
    if moved:
        return ShardOutcome(index, host, 2, moved, b"", moved)
    with tempfile.TemporaryDirectory(prefix=f"schedbench-shard-{index}-of-{count}-") as tmp:
        out = Path(tmp) / f"shard-{index}"
        child = [sys.executable, "-m", "bench.cli", command, *argv]
        child += ["--shard", f"{index}/{count}", "--out", str(out)]
        done = subprocess.run(
            child,
            cwd=root,
            capture_output=True,
            text=True,
            preexec_fn=_die_with_parent if sys.platform == "linux" else None,
        )
        archive = io.BytesIO()
        if out.is_dir():
            with tarfile.open(fileobj=archive, mode="w:gz") as tar:
                tar.add(out, arcname=out.name)
        return ShardOutcome(
            index, host, done.returncode, done.stderr[-TAIL_CHARS:], archive.getvalue(),
            _moved(pinned, root, "at the shard's end"),
        )  # fmt: skip


def unpack(outcome: ShardOutcome, into: Path) -> Path | None:
    """A shard's folder written under ``into`` (None: it sent none)."""
    if not outcome.archive:
        return None
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(outcome.archive), mode="r:gz") as tar:
        tar.extractall(into, filter="data")  # data only: no links out, no devices
    return into / f"shard-{outcome.index}"


def connect(address: str) -> tuple[Any, Any]:
    """(client, the local cluster it started or None) for ``address``: ``local[:N]`` or a
    scheduler address such as ``tcp://10.0.0.5:8786``."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - the project installs it (the cluster extra)
        raise UsageError("--cluster needs Dask distributed: pip install '.[cluster]'") from None
    if address == LOCAL or address.startswith(LOCAL + ":"):
        workers = LOCAL_WORKERS
        if ":" in address:
            try:
                workers = int(address.split(":", 1)[1])
            except ValueError:
                raise UsageError(f"--cluster {address}: expected local or local:N") from None
        if not 1 <= workers <= 64:
            raise UsageError(f"--cluster {address}: N must be between 1 and 64")
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            worker_dashboard_address=None,
        )
        return Client(cluster), cluster
    try:
        return Client(address, timeout=30), None
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--cluster {address}: cannot reach the scheduler ({exc})") from None


def run_on_cluster(
    address: str,
    argv: Sequence[str],
    out: Path,
    *,
    say: Callable[[str], None] = print,
    client: Any = None,
    command: str = "run",
    spread_load: bool = False,
) -> int:
    """Run the shards of ``argv`` (``schedbench COMMAND`` options, no ``--out``/``--shard``;
    ``run`` or ``decide``) on the cluster at ``address`` (or on ``client``), one per worker;
    merge them into ``out``. ``spread_load``: the shards run without their load phase, and
    the merged run's is spread over the nodes (``bench.runner.cluster_load``). Exit code:
    0 complete, 1 a shard incomplete or missing (reported)."""
    from distributed import as_completed

    from bench.results.merge import merge
    from bench.results.store import RunStore
    from bench.runner.finish import write_tables
    from bench.runner.plan import RunConfig

    cluster = None
    if client is None:
        client, cluster = connect(address)
    try:
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise UsageError(f"--cluster {address}: the cluster has no workers")
        count = len(workers)
        if spread_load:
            if count < 2:
                raise UsageError("--spread-load needs a cluster of 2 workers or more")
            argv = [*argv, "--no-load"]
        pinned = code_fingerprint(PROJECT_ROOT)
        say(f"cluster {address}: {count} worker(s); shard i/{count} on worker i; code {pinned}")
        futures = {
            client.submit(
                run_shard, i, count, list(argv), str(PROJECT_ROOT), pinned, command,
                workers=[worker], allow_other_workers=True, pure=False,
                key=f"schedbench-shard-{i}-of-{count}",
            ): i
            for i, worker in enumerate(workers, start=1)
        }  # fmt: skip
        shards_dir = out / "shards"
        folders: dict[int, Path] = {}
        lost: dict[int, str] = {}
        for future in as_completed(futures):
            index = futures[future]
            try:
                outcome: ShardOutcome = future.result()
            except Exception as exc:  # the scheduler gave up on it (its workers kept dying)
                lost[index] = f"{type(exc).__name__}: {exc}"
                say(f"shard {index}/{count} lost: {lost[index]}")
                continue
            folder = unpack(outcome, shards_dir)
            if outcome.moved:
                lost[index] = f"refused: {outcome.moved}; shards must measure one code"
                kept = f" (its folder is kept in {folder}, not merged)" if folder else ""
                say(f"shard {index}/{count} on {outcome.host}: {lost[index]}{kept}")
                continue
            if folder is None:
                lost[index] = f"wrote no run folder (exit {outcome.returncode})"
                say(f"shard {index}/{count} on {outcome.host} failed:\n{outcome.stderr_tail}")
                continue
            folders[index] = folder
            state = "complete" if outcome.returncode == 0 else f"exit {outcome.returncode}"
            say(f"shard {index}/{count} from {outcome.host}: {state} → {folder}")
        if lost:
            for index, why in sorted(lost.items()):
                say(
                    f"missing: shard {index}/{count} ({why}); re-run it with `schedbench "
                    f"{command} {' '.join(argv)} --shard {index}/{count} --out "
                    f"{shards_dir}/shard-{index}`, then `schedbench merge {shards_dir}/shard-* "
                    f"--out {out}`"
                )
            return 1
        merged = merge([folders[i] for i in sorted(folders)], out)
        say(f"merged {merged.shards} shards from {', '.join(merged.hosts)} → {out}")
        for index, cores in sorted(merged.busy.items()):
            say(
                f"warning: shard {index} ran beside other processes using {cores:.2f} cores "
                "of its host; its ratios may be off (docs/cluster.md)"
            )
        rc = 0 if merged.complete else 1
        if spread_load:
            from bench.runner.cluster_load import spread_load as run_spread_load

            rc = max(rc, run_spread_load(client, workers, merged.directory, say))
        store = RunStore(merged.directory)
        write_tables(store, RunConfig.from_dict(store.read_meta()["config"]))
        return rc
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def shard_argv(argv: Sequence[str]) -> list[str]:
    """``schedbench run`` options without ``--cluster``/``--out`` (and their values) and
    ``--spread-load`` (the launcher's)."""
    out: list[str] = []
    skip = False
    for item in argv:
        if skip:
            skip = False
            continue
        name = item.split("=", 1)[0]
        if name == "--spread-load":
            continue
        if name in ("--cluster", "--out"):
            skip = "=" not in item
            continue
        out.append(item)
    return out


__all__ = [
    "LOCAL",
    "ShardOutcome",
    "code_fingerprint",
    "connect",
    "run_on_cluster",
    "run_shard",
    "shard_argv",
    "unpack",
]
