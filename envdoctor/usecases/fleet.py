"""Fleet: compare the nodes of one cluster and name the odd one out, from snapshot files or from what
`fleet collect` gathered over torch.distributed's store; open a saved report. Every result's `to_json()` is the
`envdoctor.fleet/1` document."""

from __future__ import annotations

import json
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envdoctor.bounded_read import read_text
from envdoctor.errors import InputError
from envdoctor.findings import Finding, exit_code, sort_findings, summary
from envdoctor.fixes import manual
from envdoctor.fleet.gather import AUTO_GROUPS_FROM as AUTO_GROUPS_FROM
from envdoctor.fleet.gather import DEFAULT_GROUP as DEFAULT_GROUP
from envdoctor.fleet.gather import GATHER_MODES as GATHER_MODES
from envdoctor.fleet.gather import Gather
from envdoctor.snapshot import present

if TYPE_CHECKING:
    from envdoctor.fleet.collect import Collected
    from envdoctor.fleet.diagnose import Measured
    from envdoctor.fleet.endpoint import Rendezvous
    from envdoctor.knowledge import Knowledge
    from envdoctor.snapshot import Snapshot

FLEET_SCHEMA = "envdoctor.fleet/1"


@dataclass(frozen=True)
class FleetComparison:
    """Snapshot files compared: each node's (name, file), the findings of the comparison and each node's own
    findings (`check`'s, grouped by finding, naming its nodes), each most severe first. The exit code is
    `check`'s over both: an error on any node is 1."""

    nodes: List[Tuple[str, str]]
    findings: List[Finding]
    node_findings: List[Finding] = field(default_factory=list)

    def exit_code(self, strict: bool = False) -> int:
        return exit_code(self.findings + self.node_findings, strict=strict)

    def to_json(self) -> Dict[str, Any]:
        return {"schema": FLEET_SCHEMA, "nodes": [{"host": n, "file": p} for n, p in self.nodes],
                "findings": [f.to_json() for f in self.findings],
                "node_findings": [f.to_json() for f in self.node_findings],
                "summary": summary(self.findings + self.node_findings)}


def compare_snapshots(snapshots: Sequence[Tuple[str, Snapshot]], knowledge: Knowledge) -> FleetComparison:
    """Compare (file, snapshot) pairs with the knowledge's fleet checks and thresholds, and report each node's
    own findings (what `check` finds on it) grouped by finding: each node is named by its host name, or by its
    file where the host name is unknown or two snapshots share one."""
    return _compare([(str(s.host.hostname) if present(s.host.hostname) and s.host.hostname else None, p, s, p)
                     for p, s in snapshots], knowledge)


def compare_snapshot_files(paths: Sequence[str], knowledge: Knowledge) -> FleetComparison:
    """`compare_snapshots` of snapshot files, read as a fleet: nodes that differ only in their identities share
    one decoded snapshot and one `check` (envdoctor/fleet/nodes.py). SnapshotError naming a bad file."""
    from envdoctor.fleet.nodes import load_nodes

    return _compare([(n.hostname, n.file, n.snapshot, n.key) for n in load_nodes(paths)], knowledge)


def _compare(entries: Sequence[Tuple[Optional[str], str, Snapshot, Any]], knowledge: Knowledge) -> FleetComparison:
    """entries: (host name or None, file, snapshot, key); nodes of one key have the same own findings."""
    from envdoctor.fleet.diagnose import fleet_diagnosis

    names = [h or p for h, p, _, _ in entries]
    if len(set(names)) != len(names):
        names = [p for _, p, _, _ in entries]
    findings = fleet_diagnosis([(n, e[2]) for n, e in zip(names, entries)], knowledge.fleet, declared=knowledge.checks)
    per_node = _own_findings([(n, e[2], e[3]) for n, e in zip(names, entries)], knowledge)
    return FleetComparison([(n, e[1]) for n, e in zip(names, entries)], findings, per_node)


@dataclass(frozen=True)
class FleetCollection:
    """What rank 0 of `fleet collect` gathered and measured, and the findings, most severe first."""

    collected: Collected
    names: Mapping[int, str]
    measured: Measured
    findings: List[Finding]
    node_findings: List[Finding] = field(default_factory=list)

    def exit_code(self, strict: bool = False) -> int:
        return exit_code(self.findings + self.node_findings, strict=strict)

    def to_json(self) -> Dict[str, Any]:
        from envdoctor.fleet.report import collect_document

        hostnames = {r: p.get("hostname") if isinstance(p.get("hostname"), str) else None
                     for r, p in self.collected.payloads.items()}
        return collect_document(self.collected, self.names, self.measured, self.findings, hostnames, self.node_findings)


def bad_snapshot(problem: str) -> Finding:
    """A node's snapshot that arrived but cannot be read."""
    return Finding(id="ED905", severity="error", category="fleet_node_missing", title="a node sent an unusable snapshot",
                   detail=problem, remedy=manual("Rerun `envdoctor snapshot` on that node and check its envdoctor version."))


def diagnose_collected(got: Collected, knowledge: Knowledge) -> FleetCollection:
    """The fleet diagnosis of what `fleet collect` gathered: the snapshots, who never came, the clocks, the
    bandwidth matrix; an unreadable snapshot is a finding of its own."""
    from envdoctor.fleet import report
    from envdoctor.fleet.diagnose import fleet_diagnosis

    names, nodes, problems = report.gathered_nodes(got)
    m = report.measured(got, names, knowledge.fleet)
    findings = fleet_diagnosis([(n, s) for _, n, s in nodes], knowledge.fleet, m, declared=knowledge.checks)
    own = _own_findings([(n, s, got.keys.get(r, ("rank", r))) for r, n, s in nodes], knowledge)
    return FleetCollection(got, names, m, sort_findings(findings + [bad_snapshot(p) for p in problems]), own)


def _own_findings(nodes: Sequence[Tuple[str, Snapshot, Any]], knowledge: Knowledge) -> List[Finding]:
    """Each node's own findings (`check`'s) grouped by finding; nodes of one key share one check."""
    from envdoctor.fleet.node_findings import grouped
    from envdoctor.usecases.check import check

    own: Dict[Any, List[Finding]] = {}
    for _, snap, key in nodes:
        if key not in own:
            own[key] = check(snap, knowledge).findings
    return sort_findings(grouped([(n, own[key]) for n, _, key in nodes]))


def rendezvous(nnodes: Optional[int], node_rank: Optional[int], endpoint: Optional[str],
               environ: Mapping[str, str]) -> Rendezvous:
    """Where and as which rank this node meets the others (the flags, else the launcher's environment)."""
    from envdoctor.fleet.endpoint import resolve_rendezvous

    return resolve_rendezvous(nnodes, node_rank, endpoint, environ)


def message_size(text: str) -> int:
    """`--bandwidth-size` in bytes; InputError naming the flag."""
    from envdoctor.selftest.bandwidth import parse_size

    try:
        return parse_size(text)
    except ValueError as exc:
        raise InputError(f"--bandwidth-size: {exc}") from None


MAX_GROUP = 1024  # a leader's document inflates to at most this many members' worth, a bound rank 0 can hold


def gather_plan(mode: Optional[str], group_size: Optional[int]) -> Gather:
    """`--gather` and `--group-size` as a plan; InputError when the group size is not one."""
    if group_size is not None and not 2 <= group_size <= MAX_GROUP:
        raise InputError(f"--group-size must be from 2 to {MAX_GROUP}, not {group_size}")
    return Gather(mode or "auto", DEFAULT_GROUP if group_size is None else group_size)


def collect_fleet(rdzv: Rendezvous, this_node: Callable[[], Tuple[Snapshot, str]], timeout: float,
                  bandwidth_bytes: Optional[int], knowledge: Knowledge, progress: Callable[[str], None],
                  decide: Callable[[FleetCollection], int], gather: Optional[Gather] = None) -> int:
    """This node's part of `fleet collect`: send `this_node()` (its snapshot and file name) to rank 0; rank 0
    diagnoses what it gathered and returns `decide(result)`, the exit code every node ends with. `gather`: how
    the snapshots reach rank 0 (default: flat below AUTO_GROUPS_FROM nodes, by groups above). InputError when
    this node cannot take part."""
    from envdoctor.fleet import collect

    plan = collect.BandwidthPlan(nbytes=bandwidth_bytes, iters=5) if bandwidth_bytes is not None else None

    def payload() -> Dict[str, Any]:
        snap, file = this_node()
        return {"hostname": socket.gethostname(), "file": file, "snapshot": snap.to_json()}

    try:
        return collect.run(rdzv, payload, timeout, plan, lambda got: decide(diagnose_collected(got, knowledge)), progress,
                           gather or Gather())
    except collect.CollectError as exc:
        raise InputError(f"fleet collect (rank {rdzv.rank}): {exc}") from None


@dataclass(frozen=True)
class FleetReport:
    """A saved fleet report (`fleet collect -o FILE`, `fleet --json`)."""

    document: Dict[str, Any]

    def to_json(self) -> Dict[str, Any]:
        return self.document


def open_report(path: str) -> FleetReport:
    """The fleet report in `path`; InputError saying what is wrong with the file."""
    try:
        doc = json.loads(read_text(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    except ValueError as exc:
        raise InputError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != FLEET_SCHEMA or not isinstance(doc.get("nodes"), list):
        raise InputError(f"{path}: not an {FLEET_SCHEMA} report (`envdoctor fleet collect -o FILE` writes one)")
    return FleetReport(doc)
