"""`envdoctor snapshot [-o FILE]`: probe this machine and write the snapshot JSON."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from envdoctor.atomic_write import write_atomic
from envdoctor.commands.common import add_python, add_timeouts, current_settings, obtain_snapshot
from envdoctor.redact import scrub_document


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("snapshot", help="probe this machine and write the snapshot JSON")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    add_python(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    snap = obtain_snapshot(args, current_settings())
    text = json.dumps(scrub_document(snap.to_json()), indent=2) + "\n"  # as Snapshot.dumps, secrets out
    if not args.output:
        sys.stdout.write(text)
        return 0
    write_atomic(Path(args.output), text)
    print(f"envdoctor: snapshot written to {args.output}", file=sys.stderr)
    return 0
