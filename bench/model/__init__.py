"""The harness's shared data, below every other part: scenario glue (``scenarios``), the
mock's placeholder API key (``mock``), the cache directory (``caches``).

A leaf package: it imports nothing of the harness but ``bench.errors``.
"""
