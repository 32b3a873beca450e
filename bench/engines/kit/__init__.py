"""What every engine adapter shares at run time, in every engine environment.

- ``runlog``  the per-run request log: every HTTP request and tool execution, seen at the edges
- ``tools``   the scenario's tools as Python callables (each execution recorded)
- ``ttft``    time to first token: where the final answer starts, and the mock's share of it
"""
