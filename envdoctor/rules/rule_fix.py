"""A machine rule's fix as a value: its `fix_action` (the data), `fix_safety` and `fix` text."""

from __future__ import annotations

from typing import Callable

from envdoctor.fixes import Fix, read_prose
from envdoctor.rules.registry import Rule


def rule_fix(rule: Rule, fill: Callable[[str], str] = str) -> Fix:
    """The Fix of a rule's finding; `fill` renders the templates of its text and arguments (the default keeps them,
    as `rules explain` shows them). A rule without `fix_action` is prose only (manual)."""
    action = rule.fix_action or {}
    return Fix(action=action.get("action", "manual"), arguments=tuple(fill(a) for a in action.get("arguments", ())),
               applicability=rule.fix_safety, changes=tuple(fill(c) for c in action.get("changes", ())),
               prose=read_prose(fill(rule.fix)))
