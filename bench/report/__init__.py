"""The decision report: ``schedbench report RUN_DIR`` (docs/report.md).

``load`` reads a run directory into the report's data model (``model.RunData``);
``analysis`` derives the numbers; ``rules`` rates the decision matrix and judges the
article's claims by stated rules; ``charts`` draws; ``sections`` writes the text as a
``document.Document``, rendered to report.md and report.html; ``build`` ties them together.
"""
