"""`envdoctor rules [list|explain ID]`: everything envdoctor can find (machine rules, NCCL root causes,
drift and fleet checks), from the one registry."""

from __future__ import annotations

import argparse
import sys

from envdoctor.commands.common import current_settings
from envdoctor.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list the rules, or explain one")
    p.add_argument("action", nargs="?", choices=("list", "explain"), default="list")
    p.add_argument("rule_id", nargs="?", metavar="ID",
                   help="rule id (ED101, NCCL-SHM-EXHAUSTED) or name (driver-too-old-for-torch-cuda, shm_exhausted)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envdoctor.catalog import find
    from envdoctor.knowledge import catalog_for
    from envdoctor.present.rules_doc import explain, rules_table

    entries = catalog_for(current_settings().rules_path)
    if args.action == "list":
        sys.stdout.write(rules_table(entries))
        return 0
    if not args.rule_id:
        raise InputError("rules explain needs a rule id, e.g. `envdoctor rules explain ED101`")
    entry = find(entries, args.rule_id)
    if entry is None:
        raise InputError(f"no rule {args.rule_id!r}; `envdoctor rules list` shows them all")
    sys.stdout.write(explain(entry))
    return 0
