"""The measurement runner: plan the matrix, run each engine in its own worker, store results.

- ``plan``         — the configuration of a run and the interleaved schedule of batches;
- ``registry``     — engine names to classes (built-ins plus ``SCHEDBENCH_EXTRA_ENGINES``);
- ``worker``       — the process that measures one engine (``python -m bench.runner.run_worker``);
- ``orchestrator`` — starts workers round by round and appends what they stream back;
- ``progress``     — rich progress on a terminal, periodic lines otherwise.

See docs/measurement.md for the method.
"""
