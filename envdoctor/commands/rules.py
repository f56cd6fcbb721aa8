"""`envdoctor rules [list|explain ID]`: the rules database, generated from the registry."""

from __future__ import annotations

import argparse
import sys

from envdoctor.commands.common import current_settings
from envdoctor.errors import InputError
from envdoctor.present.rules_doc import explain, rules_table
from envdoctor.rules.registry import load_rules


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="list the rules, or explain one")
    p.add_argument("action", nargs="?", choices=("list", "explain"), default="list")
    p.add_argument("rule_id", nargs="?", metavar="ID", help="rule id (ED101) or name (driver-too-old-for-torch-cuda)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    rules = load_rules(current_settings().rules_dir)
    if args.action == "list":
        sys.stdout.write(rules_table(rules))
        return 0
    if not args.rule_id:
        raise InputError("rules explain needs a rule id, e.g. `envdoctor rules explain ED101`")
    wanted = args.rule_id.upper() if args.rule_id.lower().startswith("ed") else args.rule_id
    rule = next((r for r in rules if wanted in (r.id, r.name)), None)
    if rule is None:
        raise InputError(f"no rule {args.rule_id!r}; `envdoctor rules list` shows them all")
    sys.stdout.write(explain(rule))
    return 0
