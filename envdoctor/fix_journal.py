"""Where `fix` keeps its per-environment state, and the journal of a fix or undo in progress: its typed record
(`Journal`), read and written only through this module.

envdoctor.install.state writes the journal durably (`dumps`) and holds the lock; the probes read it here (they
report an interrupted fix as a fact of the environment), as do `fix` and `undo`."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from envdoctor.bounded_read import open_regular, read_text

JOURNAL = "journal.json"
LAST_FIX = "last_fix.json"
LOCK = "lock"
LAST_FIX_CAP = 16 * 1024 * 1024  # what one fix records: its versions and the backup's place
JOURNAL_SCHEMA = "envdoctor.fix_journal/1"


def state_dir(prefix: str, state_root: Path) -> Path:
    """Per-environment state under `state_root` (Settings.state_root): the last fix and the files it replaced."""
    key = hashlib.sha256(os.path.realpath(prefix).encode()).hexdigest()[:16]
    return state_root / key


@dataclass(frozen=True)
class Journal:
    """The journal of one fix or undo in progress, as `journal.json` holds it (`envdoctor.fix_journal/1`).

    Read from a file, a field whose value has the wrong shape is None and named in `malformed` (a damaged or
    planted journal: `journal_problem` says what stops its rollback); keys this version does not know are kept
    in `extra` and written back."""

    op: str  # "fix" or "undo"
    before: Dict[str, str]  # distribution -> version before the change
    id: Optional[str] = None
    pid: Optional[int] = None
    python: Optional[str] = None
    prefix: Optional[str] = None
    started: Optional[str] = None
    phase: Optional[str] = None  # a fix: "installing", then "rolling_back"
    backup: Optional[str] = None  # the directory of the kept files
    roots: Optional[List[str]] = None  # a fix: the environment's install directories it listed
    packages: Optional[List[Dict[str, Any]]] = None  # a fix: the plan's packages
    before_files: Optional[Dict[str, List[int]]] = None  # a fix: path -> [size, mtime_ns] before it
    remove: Optional[List[str]] = None  # an undo: the files it removes
    malformed: Tuple[str, ...] = ()
    extra: Dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        """The document, keys in the order envdoctor has always written them."""
        doc: Dict[str, Any] = {"schema": JOURNAL_SCHEMA}
        for name in _ORDER:
            value = getattr(self, name)
            if value is not None or name in _ALWAYS:
                doc[name] = value
        for key, value in self.extra.items():
            doc.setdefault(key, value)
        return doc

    @classmethod
    def from_json(cls, doc: Any) -> Journal:
        """ValueError when `doc` is not a fix journal at all."""
        if not isinstance(doc, dict) or doc.get("schema") != JOURNAL_SCHEMA or not isinstance(doc.get("before"), dict):
            raise ValueError("not an envdoctor fix journal")
        values: Dict[str, Any] = {}
        malformed = []
        for name in _ORDER:
            if name not in doc:
                continue
            value = doc[name]
            if value is None or _SHAPES[name](value):  # null: not recorded
                values[name] = value
            else:
                malformed.append(name)
        if not isinstance(values.get("op"), str):
            values["op"] = ""
        extra = {k: v for k, v in doc.items() if k != "schema" and k not in _SHAPES}
        return cls(**values, malformed=tuple(malformed), extra=extra)

    def describe(self) -> str:
        what = "an undo" if self.op == "undo" else "a fix"
        return f"{what} started {'?' if self.started is None else self.started} by pid {'?' if self.pid is None else self.pid}"


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _listing(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(v, list) and len(v) == 2 and all(isinstance(n, int) for n in v) for v in value.values())


def _text(value: Any) -> bool:
    return isinstance(value, str)


_SHAPES: Dict[str, Callable[[Any], bool]] = {
    "op": _text, "id": _text, "pid": lambda v: isinstance(v, int) and not isinstance(v, bool), "python": _text,
    "prefix": _text, "started": _text, "phase": _text, "before": lambda v: isinstance(v, dict), "backup": _text,
    "roots": _strings, "packages": lambda v: isinstance(v, list), "before_files": _listing, "remove": _strings,
}
_ORDER = tuple(_SHAPES)
_ALWAYS = ("op", "id", "pid", "python", "prefix", "started", "before")  # both kinds always wrote these


def load_journal(sdir: Path) -> Optional[Journal]:
    """The journal in `sdir`, None when there is none; OSError or ValueError when it cannot be read."""
    try:
        text = read_text(sdir / JOURNAL)
    except FileNotFoundError:
        return None
    return Journal.from_json(json.loads(text))


def dumps(journal: Journal) -> str:
    """The text of `journal.json` (install.state writes it durably)."""
    return json.dumps(journal.to_json())


def journal_problem(journal: Journal, roots: List[str], may_touch: Callable[[str], bool]) -> Optional[str]:
    """What stops finishing a rollback from this journal (damaged, or planted), None when nothing does: it must
    name a backup, its roots must be the environment's install directories (`roots`, as read now), and every
    file it would remove or put back must be one the environment may hold (`may_touch`)."""
    if journal.backup is None:
        return "no backup directory"
    if journal.op == "undo":
        if "remove" in journal.malformed:
            return "the files to remove are not a list of paths"
        outside = [p for p in journal.remove or [] if not may_touch(p)]
    else:
        if journal.roots is None or journal.before_files is None:
            return "no listing of the files from before the fix"
        outside = [r for r in journal.roots if r not in roots] + [p for p in journal.before_files if not may_touch(p)]
    return f"{outside[0]} is outside the environment" if outside else None


def finished(sdir: Path, journal: Journal) -> bool:
    """A fix journal whose fix was recorded as done (the process died between the two writes)."""
    if journal.op != "fix":
        return False
    try:
        last = json.loads(read_text(sdir / LAST_FIX, cap=LAST_FIX_CAP))
    except (OSError, ValueError):
        return False
    return isinstance(last, dict) and last.get("id") == journal.id


def is_locked(sdir: Path) -> Optional[bool]:
    """Whether some process holds the environment's lock now; None when that cannot be told."""
    import fcntl

    try:
        fd = open_regular(sdir / LOCK)
    except FileNotFoundError:
        return False
    except OSError:  # a FIFO or a device planted there too: nobody holds it the way envdoctor does
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError as exc:
        return True if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK) else None
    finally:
        os.close(fd)


def describe(journal: Journal) -> str:
    return journal.describe()
