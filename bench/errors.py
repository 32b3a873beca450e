"""The harness's exceptions: one tree, each class carrying the exit code the CLI returns.

```
SchedbenchError                 exit 1: the harness could not do what was asked
├── UsageError                  exit 2: bad input from the user (an option, a name, a path)
│   ├── UnknownEngineError      an engine name the registry does not know (also ValueError)
│   ├── UnknownModeError        a debug mode the engine does not have (also ValueError)
│   └── InputFileError          a file the user named that cannot be used (also ValueError)
│       ├── RunFolderError      a run directory that cannot be read
│       │   ├── NotARunFolder   not a directory, or no runs.jsonl
│       │   ├── BadMeta         meta.json corrupt, of the wrong shape or schema version
│       │   └── MergeError      shard folders that do not make one run (``schedbench merge``)
│       ├── LogError            a chat-completion log that cannot be read (``FILE:LINE: …``)
│       └── BuildError          a recorded conversation that cannot become a scenario
├── EnvironmentUnavailable      an engine environment that cannot be built (``name``, ``reason``)
├── RowRejected                 a row the harness built that its file's model refuses (a bug)
├── WorkerError                 a worker process died, hung, or could not start
└── NoData                      a chart with nothing to show (the report skips it)
```

``bench.cli`` maps the tree to exit codes in one place: ``SchedbenchError.exit_code``. Every
message is one line that names the file, field or option and the reason, never a traceback.

Not in the tree, on purpose: the failures a scenario *stages* inside an engine's run
(``bench.engines.kit.tools.ToolFailure``, ``bench.engines.raw.LLMCallFailed``, the mock's dropped
connection) — they stand for the simulated world's failures, which an engine must handle,
not for the harness's — and the scenario loader's ``scenarios.ScenarioError`` (``scenarios/``
imports nothing of ``bench``), which the commands turn into a ``UsageError``.
"""

from __future__ import annotations

from collections.abc import Iterable


class SchedbenchError(Exception):
    """Root of the harness's exceptions; ``exit_code`` is what the CLI returns for it."""

    exit_code: int = 1


class UsageError(SchedbenchError):
    """Bad input from the user: printed as one line, exit code 2."""

    exit_code = 2


class UnknownEngineError(UsageError, ValueError):
    """An engine name that is not registered; the message lists the valid ones."""

    def __init__(self, name: str, valid: Iterable[str]):
        super().__init__(f"unknown engine {name!r}; valid engines: {', '.join(valid)}")
        self.name = name


class UnknownModeError(UsageError, ValueError):
    """A debug mode the engine does not have; the message lists its modes."""

    def __init__(self, engine: str, mode: str, valid: Iterable[str]):
        super().__init__(
            f"unknown debug mode {mode!r} for engine {engine!r}; valid modes: {', '.join(valid)}"
        )
        self.engine = engine
        self.mode = mode


class InputFileError(UsageError, ValueError):
    """A file or folder the user named that cannot be used; the message names it."""


class RowRejected(SchedbenchError, ValueError):
    """A row a writer built that does not match its file's model (a field the model does not
    know, a value of the wrong type): refused before it is written, since it is the harness's
    bug, not the user's input."""


class RunFolderError(InputFileError):
    """A run directory that cannot be read; the message is one line (file and reason)."""


class NotARunFolder(RunFolderError):
    """The directory does not exist or holds no runs.jsonl."""


class BadMeta(RunFolderError):
    """meta.json is corrupt, of the wrong shape, or of an unknown schema version."""


class MergeError(RunFolderError):
    """Shard folders that do not make one run: not shards, of different splits, code or
    options, one missing or given twice (the message names the folder and the reason)."""


class LogError(InputFileError):
    """A log that cannot be read; ``str()`` is ``FILE:LINE: reason``."""


class BuildError(InputFileError):
    """A recording that cannot become a scenario; the message names the exchange."""


class EnvironmentUnavailable(SchedbenchError):
    """An environment could not be built (or is not declared); ``reason`` says why."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"environment {name!r} could not be built: {reason}")
        self.name = name
        self.reason = reason


class WorkerError(SchedbenchError):
    """A worker died, hung, or could not start."""


class NoData(SchedbenchError):
    """The chart has nothing to show; the message says what is missing."""
