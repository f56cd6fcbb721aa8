"""`envdoctor report [--markdown] [--no-redact]`: a report to paste into a bug tracker."""

from __future__ import annotations

import argparse

from envdoctor.commands.common import (
    add_output_file,
    add_python,
    add_snapshot,
    add_timeouts,
    current_settings,
    obtain_snapshot,
    write_output,
)
from envdoctor.present.report import render_report
from envdoctor.probes.context import target_python
from envdoctor.usecases.check import check


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="a report ready to paste into a bug tracker (secrets and host names removed)")
    p.add_argument("--markdown", action="store_true", help="markdown (the default; kept for scripts that pass it)")
    p.add_argument("--no-redact", action="store_true", help="keep host names, user names and addresses (never secrets)")
    add_output_file(p)
    add_snapshot(p)
    add_python(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = current_settings()
    snap = obtain_snapshot(args, settings)
    python = target_python(args.python) if args.python and not args.snapshot else None
    result = check(snap, settings.knowledge(), python=python)
    write_output(args, render_report(snap, result.findings, redact=not args.no_redact), "report")
    return 0
