"""Everything envdoctor prints goes through here: secrets never leave the machine, whatever the input held
(a snapshot from another machine, a log, an index URL with credentials), and no control character
reaches a terminal raw."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Optional, TextIO

from envdoctor.atomic_write import write_atomic
from envdoctor.errors import InputError
from envdoctor.lost_output import write_or_drop
from envdoctor.present.terminal import for_terminal
from envdoctor.redact import scrub_document


def emit(text: str, stream: Optional[TextIO] = None) -> None:
    write_or_drop(stream or sys.stdout, for_terminal(text))


def say(text: str, stream: Optional[TextIO] = None) -> None:
    """One line for people on stderr (progress, an error): secrets out, control characters escaped."""
    write_or_drop(stream or sys.stderr, for_terminal(text) + "\n", flush=True)


def document_text(doc: Any) -> str:
    """A document as JSON text, the secrets out of every string (JSON escapes control characters itself)."""
    return json.dumps(scrub_document(doc), indent=2) + "\n"


def emit_json(doc: Any, stream: Optional[TextIO] = None) -> None:
    write_or_drop(stream or sys.stdout, document_text(doc))


def write_file(path: Path, text: str) -> None:
    """An output file (-o FILE, a report, the index copy), written whole or not at all; InputError naming it."""
    write_atomic(Path(path), text)


@dataclass(frozen=True)
class DocumentFormat:
    """A way to print a result's contract document (its `to_json()`): the flag `--NAME` every command with a
    document gets, its help (`{schema}` is the command's schema), and the writer of the document."""

    name: str
    help: str
    write: Callable[[Any], None]


# Every document format, by name: each command that prints a document offers them all (commands.common).
DOCUMENT_FORMATS: Dict[str, DocumentFormat] = {}


def register_format(fmt: DocumentFormat) -> DocumentFormat:
    """Offer `fmt` on every command that prints a document (before the parser is built)."""
    DOCUMENT_FORMATS[fmt.name] = fmt
    return fmt


register_format(DocumentFormat("json", "print the {schema} JSON document", emit_json))


def ask(question: str) -> str:
    """The answer typed at a prompt; end of input (Ctrl-D) is an InputError, so nothing happens."""
    sys.stdout.write(question)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        sys.stdout.write("\n")
        raise InputError(f"no answer to {question.split('?')[0].strip()!r} (end of input); nothing was changed")
    return line.rstrip("\n")


class LiveLine:
    """One status line on a terminal, rewritten in place (carriage return, no escape sequences); `clear`
    before any other output."""

    def __init__(self, stream: Optional[TextIO] = None) -> None:
        self.stream = stream or sys.stderr
        self.shown = 0

    def show(self, text: str) -> None:
        import shutil

        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        line = for_terminal(text).replace("\n", " ")[:width]
        write_or_drop(self.stream, "\r" + line.ljust(self.shown), flush=True)
        self.shown = len(line)

    def clear(self) -> None:
        if self.shown:
            write_or_drop(self.stream, "\r" + " " * self.shown + "\r")
            self.shown = 0
