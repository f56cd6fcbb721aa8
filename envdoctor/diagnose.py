"""Snapshot -> findings: a pure function of the snapshot and the knowledge passed in."""

from __future__ import annotations

from typing import List, Optional

from envdoctor.findings import Finding
from envdoctor.rules.registry import Rulebook
from envdoctor.snapshot import Snapshot
from envdoctor.wheels.index import WheelIndex


def diagnose(snapshot: Snapshot, rules: Rulebook, index: WheelIndex,
             baseline: Optional[Snapshot] = None) -> List[Finding]:
    """Every finding of the rules on the snapshot, plus what drifted from `baseline` when one is given.

    Reads nothing: the rules, their tables, the drift checks and the wheel index come in (see `envdoctor.knowledge`)."""
    from envdoctor.rules.engine import evaluate_all

    findings = evaluate_all(rules, index, snapshot)
    if baseline is not None:
        from envdoctor.rules.drift import drift_findings

        findings.extend(drift_findings(baseline, snapshot, rules.checks))
    return findings
