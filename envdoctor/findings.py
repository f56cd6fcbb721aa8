"""The one finding type: machine rules, NCCL diagnosis, drift, fleet and self-test verdicts.

`to_json` is a finding in the `check`/`fleet`/`selftest` documents; `to_nccl_json` in `envdoctor.nccl/1`.
A diagnosis that weighs evidence (NCCL) also fills confidence, score, evidence, locations and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence

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
    confidence: Optional[str] = None  # "high" | "medium" | "low" where the finding is a ranked guess
    evidence: List[str] = field(default_factory=list)  # the lines or facts it rests on
    locations: List[str] = field(default_factory=list)  # "file:line" of each quoted log line, in order
    score: Optional[float] = None
    why: List[str] = field(default_factory=list)  # the reasons that raised its score
    against: List[str] = field(default_factory=list)  # what speaks against it (ranked NCCL causes)
    test: Optional[Dict[str, str]] = None  # the check that tells it apart: {"run": ..., "confirms": ...}

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

    def to_nccl_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "category": self.category,
            "title": self.title,
            "severity": self.severity,
            "evidence": list(self.evidence),
            "locations": list(self.locations),
            "fix": self.fix,
            "confidence": self.confidence,
            "score": round(self.score or 0.0, 2),
            "why": list(self.why),
            "evidence_against": list(self.against),
            "discriminating_test": dict(self.test) if self.test else None,
        }


# The envdoctor commands that act on one interpreter (`--python`), and the pip/python commands that would act
# on whichever interpreter comes first on PATH.
_AIMED = ("fix", "undo", "check", "report", "snapshot", "selftest")
_ENVDOCTOR_CMD = re.compile(r"`envdoctor (" + "|".join(_AIMED) + r")\b(?![^`]*--python)")
_PYTHON_CMD = re.compile(r"`(?:python3? -m pip|pip3?|python3?)(?= )")


def for_interpreter(findings: Sequence[Finding], python: Optional[str]) -> List[Finding]:
    """The findings with every suggested command aimed at `python` (the interpreter `check --python` diagnosed):
    `envdoctor fix/undo/check/report/snapshot/selftest` get `--python`, `pip ...` becomes `PYTHON -m pip ...`
    and `python ...` becomes `PYTHON ...`, in the text and in the runnable commands; None: unchanged."""
    if not python:
        return list(findings)
    import shlex

    quoted = shlex.quote(python)

    def aim_python(m: re.Match) -> str:
        return f"`{quoted}" + (" -m pip" if "pip" in m.group() else "")

    out = []
    for f in findings:
        commands = [c[:2] + ["--python", python] + c[2:] if c[:1] == ["envdoctor"] and c[1:2] and c[1] in _AIMED
                    and "--python" not in c else list(c) for c in f.commands]
        fix = _ENVDOCTOR_CMD.sub(lambda m: f"`envdoctor {m.group(1)} --python {quoted}", f.fix)
        out.append(replace(f, commands=commands, fix=_PYTHON_CMD.sub(aim_python, fix)))
    return out


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
