"""`envdoctor check`: diagnose this machine (or a snapshot taken elsewhere)."""

from __future__ import annotations

import argparse
import sys

from envdoctor.commands.common import add_python, add_snapshot, add_timeouts, current_settings, obtain_snapshot
from envdoctor.errors import InputError
from envdoctor.settings import Settings

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


def _prepare(settings: Settings) -> None:
    """While the probes wait on torch: load and validate the knowledge (it is cached), and the modules that
    diagnose and present. A bad file is left for the main thread's own load to report."""
    import importlib

    for module in ("envdoctor.diagnose", "envdoctor.present.facts", "envdoctor.present.findings"):
        importlib.import_module(module)
    try:
        settings.knowledge()
    except InputError:
        pass


def run(args: argparse.Namespace) -> int:
    settings = current_settings()
    baseline = None
    if args.baseline:
        from envdoctor.snapshot import load_snapshot

        baseline = load_snapshot(args.baseline)
    # A bad ENVDOCTOR_WHEELS_INDEX is exit 2 before any probing (diagnose takes the index once it is passed in).
    settings.wheel_index()
    snap = obtain_snapshot(args, settings, meanwhile=lambda: _prepare(settings))
    from envdoctor.diagnose import diagnose
    from envdoctor.findings import exit_code, for_interpreter, sort_findings, summary
    from envdoctor.present.facts import render_facts
    from envdoctor.present.findings import render_findings
    from envdoctor.present.output import emit, emit_json
    from envdoctor.present.style import Style
    from envdoctor.probes.context import target_python

    know = settings.knowledge()
    python = None if args.snapshot else target_python(args.python) if args.python else None
    findings = sort_findings(for_interpreter(diagnose(snap, know.rules, know.index, baseline), python))
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
