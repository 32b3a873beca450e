"""The measurement runner: plan the matrix, run each engine in its own worker, store results.

- ``plan``         — the configuration of a run and the interleaved schedule of batches;
- ``orchestrator`` — plays the phases in order (``phases/``: footprint, suite, ttft,
  throughput, versions, load/) over one ``PhaseContext``;
- ``workers``      — the pool of worker processes and engine environments (``process``: one
  child, its messages and its stderr);
- ``run_worker``   — the process that measures one engine (``python -m bench.runner.run_worker``);
- ``expectations`` — what a run showed, judged against its scenario's ``expect``;
- ``offline``      — the environment every process gets (tracing off, a placeholder key);
- ``metadata``, ``finish`` — meta.json, and the end of a run (tables, final words, exit code);
- ``progress``     — rich progress on a terminal, periodic lines otherwise.

See docs/measurement.md for the method and docs/architecture.md for the layout.
"""
