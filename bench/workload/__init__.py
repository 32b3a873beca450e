"""A user's workload (a small YAML, ``docs/workload.md``) and the one-page decision for it:
``model`` reads and validates the file, ``decide`` turns it into the run that answers it,
``answer`` reads that run back and writes ``decision.md``."""

from bench.workload.model import Workload, WorkloadError, load_workload, parse_workload

__all__ = ["Workload", "WorkloadError", "load_workload", "parse_workload"]
