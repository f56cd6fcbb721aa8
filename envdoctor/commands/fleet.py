"""`envdoctor fleet SNAPSHOT...`: compare the nodes of one cluster and name the odd one out.
`envdoctor fleet collect ...`: run once per node; the nodes meet over torch.distributed's store, rank 0 compares."""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from typing import Any, Dict, List

from envdoctor.commands.common import current_settings
from envdoctor.errors import InputError
from envdoctor.findings import Finding, exit_code, sort_findings, summary
from envdoctor.fleet.diagnose import fleet_diagnosis
from envdoctor.fleet.report import FLEET_SCHEMA
from envdoctor.present.findings import render_findings
from envdoctor.present.output import emit, emit_json
from envdoctor.present.style import Style
from envdoctor.snapshot import load_snapshot, present

__all__ = ["FLEET_SCHEMA", "register", "run"]
COLLECT = "collect"
DEFAULT_COLLECT_TIMEOUT = 120.0
COLLECT_FLAGS = ("nnodes", "node_rank", "rdzv_endpoint", "output", "bandwidth", "snapshot", "timeout")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fleet", help="compare snapshots of a cluster's nodes, or collect them over torch.distributed (`fleet collect`)",
        usage="envdoctor fleet SNAPSHOT SNAPSHOT... [--json] [--strict]\n"
              "       envdoctor fleet collect [--nnodes N] [--node-rank R] [--rdzv-endpoint HOST:PORT] [--snapshot FILE] "
              "[--bandwidth [--bandwidth-size SIZE]] [--timeout S] [-o FILE] [--json] [--strict]",
        description="Name the odd node out of a cluster. `fleet collect` runs once per node (directly, or under "
                    "torchrun/srun, which give the rank, size and endpoint in the environment); rank 0 gathers every "
                    "node's snapshot over torch.distributed's store and prints the comparison.")
    p.add_argument("snapshots", nargs="+", metavar="SNAPSHOT", help="snapshot files, or `collect`")
    p.add_argument("--json", action="store_true", help="print the envdoctor.fleet/1 JSON document")
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    g = p.add_argument_group("fleet collect (run once per node)")
    g.add_argument("--nnodes", type=int, default=None, metavar="N",
                   help="nodes taking part (default: WORLD_SIZE or SLURM_NTASKS)")
    g.add_argument("--node-rank", type=int, default=None, metavar="R",
                   help="this node's rank, 0 gathers (default: RANK, SLURM_PROCID or JOB_COMPLETION_INDEX)")
    g.add_argument("--rdzv-endpoint", metavar="HOST:PORT", help="where the nodes meet: rank 0's host and a free port, "
                   "the same on every node (default: MASTER_ADDR:MASTER_PORT)")
    g.add_argument("--snapshot", metavar="FILE", help="contribute this snapshot instead of probing this node")
    g.add_argument("--bandwidth", action="store_true", help="also measure node-to-node bandwidth (an N x N matrix)")
    g.add_argument("--bandwidth-size", default="32M", metavar="SIZE", help="message size for --bandwidth (default 32M)")
    g.add_argument("--timeout", type=float, default=None, metavar="S",
                   help=f"how long rank 0 waits for every node, and a node for rank 0 (default {DEFAULT_COLLECT_TIMEOUT:g})")
    g.add_argument("-o", "--output", metavar="FILE", help="rank 0 also writes the JSON document to FILE")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.snapshots[0] == COLLECT:
        if len(args.snapshots) > 1:
            raise InputError(f"fleet collect takes no snapshot files (use --snapshot FILE): {args.snapshots[1]}")
        return _collect(args)
    given = [f"--{n.replace('_', '-')}" for n in COLLECT_FLAGS if getattr(args, n) not in (None, False)]
    if given:
        raise InputError(f"{', '.join(given)}: only with `fleet collect`")
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
    know = current_settings().knowledge()  # ENVDOCTOR_RULES_DIR's thresholds and checks, else the bundled ones
    findings = fleet_diagnosis([(n, s) for n, _, s in nodes], know.fleet, declared=know.checks)
    if args.json:
        doc = {"schema": FLEET_SCHEMA, "nodes": [{"host": n, "file": p} for n, p, _ in nodes],
               "findings": [f.to_json() for f in findings], "summary": summary(findings)}
        emit_json(doc)
    else:
        emit(f"{len(nodes)} nodes: {', '.join(n for n, _, _ in nodes)}\n\n")
        emit(render_findings(findings, Style.for_stream(sys.stdout)))
    return exit_code(findings, strict=args.strict)


def _collect(args: argparse.Namespace) -> int:
    from envdoctor.fleet import collect, report
    from envdoctor.fleet.endpoint import resolve_rendezvous
    from envdoctor.selftest.bandwidth import parse_size

    rdzv = resolve_rendezvous(args.nnodes, args.node_rank, args.rdzv_endpoint, os.environ)
    timeout = DEFAULT_COLLECT_TIMEOUT if args.timeout is None else args.timeout
    if timeout <= 0:
        raise InputError("--timeout must be positive")
    try:
        nbytes = parse_size(args.bandwidth_size)
    except ValueError as exc:
        raise InputError(f"--bandwidth-size: {exc}") from None
    know = current_settings().knowledge()  # a bad data file is exit 2 on every node, before anyone waits
    thresholds = know.fleet
    snap = load_snapshot(args.snapshot) if args.snapshot else None
    plan = collect.BandwidthPlan(nbytes=nbytes, iters=5) if args.bandwidth else None

    def progress(text: str) -> None:
        print(f"envdoctor fleet[{rdzv.rank}]: {text}", file=sys.stderr, flush=True)

    def payload() -> Dict[str, Any]:
        here = snap
        if here is None:
            from envdoctor.commands.common import current_settings, obtain_snapshot

            progress("probing this node")
            here = obtain_snapshot(argparse.Namespace(snapshot=None, python=None, timeout=None), current_settings())
        return {"hostname": socket.gethostname(), "file": args.snapshot or "", "snapshot": here.to_json()}

    def decide(got: collect.Collected) -> int:
        names, nodes, problems = report.gathered_nodes(got)
        m = report.measured(got, names, thresholds)
        findings: List[Finding] = fleet_diagnosis([(n, s) for _, n, s in nodes], thresholds, m, declared=know.checks)
        findings = sort_findings(findings + [_bad_snapshot(p) for p in problems])
        hostnames = {r: p.get("hostname") for r, p in got.payloads.items()}
        doc = report.collect_document(got, names, m, findings, hostnames)
        if args.output:
            from pathlib import Path

            from envdoctor.atomic_write import write_atomic

            write_atomic(Path(args.output), json.dumps(doc, indent=2) + "\n")
        if args.json:
            emit_json(doc)
        else:
            emit(_text(doc, m, findings))
        return exit_code(findings, strict=args.strict)

    try:
        return collect.run(rdzv, payload, timeout, plan, decide, progress)
    except collect.CollectError as exc:
        raise InputError(f"fleet collect (rank {rdzv.rank}): {exc}") from None


def _bad_snapshot(problem: str) -> Finding:
    return Finding(id="ED905", severity="error", category="fleet_node_missing", title="a node sent an unusable snapshot",
                   detail=problem, fix="Rerun `envdoctor snapshot` on that node and check its envdoctor version.")


def _text(doc: Dict[str, Any], m: Any, findings: List[Finding]) -> str:
    from envdoctor.fleet.report import render_matrix

    c = doc["collect"]
    arrived = [n["host"] for n in doc["nodes"] if n["arrived"]]
    out = [f"{len(arrived)}/{c['nnodes']} nodes at {c['endpoint']} in {c['seconds']:.1f}s: {', '.join(arrived)}"]
    if c["missing"]:
        out.append(f"never arrived: {', '.join(c['missing'])}")
    bw = doc.get("bandwidth")
    if bw and bw.get("matrix_gbps"):
        out.append("")
        out.append(render_matrix(bw["nodes"], bw["matrix_gbps"]).rstrip("\n"))
    elif bw and bw.get("error"):
        out.append(f"bandwidth: {bw['error']}")
    return "\n".join(out) + "\n\n" + render_findings(findings, Style.for_stream(sys.stdout))
