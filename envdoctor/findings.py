"""One finding shape for every presenter: CLI text, JSON, markdown and the TUI."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Sequence

SEVERITIES = ("error", "warning", "info")
SAFETIES = ("safe", "unsafe", "display_only")


@dataclass
class Finding:
    id: str
    severity: str
    category: str
    title: str
    detail: str
    fix: str
    subjects: List[str] = field(default_factory=list)
    safety: str = "display_only"  # how safe the fix is to apply unattended (ruff's Applicability)
    commands: List[List[str]] = field(default_factory=list)  # the fix as argv lists, when it is runnable
    references: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity,
            "category": self.category,
            "title": self.title,
            "detail": self.detail,
            "fix": self.fix,
            "subjects": list(self.subjects),
            "fix_safety": self.safety,
            "fix_commands": [list(c) for c in self.commands],
            "references": list(self.references),
        }


def sort_findings(findings: Sequence[Finding]) -> List[Finding]:
    """Errors first, then warnings, then infos; within a severity, by rule id (a fixed order)."""
    return sorted(findings, key=lambda f: (SEVERITIES.index(f.severity), f.id, f.subjects))


def summary(findings: Sequence[Finding]) -> Dict[str, int]:
    return {
        "errors": sum(f.severity == "error" for f in findings),
        "warnings": sum(f.severity == "warning" for f in findings),
        "infos": sum(f.severity == "info" for f in findings),
    }


def exit_code(findings: Sequence[Finding], strict: bool = False) -> int:
    s = summary(findings)
    return 1 if s["errors"] or (strict and s["warnings"]) else 0
