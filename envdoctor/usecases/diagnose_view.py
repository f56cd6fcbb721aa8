"""Diagnose one input as a screen shows it: a file's path or a pasted text, the diagnosis (`diagnose_text`) and the
text to show beside it (the pasted text, or the file's when it is small enough to hold).

The TUI's Diagnose tab calls `diagnose_input` in its worker and renders what it returns; it never reads the file
itself."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from envdoctor.usecases.diagnose_text import DiagnoseResult, diagnose_text

if TYPE_CHECKING:
    from envdoctor.knowledge import Knowledge
    from envdoctor.snapshot import Snapshot

PASTED = "pasted"  # how the evidence names a pasted text's lines ("pasted:12")


@dataclass
class ShownDiagnosis:
    """A diagnosis and the input it was made of, as far as a screen can hold it."""

    result: DiagnoseResult
    label: str  # the input's name in the evidence locations (the path as given, or PASTED)
    text: Optional[str]  # the input's text; None: a file bigger than the cap, a directory or a pipe (not held)
    snapshot_used: bool = False  # the machine's facts were weighed with the text


def diagnose_input(path: Optional[str], text: Optional[str], knowledge: Knowledge,
                   snapshot: Optional[Snapshot] = None, keep_text: int = 0) -> ShownDiagnosis:
    """Diagnose the file at `path` or (path None) the pasted `text`, with `snapshot`'s facts where given.
    `keep_text`: the file's text comes back too when it is a regular file of at most that many bytes.
    InputError (exit 2 in the CLI) names an unreadable path."""
    if path is None:
        pasted = text or ""
        return ShownDiagnosis(diagnose_text([(PASTED, pasted)], knowledge, snapshot), PASTED, pasted,
                              snapshot is not None)
    result = diagnose_text([path], knowledge, snapshot)
    shown: Optional[str] = None
    try:
        st = os.stat(path)
        if keep_text and stat.S_ISREG(st.st_mode) and st.st_size <= keep_text:
            with open(path, encoding="utf-8", errors="replace") as f:
                shown = f.read(keep_text + 1)
    except OSError:
        shown = None  # read once for the diagnosis, gone since: the diagnosis stands, the text is not shown
    return ShownDiagnosis(result, path, shown, snapshot is not None)
