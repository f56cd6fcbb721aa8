"""Output that may go away (a closed pipe, `| tee` ended by the same Ctrl-C, a closed terminal) never stops what
envdoctor is doing: a rollback finishes and the exit code stands. What cannot be written is dropped, and the
stream is pointed at the null device so that Python's own flush at exit does not fail either."""

from __future__ import annotations

import os
import sys
from typing import Callable, TextIO


def _lost(exc: BaseException) -> bool:
    """The output errors a lost reader gives: EPIPE (BrokenPipeError), EIO on a hung-up terminal, a closed file."""
    return isinstance(exc, OSError) or (isinstance(exc, ValueError) and "closed file" in str(exc))


def _drop(stream: TextIO) -> None:
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is stream:
            try:
                setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
            except OSError:
                pass


def write_or_drop(stream: TextIO, text: str, flush: bool = False) -> bool:
    """Write `text` to `stream`; False (and the text dropped) when its reader is gone."""
    try:
        stream.write(text)
        if flush:
            stream.flush()
        return True
    except (OSError, ValueError) as exc:
        if not _lost(exc):
            raise
        _drop(stream)
        return False


def never_raises(progress: Callable[[str], None]) -> Callable[[str], None]:
    """`progress` that drops a line it cannot print instead of raising: a rollback must not stop on its messages."""

    def say(line: str) -> None:
        try:
            progress(line)
        except (OSError, ValueError) as exc:
            if not _lost(exc):
                raise
            for stream in (sys.stdout, sys.stderr):
                write_or_drop(stream, "", flush=True)

    return say
