"""`envdoctor snapshot [-o FILE]`: probe this machine and write the snapshot JSON."""

from __future__ import annotations

import argparse

from envdoctor.commands.common import add_output_file, add_python, add_timeouts, current_settings, obtain_snapshot, write_output
from envdoctor.present.output import document_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("snapshot", help="probe this machine and write the snapshot JSON")
    add_output_file(p)
    add_python(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    snap = obtain_snapshot(args, current_settings())
    write_output(args, document_text(snap.to_json()), "snapshot")  # secrets out
    return 0
