"""Self-test verdicts as text: the one-line gist (CLI and TUI) and the `envdoctor selftest` report."""

from __future__ import annotations

from typing import List, Optional

from envdoctor.findings import sort_findings
from envdoctor.present.findings import render_findings
from envdoctor.present.style import Style
from envdoctor.selftest.registry import find
from envdoctor.selftest.result import TestResult
from envdoctor.usecases.selftest import Finished, Said, SelftestEvent

_LABEL = {"passed": ("PASSED", "green"), "failed": ("FAILED", "red"), "skipped": ("SKIPPED", "yellow")}


def summary_line(r: TestResult) -> str:
    """The one-line gist of a passed TestResult (text report, TUI and markdown report), from its test's record."""
    kind = find(r.name)
    return kind.summary(r.metrics) if r.status == "passed" and kind is not None else ""


def event_line(event: SelftestEvent) -> Optional[str]:
    """A run's event as the CLI's progress line (stderr), without the `envdoctor selftest: ` prefix; None for
    events said otherwise (the selection is the results' order)."""
    if isinstance(event, Said):
        return event.text
    if isinstance(event, Finished):
        r = event.result
        return f"{r.name}: {r.status} ({r.seconds:.1f}s)"
    return None


def render_results(results: List[TestResult], style: Style) -> str:
    lines = []
    for r in results:
        label, colour = _LABEL[r.status]
        head = f"{style(label.ljust(7), colour)} {style(r.name.ljust(9), 'bold')} {r.seconds:6.1f}s  {summary_line(r)}"
        lines.append(head.rstrip())
        if r.error:
            why = "why" if r.status == "skipped" else "error"
            err = r.error.strip().splitlines()
            lines.append(f"        {why}: {err[0]}")
            lines.extend(f"          {ln}" for ln in err[1:8])
        if r.log:
            lines.append(f"        log kept: {r.log}")
    findings = sort_findings([f for r in results for f in r.findings])
    counts = {s: sum(r.status == s for r in results) for s in ("passed", "failed", "skipped")}
    out = "\n".join(lines) + "\n"
    if findings:
        out += "\n" + render_findings(findings, style)
    out += f"\n{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped\n"
    return out
