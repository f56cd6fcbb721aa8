"""The fleet checks beyond the shared-version comparison (rules/drift.py): pure functions over the nodes'
snapshots and what `fleet collect` measured. A node whose fact is unknown is left out of that comparison.
What each check says (id, severity, what, why, fix) is declared in rules/checks/checks.json and passed in
(`checks`, from the Knowledge; the bundled declarations when none is given)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envdoctor.findings import Finding
from envdoctor.fixes import manual
from envdoctor.fleet.thresholds import FleetThresholds
from envdoctor.rules.checks import Check, Checks, bundled_checks
from envdoctor.rules.fleet_listing import NAMES, evidence_lines, majority, names_text, summary_line
from envdoctor.snapshot import Snapshot, known_list, present

if TYPE_CHECKING:  # (the bandwidth matrix is imported where it is measured, not by every `check`)
    from envdoctor.fleet.matrix import MatrixVerdict

Node = Tuple[str, Snapshot]


# The checks this module makes findings for, declared (what, why, fix, severity) in rules/checks/checks.json.
SETTING, WEAKER, MISSING, CLOCK, SLOW_NODE, SLOW_LINK = "ED903", "ED904", "ED905", "ED906", "ED907", "ED908"
NEEDED = (SETTING, WEAKER, MISSING, CLOCK, SLOW_NODE, SLOW_LINK)


def _declared(checks: Optional[Checks], check_id: str) -> Check:
    return (checks or bundled_checks()).check(check_id)


def _finding(rule: Check, title: str, detail: str, subjects: Sequence[str], fix: str = "",
             severity: Optional[str] = None, evidence: Sequence[str] = ()) -> Finding:
    return Finding(id=rule.id, severity=severity or rule.severity, category=rule.category, title=title,
                   detail=detail, remedy=manual((fix or rule.fix) + "."), subjects=sorted(subjects),
                   evidence=list(evidence))


def _odd_out(rule: Check, what: str, values: Mapping[str, str], fix: str = "") -> Optional[Finding]:
    if len(set(values.values())) < 2:
        return None
    common, tie = majority(values)
    detail, lines = f"Values: {summary_line(values)}.", evidence_lines(values)
    if tie:
        return _finding(rule, f"{what} differs across nodes", detail, list(values), fix, evidence=lines)
    odd = sorted(n for n, v in values.items() if v != common)
    return _finding(rule, f"{what} differs on {names_text(odd)} (others: {common})", detail, odd, fix,
                    evidence=lines)


def nccl_setting_findings(nodes: Sequence[Node], checks: Optional[Checks] = None) -> List[Finding]:
    """One finding per NCCL_* variable whose value differs between nodes (unset counts as a value)."""
    envs = {name: s.env for name, s in nodes if present(s.env)}
    if len(envs) < 2:
        return []
    names = sorted({k for env in envs.values() for k in env if k.startswith("NCCL_")})
    out = []
    for var in names:
        values = {n: (f"{var}={env[var]}" if var in env else "unset") for n, env in envs.items()}
        f = _odd_out(_declared(checks, SETTING), var, values, f"Set {var} alike on every node (the job script or the image ENV)")
        if f is not None:
            out.append(f)
    return out


def fabric_manager_findings(nodes: Sequence[Node], checks: Optional[Checks] = None) -> List[Finding]:
    """NVSwitch nodes whose Fabric Manager version or state differs (others have no Fabric Manager to compare)."""
    fms = {n: s.fabric_manager for n, s in nodes
           if present(s.fabric_manager) and s.fabric_manager.nvswitch_present is True}
    out = []
    for what, read in (("Fabric Manager version", lambda fm: fm.version),
                       ("Fabric Manager running", lambda fm: fm.running)):
        values = {n: str(read(fm)) for n, fm in fms.items() if present(read(fm))}
        if len(values) >= 2:
            f = _odd_out(_declared(checks, SETTING), what, values, "Install and start the Fabric Manager that matches "
                         "each node's driver (`systemctl status nvidia-fabricmanager`)")
            if f is not None:
                out.append(f)
    return out


def _gpu_count(s: Snapshot) -> Optional[float]:
    probe = s.probe("nvml")
    if not isinstance(s.gpus, list):  # the GPU list itself unknown (gpus: null)
        return None
    if s.gpus or (probe is not None and probe.status == "ok"):
        return float(len(s.gpus))
    return None


def _pcie_lanes(s: Snapshot) -> Optional[float]:
    """The slowest GPU link: generation x width (a Gen4 x16 link counts 64, a Gen4 x8 one 32)."""
    links = [g.pcie.gen * g.pcie.width for g in known_list(s.gpus)
             if present(g.pcie) and present(g.pcie.gen) and present(g.pcie.width)]
    return float(min(links)) if links else None


def _nics(s: Snapshot) -> List:
    if not present(s.network) or not present(s.network.interfaces):
        return []
    return [i for i in s.network.interfaces if i.kind in ("ethernet", "infiniband") and i.up is True]


def _nic_count(s: Snapshot) -> Optional[float]:
    return float(len(_nics(s))) if present(s.network) and present(s.network.interfaces) else None


def _nic_speed(s: Snapshot) -> Optional[float]:
    speeds = [i.speed_mbps for i in _nics(s) if present(i.speed_mbps) and i.speed_mbps > 0]
    return float(max(speeds)) if speeds else None


def _rdma_active(s: Snapshot) -> Optional[float]:
    if not present(s.network) or not present(s.network.rdma_devices):
        return None
    return float(sum(1 for d in s.network.rdma_devices if "ACTIVE" in str(d.state).upper()))


# (what a lower value means, read, how a value reads)
CAPACITIES: Tuple[Tuple[str, Callable[[Snapshot], Optional[float]], Callable[[float], str]], ...] = (
    ("fewer GPUs", _gpu_count, lambda v: f"{v:g} GPU(s)"),
    ("a slower GPU PCIe link", _pcie_lanes, lambda v: f"PCIe gen x width {v:g}"),
    ("fewer network interfaces up", _nic_count, lambda v: f"{v:g} up"),
    ("slower network interfaces", _nic_speed, lambda v: f"fastest {v / 1000:g} Gb/s"),
    ("fewer active RDMA devices", _rdma_active, lambda v: f"{v:g} active"),
)


def capacity_findings(nodes: Sequence[Node], checks: Optional[Checks] = None) -> List[Finding]:
    """A node below the fleet's median in a capacity (GPU count, GPU link, NICs up, NIC speed, RDMA ports)."""
    out = []
    for what, read, show in CAPACITIES:
        values: Dict[str, float] = {}
        for name, s in nodes:
            v = read(s)
            if v is not None:
                values[name] = v
        if len(values) < 2:
            continue
        from statistics import median

        mid = median(values.values())
        low = sorted(n for n, v in values.items() if v < mid)
        if not low:
            continue
        shown = {n: show(v) for n, v in values.items()}
        out.append(_finding(_declared(checks, WEAKER), f"{what} on {names_text(low)} (others: {show(mid)})",
                            f"Per node: {summary_line(shown)}.", low, evidence=evidence_lines(shown)))
    return out


def missing_findings(missing: Sequence[str], timeout: float, endpoint: str,
                     checks: Optional[Checks] = None) -> List[Finding]:
    if not missing:
        return []
    named = names_text(missing)
    return [_finding(_declared(checks, MISSING), f"{named} never arrived (waited {timeout:g} s)",
                     f"Rank 0 waited {timeout:g} s at {endpoint} for every node's snapshot; "
                     f"{named} did not send one. The checks below compare the nodes that arrived.",
                     missing, evidence=[f"never arrived: {', '.join(missing)}"])]


def lost_leader_findings(leaders: Mapping[str, str], lost: Mapping[str, str],
                         checks: Optional[Checks] = None) -> List[Finding]:
    """Group leaders whose group document never came or could not be used (`leaders`: leader -> why), and the
    nodes of their groups that could not be read directly (`lost`: node -> leader): an error when a node is
    not collected, else a warning (every member was read from the store directly)."""
    if not leaders:
        return []
    named = names_text(sorted(leaders))
    evidence = [f"{n}: {why}" for n, why in sorted(leaders.items())]
    if lost:
        title = f"{names_text(sorted(lost))} not collected: group leader lost ({named})"
        detail = (f"{len(lost)} node(s) are not collected (leader lost): their group's leader {named} gathered their "
                  "snapshots and its group document never reached rank 0 in a usable form. Whether they arrived is "
                  "unknown; the other groups are compared below.")
    else:
        title = f"group leader {named} lost; its group's nodes were read directly"
        detail = f"The group document of {named} never reached rank 0 in a usable form; every node it led was read directly."
    evidence += [f"not collected: {', '.join(sorted(lost))}"] if lost else []
    return [_finding(_declared(checks, MISSING), title, detail, sorted(set(leaders) | set(lost)),
                     severity="error" if lost else "warning", evidence=evidence)]


@dataclass(frozen=True)
class ClockReading:
    offset_s: float  # the node's clock minus rank 0's, at the midpoint of the best round trip
    bound_s: float  # half that round trip: the true offset is within offset_s +- bound_s


def clock_findings(readings: Mapping[str, ClockReading], thresholds: FleetThresholds,
                   checks: Optional[Checks] = None) -> List[Finding]:
    limit = thresholds.clock_skew_s
    skewed = {n: r for n, r in readings.items() if abs(r.offset_s) - r.bound_s > limit}
    if not skewed:
        return []
    lines = [f"{n}: {r.offset_s:+.3f} s (+-{r.bound_s:.3f})" for n, r in sorted(skewed.items())]
    shown = "; ".join(lines[:NAMES]) + (f"; and {len(lines) - NAMES} more" if len(lines) > NAMES else "")
    return [_finding(_declared(checks, CLOCK),
                     f"clock of {names_text(sorted(skewed))} is off by more than {limit:g} s from rank 0's",
                     f"Measured against rank 0's clock: {shown}.", list(skewed), evidence=lines)]


def bandwidth_findings(names: Sequence[str], matrix: Sequence[Sequence[Optional[float]]], verdict: MatrixVerdict,
                       thresholds: FleetThresholds, checks: Optional[Checks] = None) -> List[Finding]:
    out = []
    mid = verdict.median_gbps
    if mid is None:
        return out
    pct = f"{thresholds.slow_ratio:.0%}"
    for i in verdict.slow_nodes:
        cap = verdict.capacity_gbps[i]
        out.append(_finding(_declared(checks, SLOW_NODE), f"{names[i]} is slow: at best {cap:.2f} GB/s to or from any node "
                                       f"(fleet median {mid:.2f} GB/s)",
                            f"Below {pct} of the median of the nodes' best transfers; its row and column of the "
                            f"bandwidth matrix are all low.", [names[i]]))
    for i, j in verdict.slow_links:
        out.append(_finding(_declared(checks, SLOW_LINK), f"link {names[i]} -> {names[j]} is slow: {matrix[i][j]:.2f} GB/s",
                            f"Below {pct} of what is typical for its two ends with the other nodes; neither end "
                            "is slow itself.", [names[i], names[j]]))
    return out
