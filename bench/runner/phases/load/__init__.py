"""The open-loop load phase: runs start on a schedule, not on demand.

- ``plan``      which engines, at which rates, on which schedule
- ``phase``     the parent side: the mock pool, its ceiling, the sweeps
- ``session``   the worker side: one prepared agent, open-loop levels, honest outcomes
- ``openloop``  the load generator of one worker process
"""
