"""Snapshot -> findings. The rules database lives in `rules/`; this is its single entry point."""

from __future__ import annotations

from typing import List, Optional

from envdoctor.findings import Finding
from envdoctor.snapshot import Snapshot


def prepare() -> None:
    """Load and validate the rules and the wheel index ahead of time (they are cached); errors are left
    for `diagnose` to raise. Run it in a thread while the probes wait on torch's import."""
    from envdoctor.errors import InputError
    from envdoctor.rules.registry import load_rules
    from envdoctor.wheels.index import load_index

    try:
        load_rules()
        load_index()
    except InputError:
        pass


def diagnose(snapshot: Snapshot, baseline: Optional[Snapshot] = None) -> List[Finding]:
    from envdoctor.rules.engine import evaluate_all
    from envdoctor.rules.registry import load_rules

    findings = evaluate_all(load_rules(), snapshot)
    if baseline is not None:
        from envdoctor.rules.drift import drift_findings

        findings.extend(drift_findings(baseline, snapshot))
    return findings
