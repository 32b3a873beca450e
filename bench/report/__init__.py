"""The decision report: ``schedbench report RUN_DIR`` (docs/report.md).

``from_folder`` adapts a run directory into the report's data (``frames.RunData``, a few tidy
pandas frames); ``analysis`` derives the numbers; ``facts`` and ``rules`` rate the decision
matrix and judge the article's claims by stated rules; ``charts`` draws; ``sections`` (and
``load_section``, ``versions_section``, …) write the text as a ``document.Document``, rendered
to report.md and report.html; ``build`` ties them together.
"""
