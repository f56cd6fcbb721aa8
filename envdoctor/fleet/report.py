"""What `fleet collect` gathered, as nodes to diagnose and as the `envdoctor.fleet/1` document (pure)."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from envdoctor.errors import SnapshotError
from envdoctor.findings import Finding, summary
from envdoctor.fleet.collect import Collected
from envdoctor.fleet.diagnose import Measured
from envdoctor.fleet.matrix import analyse
from envdoctor.fleet.thresholds import FleetThresholds
from envdoctor.snapshot import Snapshot

FLEET_SCHEMA = "envdoctor.fleet/1"


def node_names(hosts: Mapping[int, Optional[str]]) -> Dict[int, str]:
    """Each rank's name: its host name, or `rankR` when the name is unknown or another rank has it too."""
    counts = Counter(h for h in hosts.values() if h)
    return {r: h if h and counts[h] == 1 else f"rank{r}" for r, h in hosts.items()}


def _host(payload: Mapping[str, Any], snapshot_host: Optional[str]) -> Optional[str]:
    if snapshot_host:
        return snapshot_host
    h = payload.get("hostname")
    return h if isinstance(h, str) and h else None


def gathered_nodes(got: Collected) -> Tuple[Dict[int, str], List[Tuple[int, str, Snapshot]], List[str]]:
    """(every rank's name, the (rank, name, snapshot) that arrived intact, problems with the others)."""
    from envdoctor.fleet.nodes import Twins

    snaps: Dict[int, Optional[Snapshot]] = {}
    own_host: Dict[int, Optional[str]] = {}  # the snapshot's host name (a twin's snapshot carries another's)
    problems = []
    twins = Twins()  # a fleet's nodes are copies of one machine: one decode per distinct one
    shared: Dict[int, Tuple[Snapshot, int]] = {}  # a document gathered by groups, shared by twins -> its decoding
    for r, p in sorted(got.payloads.items()):
        doc = p.get("snapshot")
        if r in got.snapshot_hosts and id(doc) in shared:
            snaps[r], got.keys[r] = shared[id(doc)]
            own_host[r] = got.snapshot_hosts[r]
            continue
        try:
            own_host[r], snaps[r], got.keys[r] = twins.decode(doc, f"rank {r}'s snapshot")
        except SnapshotError as exc:
            snaps[r] = None
            problems.append(str(exc))
            continue
        if r in got.snapshot_hosts:  # the shared document's host name is another node's
            own_host[r] = got.snapshot_hosts[r]
            shared[id(doc)] = (snaps[r], got.keys[r])
    hosts = {r: (_host(got.payloads[r], own_host.get(r)) if r in got.payloads else None) for r in range(got.rdzv.nnodes)}
    names = node_names(hosts)
    problems += [f"{names[r]} (rank {r}) sent what rank 0 cannot use: {why}" for r, why in sorted(got.bad.items())]
    nodes = [(r, names[r], s) for r, s in sorted(snaps.items()) if s is not None]
    return names, nodes, problems


def measured(got: Collected, names: Mapping[int, str], thresholds: FleetThresholds) -> Measured:
    m = Measured(missing=[names[r] for r in got.missing], timeout=got.timeout, endpoint=got.rdzv.endpoint,
                 clocks={names[r]: c for r, c in got.clocks.items()},
                 lost={names[r]: names[leader] for r, leader in got.lost.items()},
                 lost_leaders={names[r]: why for r, why in got.lost_leaders.items()})
    if got.rows is not None:
        m.names = [names[r] for r in range(got.rdzv.nnodes)]
        m.matrix = got.rows
        m.verdict = analyse(got.rows, thresholds.slow_ratio)
    return m


def collect_document(got: Collected, names: Mapping[int, str], m: Measured, findings: Sequence[Finding],
                     hostnames: Mapping[int, Optional[str]], node_findings: Sequence[Finding] = ()) -> Dict[str, Any]:
    nodes = []
    for r in range(got.rdzv.nnodes):
        p = got.payloads.get(r, {})
        entry: Dict[str, Any] = {"host": names[r], "file": str(p.get("file") or ""), "rank": r,
                                 "hostname": hostnames.get(r), "arrived": r in got.payloads or r in got.bad}
        if r in got.bad:
            entry["problem"] = got.bad[r]
        if r in got.lost:
            entry["not_collected"] = f"leader lost: {names[got.lost[r]]} (rank {got.lost[r]})"
        if r in got.clocks:
            entry["clock_offset_s"], entry["clock_bound_s"] = got.clocks[r].offset_s, got.clocks[r].bound_s
        nodes.append(entry)
    doc: Dict[str, Any] = {
        "schema": FLEET_SCHEMA,
        "nodes": nodes,
        "collect": {"nnodes": got.rdzv.nnodes, "endpoint": got.rdzv.endpoint, "source": got.rdzv.source,
                    "timeout_s": got.timeout, "gathered_s": round(got.gathered, 3), "seconds": round(got.seconds, 3),
                    "missing": list(m.missing), "gather": "flat" if got.group is None else "hierarchical"},
    }
    if got.group is not None:
        doc["collect"].update(group_size=got.group, not_collected=sorted(m.lost), leaders_lost=sorted(m.lost_leaders))
    if got.backend is not None or got.bandwidth_error:
        bw: Dict[str, Any] = {"backend": got.backend, "message_bytes": got.nbytes, "nodes": list(m.names),
                              "matrix_gbps": m.matrix, "error": got.bandwidth_error}
        if m.verdict is not None:
            bw.update(median_gbps=_r(m.verdict.median_gbps), capacity_gbps=[_r(c) for c in m.verdict.capacity_gbps],
                      slow_nodes=[m.names[i] for i in m.verdict.slow_nodes],
                      slow_links=[[m.names[i], m.names[j]] for i, j in m.verdict.slow_links])
        doc["bandwidth"] = bw
    doc["findings"] = [f.to_json() for f in findings]
    doc["node_findings"] = [f.to_json() for f in node_findings]
    doc["summary"] = summary(list(findings) + list(node_findings))
    return doc


def _r(v: Optional[float]) -> Optional[float]:
    return None if v is None else round(v, 3)


def render_matrix(names: Sequence[str], matrix: Sequence[Sequence[Optional[float]]]) -> str:
    """The matrix as text: rows send, columns receive, GB/s."""
    width = max(8, *(len(n) for n in names))
    head = " " * width + " " + " ".join(f"{n[:width]:>{width}}" for n in names)
    lines = ["bandwidth GB/s (row sends to column)", head]
    for name, row in zip(names, matrix):
        cells = " ".join(f"{'-' if v is None else f'{v:.2f}':>{width}}" for v in row)
        lines.append(f"{name[:width]:<{width}} {cells}")
    return "\n".join(lines) + "\n"
