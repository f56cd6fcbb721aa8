"""Per-environment install state: the lock, the journal of a fix in progress, and the record of the last fix.

Everything lives in `state_dir(prefix)` (mode 0700, files 0600):

- `lock`: held (fcntl.flock) by the envdoctor that is changing the environment; it holds that process's pid.
  The kernel drops the lock when the process dies, however it dies. With it, `PREFIX/.envdoctor-fix.lock` (or its
  system-wide stand-in keyed by the resolved prefix) is held: the state directory depends on the user's cache.
- `journal.json`: written and fsync'd before the environment is touched, removed once the fix is recorded or
  rolled back. Found while the lock is free, it is an interrupted fix: `undo` finishes its rollback from it.
- `last_fix.json`: the last completed fix, which `undo` reverts.

The names and the journal's typed record (`Journal`, read and written through it) are in envdoctor.fix_journal.
"""

from __future__ import annotations

import errno
import hashlib
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, List, Optional, Tuple

from envdoctor.bounded_read import NotReadable, open_regular, read_text
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


# The lock that lives with the environment (its prefix), so that two envdoctors with different cache directories
# (with and without sudo, another XDG_CACHE_HOME) still exclude each other. An environment whose prefix cannot hold
# it is locked by its resolved prefix in one system-wide place; when neither can be had, the fix is refused.
PREFIX_LOCK = ".envdoctor-fix.lock"
SHARED_LOCKS = Path("/tmp/envdoctor-locks")


def prefix_lock_paths(prefix: str) -> Tuple[Path, Path]:
    """(the lock file in the environment's prefix, its system-wide stand-in keyed by the resolved prefix)."""
    real = os.path.realpath(prefix)
    key = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:24]
    return Path(real) / PREFIX_LOCK, SHARED_LOCKS / f"{key}.lock"


def _open_lock(path: Path, create: bool) -> Optional[int]:
    """A descriptor to flock `path` by (read-only is enough for flock); None when it cannot be had. InputError
    when something other than a regular file stands there (a FIFO, a device: planted)."""
    flags = os.O_NOFOLLOW
    try:
        if create:
            fd = open_regular(path, os.O_RDWR | os.O_CREAT | flags, 0o644)
            try:
                os.fchmod(fd, 0o644)  # another user's envdoctor must be able to open it too
            except OSError:
                pass
            return fd
        return open_regular(path, os.O_RDONLY | flags)
    except NotReadable as exc:
        raise InputError(f"{path}: cannot lock it: {exc}; remove it") from None
    except OSError:
        if create:
            return _open_lock(path, False)
        return None


def _shared_dir() -> bool:
    try:
        SHARED_LOCKS.mkdir(mode=0o1777, exist_ok=True)
        if SHARED_LOCKS.stat().st_uid == os.getuid():
            os.chmod(SHARED_LOCKS, 0o1777)
        return SHARED_LOCKS.is_dir() and not SHARED_LOCKS.is_symlink()
    except OSError:
        return False


class EnvLock:
    """The exclusive lock on one environment, held for the lifetime of a fix or an undo: its state directory's
    lock, and (with `prefix`) the lock that lives with the environment itself (`prefix_lock_paths`)."""

    def __init__(self, sdir: Path, env_name: str, prefix: Optional[str] = None) -> None:
        self.path = sdir / LOCK
        self.env_name = env_name
        self.prefix = prefix
        self.fd: Optional[int] = None
        self.held: List[int] = []

    def _busy(self, holder: Optional[int]) -> EnvBusy:
        return EnvBusy(f"another envdoctor fix is running on {self.env_name} (pid {holder or 'unknown'}); "
                       "wait for it to finish")

    def _flock(self, fd: int, path: Path) -> None:
        import fcntl

        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise InputError(f"{path}: cannot lock: {exc.strerror or exc}") from None
            raise self._busy(lock_holder(path) or lock_holder(self.path)) from None
        self.held.append(fd)
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # read-only: the lock holds without its pid

    def _lock_prefix(self, prefix: str) -> None:
        own, shared = prefix_lock_paths(prefix)
        fd = _open_lock(own, create=True)
        if fd is not None:
            self._flock(fd, own)
            fd = _open_lock(shared, create=False)  # one that could not lock the prefix may hold this stand-in
            if fd is not None:
                self._flock(fd, shared)
            return
        fd = _open_lock(shared, create=True) if _shared_dir() else None
        if fd is None:
            raise EnvStateError(f"{self.env_name}: cannot lock the environment (neither {own} nor {shared} can be "
                                "opened); refusing rather than racing another fix; nothing was changed")
        self._flock(fd, shared)

    def acquire(self) -> EnvLock:
        try:
            if self.prefix is not None:
                self._lock_prefix(self.prefix)
            try:
                fd = open_regular(self.path, os.O_RDWR | os.O_CREAT, 0o600)
            except NotReadable as exc:
                raise InputError(f"{self.path}: cannot lock it: {exc}; remove it") from None
            except OSError as exc:
                raise InputError(f"{self.path}: cannot open the lock: {exc.strerror or exc}") from None
            self._flock(fd, self.path)
        except BaseException:
            self.release()
            raise
        self.fd = self.held[-1]
        return self

    def release(self) -> None:
        for fd in reversed(self.held):
            os.close(fd)  # closing the only descriptor drops the flock
        self.held = []
        self.fd = None

    def __enter__(self) -> EnvLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def lock_holder(path: Path) -> Optional[int]:
    try:
        text = read_text(path, cap=64, deadline_s=1.0, errors="replace").strip()
    except OSError:  # not a regular file, or more than a pid: no holder to name
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
