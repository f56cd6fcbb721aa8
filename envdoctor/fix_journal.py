"""Where `fix` keeps its per-environment state, and reading whether a fix or undo was interrupted there.

The writer is envdoctor.install.state; this module only reads, so that the probes can report an interrupted
fix as a fact of the environment."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Dict, Optional

JOURNAL = "journal.json"
LAST_FIX = "last_fix.json"
LOCK = "lock"
JOURNAL_SCHEMA = "envdoctor.fix_journal/1"


def state_dir(prefix: str, state_root: Path) -> Path:
    """Per-environment state under `state_root` (Settings.state_root): the last fix and the files it replaced."""
    key = hashlib.sha256(os.path.realpath(prefix).encode()).hexdigest()[:16]
    return state_root / key


def load_journal(sdir: Path) -> Optional[Dict[str, Any]]:
    """The journal in `sdir`, None when there is none; OSError or ValueError when it cannot be read."""
    try:
        text = (sdir / JOURNAL).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    doc = json.loads(text)
    if not isinstance(doc, dict) or doc.get("schema") != JOURNAL_SCHEMA or not isinstance(doc.get("before"), dict):
        raise ValueError("not an envdoctor fix journal")
    return doc


def finished(sdir: Path, journal: Dict[str, Any]) -> bool:
    """A fix journal whose fix was recorded as done (the process died between the two writes)."""
    if journal.get("op") != "fix":
        return False
    try:
        last = json.loads((sdir / LAST_FIX).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(last, dict) and last.get("id") == journal.get("id")


def is_locked(sdir: Path) -> Optional[bool]:
    """Whether some process holds the environment's lock now; None when that cannot be told."""
    import fcntl

    try:
        fd = os.open(sdir / LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return True if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK) else None
    finally:
        os.close(fd)


def describe(journal: Dict[str, Any]) -> str:
    what = "an undo" if journal.get("op") == "undo" else "a fix"
    return f"{what} started {journal.get('started', '?')} by pid {journal.get('pid', '?')}"
