"""Findings as text: grouped by severity, each with its detail and fix."""

from __future__ import annotations

import textwrap
from typing import Sequence

from envdoctor.findings import Finding, summary
from envdoctor.present.style import Style
from envdoctor.present.words import word
from envdoctor.redact import scrub_secrets

_LABEL = {"error": ("ERROR", "red"), "warning": ("WARNING", "yellow"), "info": ("INFO", "blue")}


def render_findings(findings: Sequence[Finding], style: Style) -> str:
    if not findings:
        return style("No problems found.", "green") + "\n"
    lines = []
    for f in findings:
        label, colour = _LABEL[f.severity]
        subjects = f" [{', '.join(f.subjects)}]" if f.subjects else ""
        lines.append(f"{style(label, colour)} {style(f.id, 'bold')} {f.title}{subjects}")
        for para in scrub_secrets(f.detail).splitlines():  # before wrapping splits a secret
            lines.extend(textwrap.wrap(para, 100, initial_indent="    ", subsequent_indent="    ",
                                       break_long_words=False, break_on_hyphens=False) or [""])
        fix_lines = f.fix.splitlines() or [""]
        safety = "" if f.safety == "display_only" else f" ({word(f.safety)} with `envdoctor fix`)"
        lines.append(f"    {style('fix:', 'green')} {fix_lines[0]}{safety}")
        lines.extend(f"         {ln}" for ln in fix_lines[1:])
        lines.append("")
    s = summary(findings)
    lines.append(f"{s['errors']} error(s), {s['warnings']} warning(s), {s['infos']} info(s)")
    return "\n".join(lines) + "\n"
