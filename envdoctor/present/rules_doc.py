"""The rules registry as text: `envdoctor rules list`, `rules explain ID` and docs/rules.md."""

from __future__ import annotations

import json
from typing import List, Sequence

from envdoctor.rules.registry import Rule


def rules_table(rules: Sequence[Rule]) -> str:
    lines = [f"{'id':<6} {'severity':<8} {'category':<26} name"]
    for r in rules:
        lines.append(f"{r.id:<6} {r.severity:<8} {r.category:<26} {r.name}")
    return "\n".join(lines) + "\n"


def explain(rule: Rule) -> str:
    ex = rule.explanation
    parts: List[str] = [
        f"{rule.id} {rule.name}",
        f"category: {rule.category}   severity: {rule.severity}   status: {rule.status} since {rule.since}"
        f"   fix: {rule.fix_safety.replace('_', '-')}",
        "",
        "What it detects",
        f"  {ex['what']}",
        "",
        "Why it matters",
        f"  {ex['why']}",
    ]
    if ex.get("example"):
        parts += ["", "Example", f"  {ex['example']}"]
    parts += ["", "Message", f"  {rule.title}", f"  {rule.detail}", "", "Fix", f"  {rule.fix}"]
    if rule.fix_commands:
        parts += ["  runs: " + " && ".join(" ".join(c) for c in rule.fix_commands)]
    parts += ["", "Condition", "  " + json.dumps(rule.when)]
    if rule.references:
        parts += ["", "References"] + [f"  {r}" for r in rule.references]
    parts += ["", f"Fixtures: fires on {', '.join(rule.fixtures['fires'])}; quiet on {', '.join(rule.fixtures['quiet'])}"]
    return "\n".join(parts) + "\n"


def rules_markdown(rules: Sequence[Rule]) -> str:
    out = ["# envdoctor rules", "", "Generated from `rules/*.json` by `python -m envdoctor.present.rules_doc`; "
           "a test keeps it current.", "", "| id | name | category | severity | fix |", "|---|---|---|---|---|"]
    for r in rules:
        out.append(f"| {r.id} | {r.name} | `{r.category}` | {r.severity} | {r.fix_safety.replace('_', '-')} |")
    for r in rules:
        ex = r.explanation
        out += ["", f"## {r.id} {r.name}", "", f"**What**: {ex['what']}", "", f"**Why**: {ex['why']}"]
        if ex.get("example"):
            out += ["", f"**Example**: {ex['example']}"]
        out += ["", f"**Fix** ({r.fix_safety.replace('_', '-')}): {r.fix}"]
        if r.references:
            out += ["", "References: " + ", ".join(r.references)]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    from pathlib import Path

    from envdoctor.rules.registry import load_rules

    target = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    target.parent.mkdir(exist_ok=True)
    target.write_text(rules_markdown(load_rules()), encoding="utf-8")
    print(f"wrote {target}")
