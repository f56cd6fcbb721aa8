"""`envdoctor report [--markdown] [--no-redact]`: a report to paste into a bug tracker."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from envdoctor.atomic_write import write_atomic
from envdoctor.commands.common import add_python, add_snapshot, add_timeouts, current_settings, obtain_snapshot
from envdoctor.diagnose import diagnose
from envdoctor.findings import for_interpreter, sort_findings
from envdoctor.present.output import say
from envdoctor.present.report import render_report
from envdoctor.probes.context import target_python


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="a report ready to paste into a bug tracker (secrets and host names removed)")
    p.add_argument("--markdown", action="store_true", help="markdown (the default; kept for scripts that pass it)")
    p.add_argument("--no-redact", action="store_true", help="keep host names, user names and addresses (never secrets)")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    add_snapshot(p)
    add_python(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    settings = current_settings()
    snap = obtain_snapshot(args, settings)
    know = settings.knowledge()
    python = target_python(args.python) if args.python and not args.snapshot else None
    findings = sort_findings(for_interpreter(diagnose(snap, know.rules, know.index), python))
    text = render_report(snap, findings, redact=not args.no_redact)
    if args.output:
        write_atomic(Path(args.output), text)
        say(f"envdoctor: report written to {args.output}")
    else:
        sys.stdout.write(text)
    return 0
