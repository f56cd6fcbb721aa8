"""Where `fix` keeps its per-environment state, and reading whether a fix or undo was interrupted there.

The writer is envdoctor.install.state; this module only reads, so that the probes can report an interrupted
fix as a fact of the environment."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

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


def journal_problem(journal: Dict[str, Any], roots: List[str], may_touch: Callable[[str], bool]) -> Optional[str]:
    """What stops finishing a rollback from this journal (damaged, or planted), None when nothing does: it must
    name a backup, its roots must be the environment's install directories (`roots`, as read now), and every
    file it would remove or put back must be one the environment may hold (`may_touch`)."""
    if not isinstance(journal.get("backup"), str):
        return "no backup directory"
    if journal.get("op") == "undo":
        remove = journal.get("remove", [])
        if not _paths(remove):
            return "the files to remove are not a list of paths"
        outside = [p for p in remove if not may_touch(p)]
    else:
        listing = journal.get("before_files")
        if not (_paths(journal.get("roots")) and isinstance(listing, dict) and all(
                isinstance(v, list) and len(v) == 2 and all(isinstance(n, int) for n in v) for v in listing.values())):
            return "no listing of the files from before the fix"
        outside = [r for r in journal["roots"] if r not in roots] + [p for p in listing if not may_touch(p)]
    return f"{outside[0]} is outside the environment" if outside else None


def _paths(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


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
