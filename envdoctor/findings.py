"""The one finding type: machine rules, NCCL diagnosis, drift, fleet and self-test verdicts.

One JSON shape (`record`): `to_json` is its view in the `check`/`fleet`/`selftest` documents, `to_nccl_json` in
`envdoctor.nccl/1`. The fix is a value (`envdoctor.fixes.Fix`); its text and argv are rendered for `python`.
A diagnosis that weighs evidence (NCCL) also fills confidence, score, evidence, locations and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Sequence

from envdoctor.fixes import APPLICABILITIES, Fix, render_argv, render_json, render_prose

SEVERITIES = ("error", "warning", "info")
SAFETIES = APPLICABILITIES


@dataclass
class Finding:
    id: str
    severity: str
    category: str
    title: str
    detail: str
    remedy: Fix  # what to do: the fix as a value; `fix`, `safety` and `commands` are rendered from it
    subjects: List[str] = field(default_factory=list)
    references: List[str] = field(default_factory=list)
    confidence: Optional[str] = None  # "high" | "medium" | "low" where the finding is a ranked guess
    evidence: List[str] = field(default_factory=list)  # the lines or facts it rests on
    locations: List[str] = field(default_factory=list)  # "file:line" of each quoted log line, in order
    score: Optional[float] = None
    why: List[str] = field(default_factory=list)  # the reasons that raised its score
    against: List[str] = field(default_factory=list)  # what speaks against it (ranked NCCL causes)
    test: Optional[Dict[str, str]] = None  # the check that tells it apart: {"run": ..., "confirms": ...}
    python: Optional[str] = None  # the interpreter its commands act on (`check --python`); None: as written

    @property
    def fix(self) -> str:
        """What to do, as text, its commands aimed at the finding's interpreter."""
        return render_prose(self.remedy, self.python)

    @property
    def safety(self) -> str:
        """How safe the fix is to apply unattended (ruff's Applicability): safe, unsafe or display_only."""
        return self.remedy.applicability

    @property
    def commands(self) -> List[List[str]]:
        """The fix as argv lists, when it is runnable, for the finding's interpreter."""
        return render_argv(self.remedy, self.python)

    def record(self) -> Dict[str, Any]:
        """The finding as JSON, every key; the documents select from it (`to_json`, `to_nccl_json`)."""
        return {
            "id": self.id,
            "severity": self.severity,
            "category": self.category,
            "title": self.title,
            "detail": self.detail,
            "fix": self.fix,
            "subjects": list(self.subjects),
            "fix_safety": self.safety,
            "fix_commands": self.commands,
            "fix_action": render_json(self.remedy),
            "references": list(self.references),
            "confidence": self.confidence,
            "score": None if self.score is None else round(self.score, 2),
            "evidence": list(self.evidence),
            "locations": list(self.locations),
            "why": list(self.why),
            "evidence_against": list(self.against),
            "discriminating_test": dict(self.test) if self.test else None,
        }

    def to_json(self) -> Dict[str, Any]:
        """A finding in the `check`/`fleet`/`selftest` documents (envdoctor.finding/1)."""
        record = self.record()
        return {key: record[key] for key in _FINDING_KEYS}

    def to_nccl_json(self) -> Dict[str, Any]:
        """A finding in `envdoctor.nccl/1`: the evidence-weighing keys of the same record (a score is a number)."""
        record = self.record()
        out = {key: record[key] for key in _NCCL_KEYS}
        out["score"] = out["score"] or 0.0
        return out


_FINDING_KEYS = ("id", "severity", "category", "title", "detail", "fix", "subjects", "fix_safety", "fix_commands",
                 "fix_action", "references")
_NCCL_KEYS = ("id", "category", "title", "severity", "evidence", "locations", "fix", "confidence", "score", "why",
              "evidence_against", "discriminating_test")


OLD_NCCL_PREFIX = "NCCL-NCCL-"  # the ids the causes of category nccl_* had in envdoctor 0.1.0: NCCL-NCCL-OOM, ...


def current_id(typed: str) -> str:
    """The id a finding carries now for an id as a user types it: an old NCCL-NCCL-OOM is NCCL-OOM (accepted as
    an alias wherever an id is typed); any other id as it is."""
    wanted = typed.strip()
    if wanted.upper().startswith(OLD_NCCL_PREFIX):
        return "NCCL-" + wanted[len(OLD_NCCL_PREFIX):]
    return wanted


def for_interpreter(findings: Sequence[Finding], python: Optional[str]) -> List[Finding]:
    """The findings with every suggested command aimed at `python` (the interpreter `check --python` diagnosed):
    `envdoctor fix/undo/check/report/snapshot/selftest` get `--python`, `pip ...` becomes `PYTHON -m pip ...`
    and `python ...` becomes `PYTHON ...`, in the text and in the runnable commands; None: unchanged."""
    if not python:
        return list(findings)
    return [replace(f, python=python) for f in findings]


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
