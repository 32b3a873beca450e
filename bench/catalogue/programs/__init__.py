"""The false-simplicity programs: what a user writes, one file per engine and case.

``<family>_simple.py`` — the simplest agent: one tool, one question (``ask``).
``<family>_support.py`` — the article's complex case: conversation memory, three tools and a
custom stop condition (``chat``). Each file is counted whole (imports and docstrings
not) by ``bench.engines.codesize``; the caller builds the chat model (one statement on every side,
not counted) and passes the backend the tools call. Specification and checks:
``bench.catalogue.simplicity``.
"""
