"""What envdoctor remembers of data files it has already checked: the fingerprints of the exact bytes that passed
validation, so that a later run over the same bytes, with the same code and schemas, may skip checking them again.

A fingerprint is the sha256 of envdoctor's, Python's and packaging's versions, the source of the code that
validates (the rules package, the schema validator and the snapshot fields a rule may name), every data-file schema
and each input file's name and bytes. Only a validation that found no problem is remembered; a file that changed,
a new envdoctor or an edited validator gives another fingerprint, which is checked in full. The record is one small
JSON file in the user's cache folder, written atomically; an unreadable, corrupt or foreign record is ignored (and
replaced after the next full check), and a cache folder envdoctor cannot write just means nothing is remembered.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Iterable, List, Optional, Tuple

import envdoctor
from envdoctor.atomic_write import write_atomic
from envdoctor.bounded_read import read_bytes
from envdoctor.errors import InputError

FORMAT = "envdoctor.validated/1"
FILE = "validated.json"
KEEP = 16  # fingerprints remembered (a rule author's copy, the bundled rules, a test's database...)

_PACKAGE = Path(envdoctor.__file__).resolve().parent
# The code whose verdict is remembered: what reads a rule (every module of envdoctor/rules), the schema validator,
# the modules a rule's names and fix actions are checked against, and the wheel index's reader.
_CODE_DIRS = ("rules",)
_CODE_FILES = ("__init__.py", "data_schemas.py", "jsonschema_lite.py", "snapshot.py", "fixes.py", "findings.py",
               "data_files.py", "versions.py", "compat.py", "cpulist.py", "byte_sizes.py", "errors.py",
               "validation_cache.py", "wheels/index.py")
_code_digest: Optional[bytes] = None


def _code() -> bytes:
    """The digest of the validating code and of every data-file schema (read once per process)."""
    global _code_digest
    if _code_digest is None:
        paths: List[Path] = [_PACKAGE / name for name in _CODE_FILES]
        for folder in _CODE_DIRS:
            paths += sorted((_PACKAGE / folder).glob("*.py"))
        paths += sorted((_PACKAGE / "data").glob("**/*.schema.json"))
        import packaging  # (its version parsing decides which specifiers are valid)

        h = hashlib.sha256(f"{envdoctor.__version__}\0{sys.version}\0{packaging.__version__}".encode())
        for p in paths:
            h.update(str(p.relative_to(_PACKAGE)).encode() + b"\0" + _bytes(p) + b"\0")
        _code_digest = h.digest()
    return _code_digest


def _bytes(path: Path) -> bytes:
    try:
        return read_bytes(path)
    except OSError as exc:  # NotReadable too: a FIFO, /dev/zero, a file over the cap
        return b"\0unreadable\0" + str(exc).encode("utf-8", "replace")


def fingerprint(kind: str, files: Iterable[Tuple[str, bytes]]) -> str:
    """The fingerprint of checking `files` ((name, bytes), in a fixed order) as `kind` ("rules")."""
    h = hashlib.sha256(_code() + kind.encode() + b"\0")
    for name, data in files:
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0" + data)
    return h.hexdigest()


def file_bytes(paths: Iterable[Path], where: str = "") -> List[Tuple[str, bytes]]:
    """(name, bytes) of each file, for `fingerprint`: the name is `where` and the file's name (a file moved between
    folders is another file); a file that cannot be read gives a marker, never a match. Every read is bounded."""
    return [(f"{where}/{p.name}" if where else p.name, _bytes(p)) for p in paths]


class ValidationCache:
    """The fingerprints that passed validation, kept in `folder` (None: nothing is remembered)."""

    def __init__(self, folder: Optional[Path]) -> None:
        self.folder = folder
        self._known: Optional[List[str]] = None

    @property
    def path(self) -> Optional[Path]:
        return self.folder / FILE if self.folder is not None else None

    def _read(self) -> List[str]:
        if self._known is None:
            self._known = []
            if self.path is not None:
                try:
                    doc = json.loads(read_bytes(self.path, cap=1 << 20, deadline_s=5.0))
                except (OSError, ValueError, RecursionError):
                    doc = None
                if isinstance(doc, dict) and doc.get("format") == FORMAT and isinstance(doc.get("passed"), list):
                    self._known = [k for k in doc["passed"] if isinstance(k, str) and len(k) == 64][:KEEP]
        return self._known

    def passed(self, key: str) -> bool:
        """Whether these exact inputs already passed validation."""
        return key in self._read()

    def remember(self, key: str) -> None:
        """Record that `key` passed (a cache folder envdoctor cannot write is left as it is)."""
        if self.path is None:
            return
        self._known = None  # another loader (or process) may have written since this one read
        known = [key] + [k for k in self._read() if k != key]
        self._known = known[:KEEP]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, json.dumps({"format": FORMAT, "passed": self._known}) + "\n")
        except (OSError, InputError):
            pass


NO_CACHE = ValidationCache(None)
