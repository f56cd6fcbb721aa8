"""Writing a file so that a failed write never leaves half of it behind, and nothing but a file is replaced.

A regular file (or a symlink to one) is replaced atomically: a temporary file in the same folder, then a
rename; a symlink stays a symlink and its target is what changes. A character device (/dev/null, a
terminal) or a FIFO is written through, never replaced; a FIFO nobody reads is an error, not a hang.
Anything else (a directory, a block device, a socket) is refused. Every failure is an InputError naming
the path.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Optional

from envdoctor.errors import InputError


def write_atomic(path: Path, text: str) -> None:
    try:
        st = os.stat(path)  # follows symlinks: what would be written is what they point at
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            _write_through(path, text.encode("utf-8"))
            return
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a block device" if stat.S_ISBLK(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise InputError(f"{path}: is {kind}; refusing to write there")
    target = Path(os.path.realpath(path)) if os.path.islink(path) else path
    _replace(target, text, None if st is None else stat.S_IMODE(st.st_mode), shown=path)


def _replace(path: Path, text: str, mode: Optional[int], shown: Path) -> None:
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or Path(".")))
    except OSError as exc:
        raise InputError(f"{shown}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(tmp, mode)  # the file keeps the permissions it had
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(f"{shown}: cannot write: {exc.strerror}") from None


def _write_through(path: Path, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError(f"{path}: a FIFO that nobody reads; start its reader first") from None
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
    finally:
        os.close(fd)
