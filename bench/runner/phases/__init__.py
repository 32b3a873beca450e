"""The phases of a run, in the order the orchestrator plays them.

- ``footprint``  import probes: a fresh interpreter imports each engine's stack
- ``suite``      every engine × scenario, round by round, into runs.jsonl
- ``ttft``       each engine's user-facing token stream, into ttft.jsonl
- ``throughput`` closed-loop concurrency levels, into throughput.jsonl
- ``versions``   does today's baseline run on each LangChain line (``version_probe``)
- ``load``       the open-loop load phase (Poisson arrivals), into load.jsonl
"""
