"""The text of a check (`envdoctor check`): the machine's facts, then the findings."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envdoctor.present.facts import render_facts
from envdoctor.present.findings import render_findings
from envdoctor.present.style import Style

if TYPE_CHECKING:
    from envdoctor.usecases.check import CheckResult


def render_check(result: CheckResult, style: Style, facts: bool = True) -> str:
    """The facts (unless `facts` is False) and the findings, most severe first."""
    return (render_facts(result.snapshot) + "\n" if facts else "") + render_findings(result.findings, style)
