"""Per-environment install state: the lock, the journal of a fix in progress, and the record of the last fix.

Everything lives in `state_dir(prefix)` (mode 0700, files 0600):

- `lock`: held (fcntl.flock) by the envdoctor that is changing the environment; it holds that process's pid.
  The kernel drops the lock when the process dies, however it dies.
- `journal.json`: written and fsync'd before the environment is touched, removed once the fix is recorded or
  rolled back. Found while the lock is free, it is an interrupted fix: `undo` finishes its rollback from it.
- `last_fix.json`: the last completed fix, which `undo` reverts.

The names and the journal's typed record (`Journal`, read and written through it) are in envdoctor.fix_journal.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

from envdoctor.errors import InputError
from envdoctor.fix_journal import JOURNAL, LOCK, Journal, dumps, load_journal


class EnvStateError(InputError):
    """The environment's state stops a fix or an undo before it changes anything: `fix` and `undo` exit 3."""


class EnvBusy(EnvStateError):
    """Another envdoctor holds this environment's lock."""


class InterruptedFix(EnvStateError):
    """A journal from a fix that did not finish: the environment may be half-changed."""


class BackupDamaged(EnvStateError):
    """The kept files are changed or missing: `undo` changes nothing."""


def ensure_private_dir(path: Path) -> Path:
    """Create `path` (and its parents) with mode 0700; a path that exists but is no directory is bad input."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(path, 0o700)
    except OSError as exc:
        raise InputError(f"{path}: cannot use it as envdoctor's state directory: {exc.strerror or exc}") from None
    return path


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` atomically with mode 0600, fsync'd (the file and its directory)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_durably(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        return
    fsync_dir(path.parent)


class EnvLock:
    """The exclusive lock on one environment's state directory, held for the lifetime of a fix or an undo."""

    def __init__(self, sdir: Path, env_name: str) -> None:
        self.path = sdir / LOCK
        self.env_name = env_name
        self.fd: Optional[int] = None

    def acquire(self) -> EnvLock:
        import fcntl

        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot open the lock: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise InputError(f"{self.path}: cannot lock: {exc.strerror or exc}") from None
            holder = lock_holder(self.path)
            raise EnvBusy(f"another envdoctor fix is running on {self.env_name} (pid {holder or 'unknown'}); "
                          "wait for it to finish") from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # the lock holds without its pid; a second fix then says "pid unknown"
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the only descriptor drops the flock
            self.fd = None

    def __enter__(self) -> EnvLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_holder(path: Path) -> Optional[int]:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def write_journal(sdir: Path, journal: Journal) -> None:
    """Write the journal durably before the environment is touched (envdoctor.fix_journal holds its format)."""
    write_private(sdir / JOURNAL, dumps(journal))


def read_journal(sdir: Path) -> Optional[Journal]:
    """The journal of an unfinished fix or undo, None when there is none; an unreadable one is bad input."""
    try:
        return load_journal(sdir)
    except OSError as exc:
        raise InputError(f"{sdir / JOURNAL}: cannot read the journal of an interrupted fix: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise InputError(f"{sdir / JOURNAL}: the journal of an interrupted fix is damaged ({exc}); "
                         "the environment may be half-changed") from None


@contextmanager
def uninterruptible(progress: Any) -> Iterator[None]:
    """Ctrl-C and SIGTERM do not stop what runs inside (a rollback); they are reported and otherwise ignored.
    Signal handlers exist only in the main thread; elsewhere (the TUI's worker) no interrupt reaches it anyway."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def hold(signum: int, _frame: object) -> None:
        try:
            progress(f"{signal.Signals(signum).name} received: still rolling back, the environment is being put back")
        except Exception:  # a closed terminal must not stop the rollback either
            pass

    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
           if sys.platform != "win32" or s != signal.SIGHUP}
    for s in old:
        signal.signal(s, hold)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
