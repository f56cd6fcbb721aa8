"""Reading a fleet's snapshot files, fast at thousands of nodes: the nodes of one cluster are copies of one
machine but for their identities, so each document is keyed by what remains once those are set aside, and a
node whose key was seen shares that node's decoded snapshot and its `check` findings.

The identities set aside (replaced by a placeholder) are facts no rule and no fleet check reads: the host
name (the node's name), each GPU's UUID, each interface's addresses, each probe's duration, and the time of
day the snapshot was taken (its date stays: the wheel-index rules read it). A node whose identities are not of
their schema's type is decoded on its own, so an invalid snapshot is refused as before.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from envdoctor.data_files import too_deep
from envdoctor.snapshot import Snapshot, read_snapshot_json, snapshot_from_json


@dataclass(frozen=True)
class NodeFile:
    """One node's snapshot file: the file, its host name (None when unknown), the decoded snapshot (shared
    with the nodes of the same key: read no identity from it) and the key (the first such node's number)."""

    file: str
    hostname: Optional[str]
    snapshot: Snapshot
    key: int


def _opt_str(v: Any) -> bool:
    return v is None or isinstance(v, str)


def _identities(doc: Dict[str, Any]) -> Optional[List[Tuple[Dict[str, Any], str, Any]]]:
    """Take the identities out of `doc` (in place): (where, key, value) to put back, or None (nothing taken)
    when one is not of its type."""
    taken: List[Tuple[Dict[str, Any], str, Any]] = []

    def take(where: Any, key: str, ok: Any) -> bool:
        if not isinstance(where, dict) or key not in where:
            return True
        if not ok(where[key]):
            return False
        taken.append((where, key, where[key]))
        where[key] = 0  # kept, so that a fact given and a fact left out still read apart
        return True

    created = doc.get("created")
    host = doc.get("host")
    ok = take(host, "hostname", _opt_str)
    ok = ok and isinstance(created, str) and len(created) >= 10
    for g in doc.get("gpus") or () if isinstance(doc.get("gpus"), list) else ():
        ok = ok and take(g, "uuid", _opt_str)
    net = doc.get("network")
    ifaces = net.get("interfaces") if isinstance(net, dict) else None
    for i in ifaces if isinstance(ifaces, list) else ():
        ok = ok and take(i, "addresses", lambda v: v is None or (isinstance(v, list) and all(isinstance(a, str) for a in v)))
    for p in doc.get("probes") or () if isinstance(doc.get("probes"), list) else ():
        ok = ok and take(p, "seconds", lambda v: v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)))
    if ok:
        taken.append((doc, "created", created))
        doc["created"] = created[:10]
        return taken
    _put_back(doc, taken)
    return None


def _put_back(doc: Dict[str, Any], taken: Sequence[Tuple[Dict[str, Any], str, Any]]) -> None:
    for where, key, value in reversed(taken):
        where[key] = value


BUCKET = 8  # the most distinct documents compared against per bucket: a fleet of all-different nodes stays linear


def _bucket(doc: Dict[str, Any]) -> str:
    host = doc.get("host")
    host = host if isinstance(host, dict) else {}
    return repr((doc.get("driver"), host.get("kernel"), host.get("memory_bytes"), host.get("shm_bytes"),
                 len(doc.get("gpus") or ()) if isinstance(doc.get("gpus"), list) else None))


class Twins:
    """Decodes documents one by one; a document equal to an earlier one but for its identities gets that one's
    snapshot and key (dict equality: no serialising)."""

    def __init__(self) -> None:
        self._buckets: Dict[str, List[Tuple[Optional[Dict[str, Any]], Snapshot, int]]] = {}
        self._n = 0

    def decode(self, doc: Any, source: str) -> Tuple[Optional[str], Snapshot, int]:
        """(host name or None, snapshot, key); SnapshotError naming `source` as snapshot_from_json does."""
        n, self._n = self._n, self._n + 1
        hostname = None
        if isinstance(doc, dict) and isinstance(doc.get("host"), dict):
            h = doc["host"].get("hostname")
            hostname = h if isinstance(h, str) and h else None
        taken = _identities(doc) if isinstance(doc, dict) and not too_deep(doc) else None  # deep: decoded alone
        if taken is None:
            return hostname, snapshot_from_json(doc, source), n
        reps = self._buckets.setdefault(_bucket(doc), [])
        hit = next((r for r in reps if r[0] == doc), None)
        if hit is None:
            normalised = copy.deepcopy(doc) if len(reps) < BUCKET else None
            _put_back(doc, taken)
            hit = (normalised, snapshot_from_json(doc, source), n)
            if normalised is not None:
                reps.append(hit)
        else:
            _put_back(doc, taken)
        return hostname, hit[1], hit[2]


def load_nodes(paths: Sequence[str]) -> List[NodeFile]:
    """Every file's snapshot; SnapshotError naming the first file that cannot be read."""
    twins = Twins()
    out: List[NodeFile] = []
    for path in paths:
        hostname, snap, key = twins.decode(read_snapshot_json(path), str(path))
        out.append(NodeFile(path, hostname, snap, key))
    return out


def snapshot_host(doc: Any) -> Optional[str]:
    """A snapshot document's host name as `Twins.decode` reads it: a non-empty string, else None."""
    host = doc.get("host") if isinstance(doc, dict) else None
    h = host.get("hostname") if isinstance(host, dict) else None
    return h if isinstance(h, str) and h else None


class Bodies:
    """Documents kept once per machine (a group leader's, and rank 0's across groups): `add` gives the index of
    an earlier document equal to this one but for its identities, with this one's identities in `_identities`'
    order; or keeps this one (its identities None: it is its own body). Any JSON value can be a body."""

    def __init__(self) -> None:
        self.docs: List[Any] = []
        self._buckets: Dict[str, List[Tuple[Dict[str, Any], int]]] = {}

    def add(self, doc: Any) -> Tuple[int, Optional[List[Any]]]:
        taken = _identities(doc) if isinstance(doc, dict) and not too_deep(doc) else None
        if taken is None:
            self.docs.append(doc)
            return len(self.docs) - 1, None
        reps = self._buckets.setdefault(_bucket(doc), [])
        hit = next((i for rep, i in reps if rep == doc), None)
        if hit is not None:
            _put_back(doc, taken)
            return hit, [v for _, _, v in taken]
        normalised = copy.deepcopy(doc) if len(reps) < BUCKET else None
        _put_back(doc, taken)
        self.docs.append(doc)
        if normalised is not None:
            reps.append((normalised, len(self.docs) - 1))
        return len(self.docs) - 1, None


def with_identities(body: Any, values: Optional[Sequence[Any]]) -> Any:
    """A node's own document from its body and the identities `Bodies.add` gave (a copy); ValueError when the
    identities do not fit the body."""
    if values is None:
        return body
    doc = copy.deepcopy(body)
    taken = _identities(doc) if isinstance(doc, dict) else None
    if taken is None or len(taken) != len(values):
        raise ValueError("its identities do not fit its body")
    for (where, key, _), value in zip(taken, values):
        where[key] = value
    return doc
