"""The profiling probe: where an engine's calls, stack frames and time go (``schedbench probe``).

A separate run, never inside the timed suite: for each engine, in a fresh process
(``worker``), on the happy-path scenarios, in-process transport, zero latency, each scenario
goes through passes (``measure``):

- ``counting``  Python calls per run by package (``sys.setprofile``), so calls per LLM step;
- ``variants``  the same on a scenario plus one tool call and plus one step: marginal calls;
- ``edges``     the logical stack from the engine's ``execute`` to the HTTP send and to the
                tool body: depth, modules and classes crossed;
- ``timing``    cProfile's ``tottime`` by package (and what cProfile itself costs);
- ``sampling``  a signal-driven sampling profiler: the share of a run's time per package.

``groups`` says which package a frame belongs to; ``run`` is the parent that writes
``profile.jsonl``; ``report`` prints its console table. The hooks it needs in the timed path
(``bench.engines.kit.runlog.EDGE_HOOK``) are None except while the probe runs. Method and caveats:
docs/measurement.md, "The profiling probe".
"""
