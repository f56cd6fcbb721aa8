"""`envdoctor rules [list|explain ID]`: everything envdoctor can find (machine rules, NCCL root causes,
drift and fleet checks), from the one registry."""

from __future__ import annotations

import argparse

from envdoctor.commands.common import current_settings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list the rules, or explain one")
    p.add_argument("action", nargs="?", choices=("list", "explain"), default="list")
    p.add_argument("rule_id", nargs="?", metavar="ID",
                   help="rule id (ED101, NCCL-SHM-EXHAUSTED) or name (driver-too-old-for-torch-cuda, shm_exhausted)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from envdoctor.present.output import emit
    from envdoctor.present.rules_doc import explain, rules_table
    from envdoctor.usecases.rule_catalog import find_rule, rule_catalog

    rules_dir = current_settings().rules_path
    if args.action == "list":
        emit(rules_table(rule_catalog(rules_dir)))  # a rules database's text is input: escaped, scrubbed
        return 0
    emit(explain(find_rule(rules_dir, args.rule_id)))
    return 0
