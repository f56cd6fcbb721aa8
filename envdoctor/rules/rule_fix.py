"""A machine rule's fix as a value: its `fix_action` (the data), `fix_safety` and `fix` text."""

from __future__ import annotations

import shlex
from typing import Callable, Tuple

from envdoctor.fixes import Fix, read_prose
from envdoctor.rules.registry import Rule


def rule_fix(rule: Rule, fill: Callable[[str], str] = str) -> Fix:
    """The Fix of a rule's finding; `fill` renders the templates of its text and arguments (the default keeps them,
    as `rules explain` shows them). A rule without `fix_action` is prose only (manual)."""
    action = rule.fix_action or {}
    return Fix(action=action.get("action", "manual"), arguments=tuple(fill(a) for a in action.get("arguments", ())),
               applicability=rule.fix_safety, changes=_words(action.get("changes", ()), fill),
               prose=read_prose(fill(rule.fix)), requirements=_words(action.get("requirements", ()), fill))


def _words(templates: Tuple[str, ...], fill: Callable[[str], str]) -> Tuple[str, ...]:
    """Each template rendered and split as a shell would (`{pins}` holds several quoted requirements); a rendering
    that is not shell words stays one."""
    out = []
    for template in templates:
        text = fill(template)
        try:
            out += shlex.split(text) if text.strip() else []
        except ValueError:
            out.append(text)
    return tuple(out)
