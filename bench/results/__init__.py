"""The results model: what a run directory holds, read once, computed once, formatted once.

- ``files``   the layout of a run directory: file names, row keys, the schema version
- ``rows``    the typed rows of every file and the shape of meta.json (a leaf module), and
              which rows count (``latest``, ``timed``)
- ``store``   the runner's writer: meta.json atomically, JSON lines appended crash-safe
- ``folder``  the one reader: ``load_run_folder`` (meta.json checked, rows validated,
              corrupt lines counted with their line numbers, the later row of a key wins)
- ``stats``   the statistics: medians, percentiles, summaries, bootstrap intervals over
              runs or rounds, geometric means over scenarios, comparisons
- ``metrics`` the metrics of a run, each defined once: cells, per-step overhead, token
              overhead against raw, TTFT over the scripted floor, throughput, footprint
- ``fmt``     the formatting of numbers: milliseconds, ratios, percentages, signed values
- ``escape``  text from files made safe to show (control characters visible)
- ``summary`` summary.csv, footprint.csv, throughput.csv and ttft.csv
- ``compare`` two runs judged benchmark by benchmark (``schedbench compare``)
- ``versions`` the LangChain version table (versions.json) from a run's rows

The console summary, summary.csv, ``schedbench compare`` and the report all read a run
through this package; nothing else computes a statistic.
"""
