"""`envdoctor fleet SNAPSHOT...`: compare the nodes of one cluster and name the odd one out."""

from __future__ import annotations

import argparse
import sys

from envdoctor.errors import InputError
from envdoctor.findings import exit_code, sort_findings, summary
from envdoctor.present.findings import render_findings
from envdoctor.present.output import emit, emit_json
from envdoctor.present.style import Style
from envdoctor.rules.drift import fleet_findings
from envdoctor.snapshot import load_snapshot, present

FLEET_SCHEMA = "envdoctor.fleet/1"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fleet", help="compare snapshots of a cluster's nodes; name the odd node out")
    p.add_argument("snapshots", nargs="+", metavar="SNAPSHOT")
    p.add_argument("--json", action="store_true")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if len(args.snapshots) < 2:
        raise InputError("fleet needs at least two snapshots")
    nodes = []
    for path in args.snapshots:
        snap = load_snapshot(path)
        name = snap.host.hostname if present(snap.host.hostname) else path
        nodes.append((str(name), path, snap))
    names = [n for n, _, _ in nodes]
    if len(set(names)) != len(names):  # same host name twice: tell them apart by file
        nodes = [(p, p, s) for _, p, s in nodes]
    findings = sort_findings(fleet_findings([(n, s) for n, _, s in nodes]))
    if args.json:
        doc = {"schema": FLEET_SCHEMA, "nodes": [{"host": n, "file": p} for n, p, _ in nodes],
               "findings": [f.to_json() for f in findings], "summary": summary(findings)}
        emit_json(doc)
    else:
        emit(f"{len(nodes)} nodes: {', '.join(n for n, _, _ in nodes)}\n\n")
        emit(render_findings(findings, Style.for_stream(sys.stdout)))
    return exit_code(findings, strict=args.strict)
