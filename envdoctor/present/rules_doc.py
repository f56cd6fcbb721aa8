"""The registry as text: `envdoctor rules list`, `rules explain ID` and docs/rules.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, List, Sequence

if TYPE_CHECKING:
    from envdoctor.catalog import Entry


def _safety(e: Entry) -> str:
    return e.fix_safety.replace("_", "-")


def rules_table(entries: Sequence[Entry]) -> str:
    width = max([len(e.id) for e in entries] + [6])
    cat = max([len(e.category) for e in entries] + [8])
    lines = [f"{'id':<{width}} {'kind':<8} {'severity':<8} {'category':<{cat}} name"]
    for e in entries:
        lines.append(f"{e.id:<{width}} {e.kind:<8} {e.severity:<8} {e.category:<{cat}} {e.name}")
    return "\n".join(lines) + "\n"


def explain(e: Entry) -> str:
    head = f"kind: {e.kind}   category: {e.category}   severity: {e.severity}"
    head += f"   status: {e.status}" if e.status else ""
    parts: List[str] = [f"{e.id} {e.name}", head + f"   fix: {_safety(e)}", "", "What it detects", f"  {e.what}"]
    if e.why:
        parts += ["", "Why it matters", f"  {e.why}"]
    parts += ["", "Fix", f"  {e.fix}"]
    for heading, lines in e.sections:
        parts += ["", heading] + [f"  {line}" for line in lines]
    if e.references:
        parts += ["", "References"] + [f"  {r}" for r in e.references]
    if e.fixtures:
        parts += ["", f"Fixtures: {e.fixtures}"]
    return "\n".join(parts) + "\n"


def rules_markdown(entries: Sequence[Entry]) -> str:
    out = ["# envdoctor rules", "", "Generated from `rules/*.json`, `rules/nccl/*.json` and `rules/checks/*.json` by "
           "`python -m envdoctor.present.rules_doc`; a test keeps it current. `envdoctor rules explain ID` shows one.",
           "", "| id | kind | name | category | severity | fix |", "|---|---|---|---|---|---|"]
    for e in entries:
        out.append(f"| {e.id} | {e.kind} | {e.name} | `{e.category}` | {e.severity} | {_safety(e)} |")
    for e in entries:
        out += ["", f"## {e.id} {e.name}", "", f"**What**: {e.what}"]
        if e.why:
            out += ["", f"**Why**: {e.why}"]
        out += ["", f"**Fix** ({_safety(e)}): {e.fix}"]
        for heading, lines in e.sections:
            if heading in ("Condition", "Message"):
                continue  # the JSON and the message templates are in `rules explain`
            out += ["", f"{heading}:", ""] + [f"- {line}" for line in lines]
        if e.references:
            out += ["", "References: " + ", ".join(e.references)]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    from pathlib import Path

    from envdoctor.knowledge import bundled_catalog

    target = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
    target.parent.mkdir(exist_ok=True)
    target.write_text(rules_markdown(bundled_catalog()), encoding="utf-8")
    print(f"wrote {target}")
