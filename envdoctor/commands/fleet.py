"""`envdoctor fleet SNAPSHOT...`: compare the nodes of one cluster and name the odd one out.
`envdoctor fleet collect ...`: run once per node; the nodes meet over torch.distributed's store, rank 0 compares."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Tuple

from envdoctor.commands.common import add_output_file, add_output_options, current_settings, emit_result, snapshot_file
from envdoctor.errors import InputError
from envdoctor.present.fleet import render_collection, render_comparison
from envdoctor.present.output import document_text, write_file
from envdoctor.present.style import Style
from envdoctor.snapshot import Snapshot, load_snapshot
from envdoctor.usecases import fleet

FLEET_SCHEMA = fleet.FLEET_SCHEMA
__all__ = ["FLEET_SCHEMA", "register", "run"]
COLLECT = "collect"
DEFAULT_COLLECT_TIMEOUT = 120.0
COLLECT_FLAGS = ("nnodes", "node_rank", "rdzv_endpoint", "output", "bandwidth", "snapshot", "timeout", "gather", "group_size")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "fleet", help="compare snapshots of a cluster's nodes, or collect them over torch.distributed (`fleet collect`)",
        usage="envdoctor fleet SNAPSHOT SNAPSHOT... [--json] [--strict]\n"
              "       envdoctor fleet collect [--nnodes N] [--node-rank R] [--rdzv-endpoint HOST:PORT] [--snapshot FILE] "
              "[--bandwidth [--bandwidth-size SIZE]] [--timeout S] [--gather auto|flat|hierarchical] [--group-size G] "
              "[-o FILE] [--json] [--strict]",
        description="Name the odd node out of a cluster. `fleet collect` runs once per node (directly, or under "
                    "torchrun/srun, which give the rank, size and endpoint in the environment); rank 0 gathers every "
                    "node's snapshot over torch.distributed's store and prints the comparison.")
    p.add_argument("snapshots", nargs="+", metavar="SNAPSHOT", help="snapshot files, or `collect`")
    add_output_options(p, FLEET_SCHEMA)
    p.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    g = p.add_argument_group("fleet collect (run once per node)")
    g.add_argument("--nnodes", type=int, default=None, metavar="N",
                   help="nodes taking part (default: WORLD_SIZE or SLURM_NTASKS)")
    g.add_argument("--node-rank", type=int, default=None, metavar="R",
                   help="this node's rank, 0 gathers (default: RANK, SLURM_PROCID or JOB_COMPLETION_INDEX)")
    g.add_argument("--rdzv-endpoint", metavar="HOST:PORT", help="where the nodes meet: rank 0's host and a free port, "
                   "the same on every node (default: MASTER_ADDR:MASTER_PORT)")
    g.add_argument("--snapshot", type=snapshot_file, metavar="FILE",
                   help="contribute this snapshot instead of probing this node")
    g.add_argument("--bandwidth", action="store_true", help="also measure node-to-node bandwidth (an N x N matrix)")
    g.add_argument("--bandwidth-size", default="32M", metavar="SIZE", help="message size for --bandwidth (default 32M)")
    g.add_argument("--timeout", type=float, default=None, metavar="S",
                   help=f"how long rank 0 waits for every node, and a node for rank 0 (default {DEFAULT_COLLECT_TIMEOUT:g})")
    g.add_argument("--gather", choices=fleet.GATHER_MODES, default=None,
                   help=f"how the snapshots reach rank 0: every node to rank 0 (flat), or by groups whose leaders "
                        f"each send one document (hierarchical); auto (default): hierarchical from "
                        f"{fleet.AUTO_GROUPS_FROM} nodes. Rank 0's choice is every node's")
    g.add_argument("--group-size", type=int, default=None, metavar="G",
                   help=f"nodes per group when gathering by groups, in rank order (default {fleet.DEFAULT_GROUP})")
    add_output_file(g, "rank 0 also writes the JSON document to FILE")
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
    result = fleet.compare_snapshot_files(args.snapshots, current_settings().rules_knowledge())  # ENVDOCTOR_RULES_DIR's
    emit_result(args, result, lambda: render_comparison(result, Style.for_stream(sys.stdout)))
    return result.exit_code(strict=args.strict)


def _collect(args: argparse.Namespace) -> int:
    rdzv = fleet.rendezvous(args.nnodes, args.node_rank, args.rdzv_endpoint, os.environ)
    timeout = DEFAULT_COLLECT_TIMEOUT if args.timeout is None else args.timeout
    if timeout <= 0:
        raise InputError("--timeout must be positive")
    nbytes = fleet.message_size(args.bandwidth_size)
    gather = fleet.gather_plan(args.gather, args.group_size)
    know = current_settings().rules_knowledge()  # a bad data file is exit 2 on every node, before anyone waits
    snap = load_snapshot(args.snapshot) if args.snapshot else None

    def progress(text: str) -> None:
        print(f"envdoctor fleet[{rdzv.rank}]: {text}", file=sys.stderr, flush=True)

    def this_node() -> Tuple[Snapshot, str]:
        if snap is not None:
            return snap, args.snapshot
        from envdoctor.commands.common import current_settings, obtain_snapshot

        progress("probing this node")
        return obtain_snapshot(argparse.Namespace(snapshot=None, python=None, timeout=None), current_settings()), ""

    def decide(result: fleet.FleetCollection) -> int:
        if args.output:
            write_file(Path(args.output), document_text(result.to_json()))  # scrubbed as stdout is
        emit_result(args, result, lambda: render_collection(result, Style.for_stream(sys.stdout)))
        return result.exit_code(strict=args.strict)

    return fleet.collect_fleet(rdzv, this_node, timeout, nbytes if args.bandwidth else None, know, progress, decide,
                               gather)
