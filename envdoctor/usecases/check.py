"""Check a machine: the findings of the rules on a snapshot (and what drifted from a baseline), sorted, for the
interpreter that was asked about; `CheckResult.to_json()` is the `envdoctor.check/1` document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from envdoctor.findings import Finding, exit_code, for_interpreter, sort_findings, summary

if TYPE_CHECKING:
    from envdoctor.knowledge import Knowledge
    from envdoctor.snapshot import Snapshot

CHECK_SCHEMA = "envdoctor.check/1"


@dataclass(frozen=True)
class CheckResult:
    """The snapshot checked and its findings, most severe first."""

    snapshot: Snapshot
    findings: List[Finding]

    @property
    def summary(self) -> Dict[str, int]:
        return summary(self.findings)

    def exit_code(self, strict: bool = False) -> int:
        """0 healthy, 1 an error (with `strict`, a warning too)."""
        return exit_code(self.findings, strict=strict)

    def to_json(self) -> Dict[str, Any]:
        return {
            "schema": CHECK_SCHEMA,
            "snapshot": self.snapshot.to_json(),
            "findings": [f.to_json() for f in self.findings],
            "summary": self.summary,
        }


def check(snapshot: Snapshot, knowledge: Knowledge, baseline: Optional[Snapshot] = None,
          python: Optional[str] = None) -> CheckResult:
    """Diagnose `snapshot` with `knowledge`'s rules and wheel index; `baseline`: also what drifted from it;
    `python`: the interpreter the findings' fixes name (None: the snapshot's own, written as `python`)."""
    from envdoctor.diagnose import diagnose

    found = diagnose(snapshot, knowledge.rules, knowledge.index, baseline)
    return CheckResult(snapshot, sort_findings(for_interpreter(found, python)))


def warm_up() -> None:
    """Import what a check runs (the rules engine and its predicates): started while the probes wait on torch."""
    import importlib

    importlib.import_module("envdoctor.diagnose")
