"""The text of `envdoctor diagnose`: the cause first, its evidence lines (input:line), what would confirm it, what
tells it apart from the runner-up, the fix; alternatives only when they have evidence of their own, one line each."""

from __future__ import annotations

from typing import TYPE_CHECKING, List

from envdoctor.present.style import Style
from envdoctor.redact import scrub_secrets

if TYPE_CHECKING:
    from envdoctor.findings import Finding
    from envdoctor.usecases.diagnose_text import DiagnoseResult

_SEVERITY = {"error": "red", "warning": "yellow", "info": "dim"}


def render_diagnose(result: DiagnoseResult, style: Style) -> str:
    """The diagnosis as text for people."""
    from envdoctor.usecases.diagnose_text import NOTHING, confirm_of, evidence_of, versus_of

    what = f"{len(result.inputs)} input(s), {result.lines} line(s)"
    if result.sections:
        what += ", report sections: " + ", ".join(dict.fromkeys(s.kind for s in result.sections))
    out: List[str] = [style("Diagnosis", "bold") + f" ({what})"]
    for label, line in result.cut_lines[:5]:
        out.append(f"  note: {label}:{line} is longer than the cap: read as its head and its tail, the middle cut")
    if len(result.cut_lines) > 5:
        out.append(f"  note: and {len(result.cut_lines) - 5} more line(s) cut")
    out += [f"  note: {why}" for why in result.skipped[:5]]
    if len(result.skipped) > 5:
        out.append(f"  note: and {len(result.skipped) - 5} more file(s) skipped")
    out.append("")
    if not result.findings:
        out.append(style(NOTHING, "green"))
        return "\n".join(out) + "\n"
    top = result.findings[0]
    rival = result.findings[1] if len(result.findings) > 1 else None
    out.append(style(f"{top.severity.upper()} {top.id}", _SEVERITY.get(top.severity, "bold"))
               + f" [{top.confidence or 'low'} confidence] {top.title}")
    for ev in evidence_of(top)[:6]:
        where = f"{ev['input']}:{ev['line']}" if ev["line"] is not None else "  fact"
        out.append(f"  {where}  {_clip(scrub_secrets(ev['text']), 160)}")  # scrub, then cut: a cut token is no shape
    confirm = confirm_of(top)
    if confirm:
        out.append(f"  confirm: {confirm}")
    versus = versus_of(top, rival)
    if versus:
        out.append(f"  versus {rival.category}: {versus}" if rival else f"  versus: {versus}")
    out.append(f"  fix: {top.fix}")
    others = alternatives(result)
    if others:
        out.append("")
        out.append("Alternatives:")
        for f in others:
            loc = f.locations[0] if f.locations else "fact"
            out.append(f"  {f.severity} {f.id} [{f.confidence or 'low'}] {f.title} ({loc})")
    return "\n".join(out) + "\n"


def alternatives(result: DiagnoseResult) -> List[Finding]:
    """The causes after the first worth naming: those with evidence lines of their own (the CLI and the TUI show
    them one line each)."""
    if not result.findings:
        return []
    top = result.findings[0]
    return [f for f in result.findings[1:] if f.evidence and set(f.evidence) - set(top.evidence)]


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
