"""`envdoctor check`: diagnose this machine (or a snapshot taken elsewhere)."""

from __future__ import annotations

import argparse
import sys
import threading
from typing import List

from envdoctor.commands.common import add_python, add_snapshot, add_timeouts, current_settings, obtain_snapshot
from envdoctor.findings import Finding, exit_code, sort_findings, summary
from envdoctor.present.facts import render_facts
from envdoctor.present.findings import render_findings
from envdoctor.present.output import emit, emit_json
from envdoctor.present.style import Style

CHECK_SCHEMA = "envdoctor.check/1"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="diagnose this machine, or a snapshot taken elsewhere")
    add_snapshot(p)
    p.add_argument("--baseline", metavar="FILE", help="also report what drifted from this saved snapshot")
    p.add_argument("--json", action="store_true", help="print the envdoctor.check/1 JSON document")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.add_argument("--facts", action=argparse.BooleanOptionalAction, default=True,
                   help="print the machine's facts before the findings (text output)")
    add_python(p)
    add_timeouts(p)
    p.set_defaults(func=run)


def diagnose_snapshot(snapshot, baseline=None) -> List[Finding]:
    from envdoctor.diagnose import diagnose

    return diagnose(snapshot, baseline=baseline)


def run(args: argparse.Namespace) -> int:
    from envdoctor.snapshot import load_snapshot

    settings = current_settings()
    baseline = load_snapshot(args.baseline) if args.baseline else None
    # A bad ENVDOCTOR_WHEELS_INDEX is exit 2 before any probing (diagnose takes the index once it is passed in).
    settings.wheel_index()
    if not args.snapshot:  # probing takes seconds: get the rules ready meanwhile
        from envdoctor.diagnose import prepare

        threading.Thread(target=prepare, name="prepare-rules", daemon=True).start()
    snap = obtain_snapshot(args, settings)
    findings = sort_findings(diagnose_snapshot(snap, baseline))
    if args.json:
        doc = {
            "schema": CHECK_SCHEMA,
            "snapshot": snap.to_json(),
            "findings": [f.to_json() for f in findings],
            "summary": summary(findings),
        }
        emit_json(doc)
    else:
        style = Style.for_stream(sys.stdout)
        if args.facts:
            emit(render_facts(snap) + "\n")
        emit(render_findings(findings, style))
    return exit_code(findings, strict=args.strict)
