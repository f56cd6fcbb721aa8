"""The fleet diagnosis: every check over the nodes' snapshots and, from `fleet collect`, what it measured (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Mapping, Optional, Sequence

from envdoctor.findings import Finding, sort_findings
from envdoctor.fleet import checks
from envdoctor.fleet.matrix import MatrixVerdict
from envdoctor.fleet.thresholds import FleetThresholds
from envdoctor.rules.checks import Checks
from envdoctor.rules.drift import fleet_findings


@dataclass
class Measured:
    """What `fleet collect` adds to the snapshots: who never came, the clocks, the bandwidth matrix."""

    missing: List[str] = field(default_factory=list)
    timeout: float = 0.0
    endpoint: str = ""
    clocks: Mapping[str, checks.ClockReading] = field(default_factory=dict)
    lost: Mapping[str, str] = field(default_factory=dict)  # node not collected -> its group's leader, lost
    lost_leaders: Mapping[str, str] = field(default_factory=dict)  # leader -> what became of its group's document
    names: List[str] = field(default_factory=list)  # the matrix's rows and columns
    matrix: Optional[List[List[Optional[float]]]] = None
    verdict: Optional[MatrixVerdict] = None


def fleet_diagnosis(nodes: Sequence[checks.Node], thresholds: FleetThresholds,
                    measured: Optional[Measured] = None, declared: Optional[Checks] = None) -> List[Finding]:
    """Every fleet finding; `thresholds` and `declared` (what each check says) come from the Knowledge
    (`declared` defaults to the bundled declarations)."""
    out: List[Finding] = []
    if len(nodes) >= 2:
        out += fleet_findings(nodes, declared)
        out += checks.nccl_setting_findings(nodes, declared)
        out += checks.fabric_manager_findings(nodes, declared)
        out += checks.capacity_findings(nodes, declared)
    if measured is not None:
        out += checks.missing_findings(measured.missing, measured.timeout, measured.endpoint, declared)
        out += checks.lost_leader_findings(measured.lost_leaders, measured.lost, declared)
        out += checks.clock_findings(measured.clocks, thresholds, declared)
        if measured.matrix is not None and measured.verdict is not None:
            out += checks.bandwidth_findings(measured.names, measured.matrix, measured.verdict, thresholds, declared)
    return sort_findings(out)
