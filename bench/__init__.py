"""schedbench's harness: mock LLM, engines, runner, metrics, debuggability, report and CLI
(the packages and their import directions: docs/architecture.md)."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent  # the repository: scheduler/, bench/, …
