"""Writing the report's files without ever following a link planted in the output folder.

A run folder is untrusted: a ``report.md`` symlink must not overwrite its target and a
``charts`` symlink must not receive the charts. Files are written to a fresh temporary file
beside the target and renamed over it (``os.replace`` replaces a link, never its target); a
directory that is a symlink is refused.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def real_dir(path: Path) -> Path:
    """``path`` as a directory of our own: created if missing; ``OSError`` if it is a symlink
    or not a directory."""
    if path.is_symlink():
        raise OSError(errno.ELOOP, "is a symbolic link; refusing to write through it", str(path))
    path.mkdir(parents=True, exist_ok=True)
    return path


def replace_file(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` atomically; a symlink at ``path`` is replaced, not followed."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes 0600; a report is for reading
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
