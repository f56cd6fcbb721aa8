"""The logs a diagnosis reads: files, directories of rank logs, pipes and standard input.

Every input is checked before any is read (a missing or unreadable one fails fast, naming it), then the
logs are opened one at a time, so a job's thousands of rank logs need one file descriptor. A FIFO is
opened without waiting for a writer: with none it reads as empty instead of blocking forever. Character
devices, sockets and the like are refused.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator, List, Optional, Sequence, Union

from envdoctor.errors import InputError

try:
    import fcntl
except ImportError:  # Windows: no FIFOs to wait on
    fcntl = None  # type: ignore[assignment]

MAX_FILES = 100_000  # rank logs under one directory


@dataclass(frozen=True)
class LogInput:
    label: str  # how findings name it: the path as given (a directory's files under it), or <stdin>
    path: Optional[str]  # None: standard input
    walked: bool = False  # found under a directory named on the command line (not named itself)


class Vanished(InputError):
    """A file found under a named directory was gone (or replaced) by the time it was opened: skipped, not fatal."""


def expand(paths: Sequence[Union[str, Path]]) -> List[LogInput]:
    """The inputs named on the command line, directories expanded to the files under them (sorted)."""
    out: List[LogInput] = []
    for p in paths:
        label = str(p)
        if label == "-":
            out.append(LogInput("<stdin>", None))
            continue
        st = _stat(label)
        if stat.S_ISDIR(st.st_mode):
            found = list(_walk(label))
            if not found:
                raise InputError(f"{label}: is a directory with no log files in it")
            out.extend(found)
        else:
            _check_file(label, st)
            out.append(LogInput(label, label))
    return out


def _stat(label: str) -> os.stat_result:
    try:
        return os.stat(label)
    except FileNotFoundError:
        raise InputError(f"{label}: no such file") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {exc.strerror or exc}") from None


def _check_file(label: str, st: os.stat_result) -> None:
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise InputError(f"{label}: not a log file (a device, socket or other special file); "
                         "pipe its output in instead (`- < FILE`)")
    if not os.access(label, os.R_OK):
        raise InputError(f"{label}: cannot read: Permission denied")


def _walk(top: str) -> Iterator[LogInput]:
    """The regular files under a directory, in sorted order; hidden files and directories are skipped."""
    count = 0
    for root, dirs, files in os.walk(top, onerror=_walk_error):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except OSError:
                continue  # a dangling link
            if not stat.S_ISREG(st.st_mode):
                continue
            _check_file(path, st)
            count += 1
            if count > MAX_FILES:
                raise InputError(f"{top}: more than {MAX_FILES} files under it; name the rank logs to read")
            yield LogInput(path, path, walked=True)


def _walk_error(exc: OSError) -> None:
    raise InputError(f"{exc.filename}: cannot read: {exc.strerror or exc}")


def open_log(item: LogInput) -> BinaryIO:
    """Open one file for reading without blocking on a FIFO that has no writer."""
    assert item.path is not None
    try:
        fd = os.open(item.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        if item.walked:
            raise Vanished(f"{item.label}: removed while its folder was read; skipped") from None
        raise InputError(f"{item.label}: no such file") from None
    except OSError as exc:
        raise InputError(f"{item.label}: cannot read: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if item.walked and not stat.S_ISREG(st.st_mode):
            raise Vanished(f"{item.label}: no longer a regular file when it was opened; skipped")
        _check_file(item.label, st)
        # reads block again (a FIFO whose writer is there waits for its data; one with none reads as empty)
        if fcntl is not None:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
