"""Writing a file so that a failed write never leaves half of it behind."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from envdoctor.errors import InputError


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, then rename; an OSError is an InputError naming the path."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or Path(".")))
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
