"""Evaluate rules on a snapshot. A rule that crashes becomes a finding; the others still run."""

from __future__ import annotations

from functools import partial
from typing import Any, Dict, List, Optional

from envdoctor.byte_sizes import format_bytes
from envdoctor.errors import InputError
from envdoctor.findings import SEVERITIES, Finding
from envdoctor.fixes import manual
from envdoctor.rules.conditions import PREDICATES, Context, Found, holds
from envdoctor.rules.registry import TEMPLATE_NAME, Rule, Rulebook
from envdoctor.rules.rule_fix import rule_fix
from envdoctor.rules.tables import Tables
from envdoctor.snapshot import Snapshot, Unavailable, is_absent, present
from envdoctor.wheels.index import WheelIndex


def render(template: str, ctx: Context, bindings: Dict[str, Any]) -> str:
    def sub(m: Any) -> str:
        name, fmt = m.group(1), m.group(2)
        if name in bindings:
            value = bindings[name]
        else:
            head = name.split(".")[0]
            value = ctx.child(**{head: bindings[head]}).resolve(name) if head in bindings else ctx.resolve(name)
        return _fmt(value, fmt, name)

    return TEMPLATE_NAME.sub(sub, template)


def _fmt(value: Any, fmt: Any, name: str = "") -> str:
    # A marker reads as a word inside a sentence; its reason belongs in the facts view, not in prose.
    if (is_absent(value) or value is None) and name.endswith("version"):
        return "(version unknown)"
    if isinstance(value, Unavailable):
        return "none"
    if is_absent(value) or value is None:
        return "unknown"
    if fmt == "count" and isinstance(value, list):
        return str(len(value))
    if fmt in ("gib", "mib") and isinstance(value, (int, float)):
        return format_bytes(value, unit="GiB", digits=1) if fmt == "gib" else format_bytes(value, unit="MiB", digits=0)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def evaluate_rule(rule: Rule, snapshot: Snapshot, tables: Optional[Tables] = None,
                  index: Optional[WheelIndex] = None) -> List[Finding]:
    base = Context(snapshot, tables=tables, index=index)
    if rule.for_each:
        items = base.resolve(rule.for_each["in"])
        contexts = [base.child(**{rule.for_each["as"]: item}) for item in items] if present(items) else []
    else:
        contexts = [base]
    out: List[Finding] = []
    for ctx in contexts:
        found = Found()
        if not holds(rule.when, ctx, PREDICATES, found):
            continue
        bindings = found.bindings
        severity = rule.severity
        if rule.escalate and holds(rule.escalate["when"], ctx, PREDICATES):
            severity = rule.escalate["to"]
        out.append(Finding(
            id=rule.id,
            severity=severity,
            category=rule.category,
            title=render(rule.title, ctx, bindings),
            detail=render(rule.detail, ctx, bindings),
            remedy=rule_fix(rule, partial(render, ctx=ctx, bindings=bindings)),
            subjects=[render(s, ctx, bindings) for s in rule.subjects],
            references=list(rule.references),
        ))
    if rule.group_title and len(out) > 1:
        subjects = [s for f in out for s in f.subjects]
        names = {"count": len(out), "subjects": ", ".join(f.subjects[0] for f in out)}
        first = out[0]
        first.title = render(rule.group_title, base, names)
        first.subjects = list(dict.fromkeys(subjects))
        first.severity = max((f.severity for f in out), key=lambda sev: -SEVERITIES.index(sev))
        return [first]
    return out


def evaluate_all(book: Rulebook, index: WheelIndex, snapshot: Snapshot) -> List[Finding]:
    findings: List[Finding] = []
    for rule in book.rules:
        if rule.status == "removed":
            continue
        try:
            findings.extend(evaluate_rule(rule, snapshot, book.tables, index))
        except InputError:  # bad data (a table the rule reads) is the user's exit 2, not a rule bug
            raise
        except Exception as exc:  # a rule bug must not cost the other findings
            findings.append(Finding(
                id=rule.id, severity="warning", category="rule_crashed",
                title=f"rule {rule.id} ({rule.name}) could not be evaluated",
                detail=f"{type(exc).__name__}: {exc}. The other rules ran; this check is missing from the report.",
                remedy=manual("Report this to envdoctor with `envdoctor report --markdown`."),
            ))
    return findings
