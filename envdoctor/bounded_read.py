"""Reading an input file without trusting it: only a regular file, at most a size cap, within a deadline.

Every file envdoctor reads as input (a snapshot, a baseline, a fleet report, a wheel index, a rules database, a
journal) goes through `read_text`/`read_bytes`: a FIFO, a device (`/dev/zero`), a socket or a directory is refused
before anything is read, a file larger than the cap is refused, and a read that stalls (a dead network mount) stops
at the deadline. `idle_reader` gives standard input an idle deadline: a writer that never closes ends the input.
Errors are `NotReadable`, an OSError whose text says what is wrong, so callers' `except OSError` name the file."""

from __future__ import annotations

import os
import select
import stat
import time
from typing import BinaryIO, Optional

MiB = 1024 * 1024
DEFAULT_CAP = 256 * MiB  # a snapshot of a 1,000-node fleet is a few MiB
DEFAULT_DEADLINE_S = 60.0
STDIN_IDLE_S = 60.0  # no byte on standard input for this long: its writer is taken to be done
_CHUNK = MiB


class NotReadable(OSError):
    """The file is not one envdoctor reads: not a regular file, too large, or too slow to read."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.strerror = why  # `exc.strerror or exc` in callers' messages


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: os.PathLike[str] | str, flags: int = os.O_RDONLY, mode: int = 0o600) -> int:
    """A descriptor of the regular file `path`, opened with `flags` (O_CREAT too: a lock file); NotReadable when it
    is a FIFO, a device, a socket or a directory, or the path holds a NUL; the other OSErrors as they come.
    Opening never waits (O_NONBLOCK: a FIFO with no writer)."""
    name = os.fspath(path)
    if "\0" in name:
        raise NotReadable("a path with a NUL character in it names no file")
    flags |= getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(name, flags, mode)
    try:
        st = os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotReadable(f"{_kind(st.st_mode)}, not a regular file; envdoctor reads only regular files")
    return fd


def read_bytes(path: os.PathLike[str] | str, cap: int = DEFAULT_CAP, deadline_s: float = DEFAULT_DEADLINE_S) -> bytes:
    """The bytes of the regular file `path`; NotReadable when it is something else, over `cap` bytes, or not read
    within `deadline_s`; FileNotFoundError and the other OSErrors as they come."""
    fd = open_regular(path)
    try:
        st = os.fstat(fd)
        if st.st_size > cap:
            raise NotReadable(f"{st.st_size} bytes, more than the {cap // MiB} MiB envdoctor reads")
        end = time.monotonic() + deadline_s
        parts = []
        total = 0
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return b"".join(parts)
            total += len(chunk)
            if total > cap:  # it grows while read
                raise NotReadable(f"more than the {cap // MiB} MiB envdoctor reads")
            parts.append(chunk)
            if time.monotonic() > end:
                raise NotReadable(f"not read within {deadline_s:g} s")
    finally:
        os.close(fd)


def read_text(path: os.PathLike[str] | str, cap: int = DEFAULT_CAP, deadline_s: float = DEFAULT_DEADLINE_S,
              errors: str = "strict") -> str:
    """`read_bytes` decoded as UTF-8 (UnicodeDecodeError with errors="strict")."""
    return read_bytes(path, cap, deadline_s).decode("utf-8", errors)


class IdleReader:
    """A binary stream over a file descriptor whose `read` returns end of input once nothing came for `idle_s`:
    `envdoctor nccl diagnose -` behind a writer that hangs (a job stuck in NCCL) diagnoses what it got.
    `went_idle` says that it ended so."""

    def __init__(self, stream: BinaryIO, idle_s: float = STDIN_IDLE_S) -> None:
        self.stream = stream
        self.idle_s = idle_s
        self.went_idle = False
        self._eof = False
        try:
            self.fd: Optional[int] = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None  # an in-memory stream: nothing to wait on

    def read(self, n: int = -1) -> bytes:
        if self.fd is None:
            return self.stream.read(n)
        if self._eof:
            return b""
        want = n if n is not None and n > 0 else _CHUNK
        ready, _, _ = select.select([self.fd], [], [], self.idle_s)
        if not ready:
            self.went_idle = self._eof = True
            return b""
        chunk = os.read(self.fd, want)
        if not chunk:
            self._eof = True
        return chunk

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass  # standard input stays open for whoever owns it

    def __enter__(self) -> IdleReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def idle_reader(stream: BinaryIO, idle_s: float = STDIN_IDLE_S) -> IdleReader:
    """`stream` (standard input) with an idle deadline (see IdleReader)."""
    return IdleReader(stream, idle_s)
