"""`envdoctor snapshot [-o FILE]`: probe this machine and write the snapshot JSON."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from envdoctor.commands.common import add_python, add_timeouts, obtain_snapshot
from envdoctor.errors import InputError
from envdoctor.redact import scrub_secrets


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("snapshot", help="probe this machine and write the snapshot JSON")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    add_python(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    snap = obtain_snapshot(args)
    text = scrub_secrets(snap.dumps())
    if not args.output:
        sys.stdout.write(text)
        return 0
    write_atomic(Path(args.output), text)
    print(f"envdoctor: snapshot written to {args.output}", file=sys.stderr)
    return 0


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, so a failed write never leaves half a file."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent or Path(".")))
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        os.unlink(tmp)
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
