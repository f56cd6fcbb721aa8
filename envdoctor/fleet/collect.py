"""`fleet collect`'s exchange over torch.distributed's c10d TCPStore (the store torchrun's rendezvous uses).

Every node connects to the store at the rendezvous endpoint (rank 0 hosts it; under torchrun its agent
does), posts `node/R` (its host name and snapshot) and then answers rank 0. Rank 0:

1. waits for every node's snapshot until --timeout; the ones that never came are named, not waited for;
2. posts `plan` (who did not arrive, whether to measure bandwidth and over which backend);
3. measures every node's clock against its own at once: rank 0 posts its clock (`clock/now`) every TICK
   seconds, each node reads it three times between two readings of its own clock and posts them
   (`clock/R`); the best bound is kept (the value's age, which rank 0 measures, widens the bound);
4. with --bandwidth and every node present: a gloo (or NCCL, when every node has GPUs) process group and the
   pairwise matrix (measure.py);
5. decides (the caller's diagnosis) and posts `verdict`, the exit code every node then exits with; it keeps
   the store up until each node has read it (bounded).

Every wait is bounded; a node whose rank 0 died sees the store's connection fail and exits 2.

Rank 0 posts `layout` first: how the snapshots reach it. Flat: every node posts `node/R` and rank 0 reads N of
them. By groups (from AUTO_GROUPS_FROM nodes, or when asked): node R belongs to group R // G; it posts
`g/K/node/R`; the group's first rank (its leader) reads them, keeps each distinct machine's document once
(fleet/nodes.py `Bodies`: one body, then per member its identities), posts one compressed `group/K` and
deletes what it read; rank 0 reads group 0 itself and one document per other group. When rank 0's --timeout
is up it posts `cutoff`: a leader still waiting posts what it has, and rank 0 waits GROUP_GRACE more. A group
whose document never comes, or cannot be used, is read member by member where the members' keys are still
there; the others are reported not collected, their leader lost.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envdoctor.errors import InputError
from envdoctor.fleet.checks import ClockReading
from envdoctor.fleet.endpoint import Rendezvous, check_endpoint
from envdoctor.fleet.gather import Gather
from envdoctor.fleet.measure import matrix_from_rows, measure_row
from envdoctor.fleet.nodes import Bodies, snapshot_host

PREFIX = "envdoctor.fleet/1"
PINGS = 3
PING_TIMEOUT = 5.0  # the clock phase lasts at most this, and a little more per node on a big fleet
TICK = 0.01  # how often rank 0 posts its clock during the clock phase
DONE_TIMEOUT = 10.0
GROUP_GRACE = 5.0  # seconds rank 0 waits past its --timeout for the leaders' last documents
GROUP_NODE_BYTES = 4 * 1024 * 1024  # the most a group document may inflate to, per member
LEADER_POLL = 0.25  # seconds between a leader's two store round trips while it waits: N / G leaders poll
# Test hook at the clock boundary: seconds added to this node's wall clock.
CLOCK_ENV = "ENVDOCTOR_TEST_FLEET_CLOCK_OFFSET_S"

Progress = Callable[[str], None]


class CollectError(Exception):
    """This node could not take part (no torch, rank 0 unreachable or gone): exit 2 with this message."""


@dataclass(frozen=True)
class BandwidthPlan:
    nbytes: int
    iters: int


@dataclass
class Collected:
    """What rank 0 gathered."""

    rdzv: Rendezvous
    timeout: float
    payloads: Dict[int, Dict[str, Any]]
    missing: List[int]
    bad: Dict[int, str] = field(default_factory=dict)  # rank -> why what it sent cannot be used
    keys: Dict[int, int] = field(default_factory=dict)  # rank -> its twins' key (fleet/nodes.py), once decoded
    clocks: Dict[int, ClockReading] = field(default_factory=dict)
    backend: Optional[str] = None
    nbytes: int = 0
    rows: Optional[List[List[Optional[float]]]] = None
    bandwidth_error: Optional[str] = None
    gathered: float = 0.0  # seconds from rank 0's start until the last node arrived (or the timeout)
    read_s: float = 0.0  # of which reading every node's message once they were all in
    seconds: float = 0.0
    group: Optional[int] = None  # the group size, when gathered by groups
    # rank -> its snapshot's own host name, where its snapshot document is shared with its twins (by groups)
    snapshot_hosts: Dict[int, Optional[str]] = field(default_factory=dict)
    lost: Dict[int, int] = field(default_factory=dict)  # rank not collected -> the leader whose group was lost
    lost_leaders: Dict[int, str] = field(default_factory=dict)  # leader rank -> what became of its group


def _wall_clock() -> float:
    try:
        return time.time() + float(os.environ.get(CLOCK_ENV, "0") or 0)
    except ValueError:
        return time.time()


def _torch() -> Any:
    try:
        import torch
        import torch.distributed as dist
    except Exception as exc:  # not installed, or broken: either way this node cannot take part
        raise InputError(f"fleet collect needs torch (torch.distributed) in {sys.executable}: "
                         f"{type(exc).__name__}: {exc}") from None
    if not dist.is_available():
        raise InputError("fleet collect needs torch.distributed; this torch build has none")
    return torch, dist


def _td(seconds: float) -> datetime.timedelta:
    return datetime.timedelta(seconds=max(0.1, seconds))


def connect(rdzv: Rendezvous, timeout: float, progress: Progress) -> Any:
    """The store, as its host (rank 0, outside torchrun) or a client; CollectError when unreachable in time."""
    _, dist = _torch()
    host_it = rdzv.rank == 0 and not rdzv.agent_store
    if not host_it:
        check = check_endpoint(rdzv.host, rdzv.port, connect_timeout=None)
        if check.resolve_error:
            raise CollectError(f"the rendezvous host {rdzv.host!r} does not resolve on this node "
                               f"({check.resolve_error}); use an IP address or fix DNS / /etc/hosts")
    progress(f"{'hosting' if host_it else 'connecting to'} the store at {rdzv.endpoint}")
    try:
        store = dist.TCPStore(rdzv.host, rdzv.port, world_size=None, is_master=host_it, timeout=_td(timeout),
                              wait_for_workers=False)
    except Exception as exc:
        how = "could not listen on" if host_it else f"could not reach rank 0 within {timeout:g} s at"
        raise CollectError(f"{how} {rdzv.endpoint}: {_one_line(exc)}") from None
    return dist.PrefixStore(PREFIX, store)


def _one_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0][:300] if lines else ''}"


def _get_json(store: Any, key: str) -> Any:
    return json.loads(store.get(key).decode("utf-8"))


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def peer_payload(raw: bytes) -> Dict[str, Any]:
    """A node's `node/R` message: a JSON object (its host name a string or null); ValueError saying why not.
    A peer's bytes are never trusted: bad JSON, another type, a 5,000-digit number are its problem, not rank 0's."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ValueError(f"not JSON ({type(exc).__name__}: {str(exc)[:120]})") from None
    return _payload_fields(value)


def _payload_fields(value: Any) -> Dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    if not (value.get("hostname") is None or isinstance(value.get("hostname"), str)):
        raise ValueError("its host name is not a string")
    if not isinstance(value.get("file", ""), str):
        raise ValueError("its file name is not a string")
    return value


def peer_clock(raw: bytes) -> float:
    """A clock value: a finite number of seconds; ValueError otherwise (`abc`, `nan`, `inf`)."""
    text = raw.decode("utf-8", "replace").strip()
    if len(text) > 64:
        raise ValueError("clock answer too long")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"clock answer {text!r} is not finite")
    return value


def peer_readings(raw: bytes, age: float) -> ClockReading:
    """A node's `clock/R`: up to PINGS readings [before, rank 0's clock read, after] of its own clock, as the
    best ClockReading (rank 0's value was at most `age` seconds old when read); ValueError when it is not one."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValueError("its clock readings are not JSON") from None
    if not isinstance(value, list) or not 0 < len(value) <= PINGS:
        raise ValueError("its clock readings are not a list of up to three readings")
    best: Optional[ClockReading] = None
    for reading in value:
        if not (isinstance(reading, list) and len(reading) == 3 and all(_finite(v) for v in reading)):
            raise ValueError(f"its clock answer is not a number of seconds ({str(reading)[:60]})")
        t0, theirs, t1 = (float(v) for v in reading)
        if t1 < t0:
            raise ValueError("its clock readings run backwards")
        # rank 0 stamped the value it read at a moment in [t0 - age, t1] of the node's clock
        r = ClockReading(offset_s=round((t0 - age + t1) / 2 - theirs, 4), bound_s=round((t1 - t0 + age) / 2, 4))
        if best is None or r.bound_s < best.bound_s:
            best = r
    assert best is not None
    return best


def peer_row(raw: Any, nnodes: int) -> Optional[List[Optional[float]]]:
    """A node's bandwidth row: `nnodes` entries, each a finite number >= 0 or null; None when it is not one."""
    if not isinstance(raw, list) or len(raw) != nnodes:
        return None
    if not all(v is None or (_finite(v) and v >= 0) for v in raw):
        return None
    return [None if v is None else float(v) for v in raw]


def group_document(group: int, raws: Mapping[int, bytes]) -> bytes:
    """A leader's `group/K`: its members' messages (rank -> the bytes it posted), each distinct machine's
    snapshot once and per member its identities, compressed. A member whose message is not one is listed
    under `bad` with why; the others are kept."""
    bodies = Bodies()
    members: List[Dict[str, Any]] = []
    bad: List[List[Any]] = []
    for r, raw in sorted(raws.items()):
        try:
            meta = dict(peer_payload(raw))
        except ValueError as exc:
            bad.append([r, str(exc)])
            continue
        snap = meta.pop("snapshot", None)
        host = snapshot_host(snap)
        body, ids = bodies.add(snap)
        member: Dict[str, Any] = {"rank": r, "body": body, "host": host, "meta": meta}
        if ids is not None:
            member["ids"] = ids
        members.append(member)
    doc = {"group": group, "bodies": bodies.docs, "members": members, "bad": bad}
    return zlib.compress(json.dumps(doc, separators=(",", ":")).encode("utf-8"), 6)


@dataclass
class GroupMember:
    rank: int
    payload: Dict[str, Any]  # the node's message, its snapshot the group's body (shared with its twins)
    host: Optional[str]  # its snapshot's own host name


def read_group_document(raw: bytes, group: int, ranks: Sequence[int]) -> Tuple[List[GroupMember], Dict[int, str]]:
    """A leader's `group/K` for the group of `ranks`: (its members, rank -> why that member's message was
    unusable); ValueError when the document is not one (a leader's bytes are a peer's: never trusted)."""
    limit = GROUP_NODE_BYTES * max(1, len(ranks))
    try:
        inflate = zlib.decompressobj()
        text = inflate.decompress(raw, limit)
        if inflate.unconsumed_tail or not inflate.eof:
            raise ValueError(f"not one compressed document of at most {limit // 2**20} MiB")
        doc = json.loads(text.decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, RecursionError) as exc:
        raise ValueError(f"not a compressed JSON document ({type(exc).__name__})") from None
    except ValueError as exc:
        raise ValueError(f"not a compressed JSON document ({str(exc)[:120]})") from None
    if not isinstance(doc, dict) or doc.get("group") != group:
        raise ValueError(f"not group {group}'s document")
    bodies, members, bad = doc.get("bodies"), doc.get("members"), doc.get("bad")
    if not (isinstance(bodies, list) and isinstance(members, list) and isinstance(bad, list)):
        raise ValueError("its bodies, members or bad nodes are not lists")
    allowed, seen = set(ranks), set()

    def rank_of(value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or value not in allowed or value in seen:
            raise ValueError(f"it names a rank that is not one of its group's, or twice ({str(value)[:20]})")
        seen.add(value)
        return value

    out: List[GroupMember] = []
    for m in members:
        if not isinstance(m, dict):
            raise ValueError("a member is not a JSON object")
        r = rank_of(m.get("rank"))
        body = m.get("body")
        if not isinstance(body, int) or isinstance(body, bool) or not 0 <= body < len(bodies):
            raise ValueError(f"rank {r}'s body is not one of the document's")
        if not (m.get("host") is None or isinstance(m.get("host"), str)):
            raise ValueError(f"rank {r}'s host name is not a string")
        if not (m.get("ids") is None or isinstance(m.get("ids"), list)):
            raise ValueError(f"rank {r}'s identities are not a list")
        meta = _payload_fields(m.get("meta"))
        out.append(GroupMember(r, dict(meta, snapshot=bodies[body]), m.get("host") or None))
    why: Dict[int, str] = {}
    for entry in bad:
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], str)):
            raise ValueError("a bad node's entry is not [rank, why]")
        why[rank_of(entry[0])] = entry[1][:300]
    return out, why


def _set_json(store: Any, key: str, value: Any) -> None:
    store.set(key, json.dumps(value))


def _cuda_devices(torch: Any, dist: Any) -> int:
    try:
        return int(torch.cuda.device_count()) if dist.is_nccl_available() and torch.cuda.is_available() else 0
    except Exception:
        return 0


def run(rdzv: Rendezvous, payload: Callable[[], Dict[str, Any]], timeout: float, bandwidth: Optional[BandwidthPlan],
        decide: Callable[[Collected], int], progress: Progress, gather: Gather = Gather()) -> int:
    """This node's part; rank 0 calls `decide` on what it gathered (`gather`: rank 0's choice of how). The exit
    code every node ends with."""
    torch, dist = _torch()
    start = time.monotonic()
    store = connect(rdzv, timeout, progress)
    body = payload()
    if bandwidth is not None:
        body["cuda_devices"] = _cuda_devices(torch, dist)
    try:
        if rdzv.rank == 0:
            group = gather.group_size(rdzv.nnodes)
            _set_json(store, "layout", {"group": group})
        else:
            group = _layout(store, timeout)
        _set_json(store, node_key(rdzv.rank, group), body)
        if rdzv.rank:
            store.add(_arrived_key(rdzv.rank, group), 1)
        if rdzv.rank == 0:
            return _lead(store, rdzv, body, timeout, bandwidth, decide, progress, start, torch, dist, group)
        if group is not None and rdzv.rank % group == 0:
            _lead_group(store, rdzv, group, timeout, progress)
        return _follow(store, rdzv, timeout, bandwidth, progress, torch, dist)
    except CollectError:
        raise
    except Exception as exc:  # the store's connection broke (rank 0 gone) or a wait ran out
        raise CollectError(f"lost the rendezvous at {rdzv.endpoint}: {_one_line(exc)}") from None


def node_key(rank: int, group: Optional[int]) -> str:
    """Where node `rank` posts its message (`group`: the group size, None when flat)."""
    return f"node/{rank}" if group is None else f"g/{rank // group}/node/{rank}"


def _arrived_key(rank: int, group: Optional[int]) -> str:
    return "arrived" if group is None else f"g/{rank // group}/arrived"


def group_ranks(k: int, group: int, nnodes: int) -> range:
    """The ranks of group `k`; its first is its leader."""
    return range(k * group, min(nnodes, (k + 1) * group))


def _layout(store: Any, timeout: float) -> Optional[int]:
    store.wait(["layout"], _td(timeout + 30))
    try:
        group = _get_json(store, "layout").get("group")
    except (ValueError, AttributeError, UnicodeDecodeError):
        group = 0
    if group is not None and not (isinstance(group, int) and group >= 2):
        raise CollectError("rank 0 posted a layout this node cannot read (another envdoctor version?)")
    return group


def _swept(store: Any, keys: Callable[[int], str], waiting: List[int]) -> List[int]:
    """The ranks in `waiting` whose key is not there yet: one round trip when they all are."""
    if not waiting or store.check([keys(r) for r in waiting]):
        return []
    return [r for r in waiting if not store.check([keys(r)])]


def _get_all(store: Any, keys: Sequence[str], chunk: int = 64) -> List[bytes]:
    """The values of `keys` (all there: a missing one is waited for), `chunk` keys a round trip where the
    store can."""
    out: List[bytes] = []
    for i in range(0, len(keys), chunk):
        part = list(keys[i:i + chunk])
        try:
            out += list(store.multi_get(part))
        except (AttributeError, NotImplementedError):  # a store without multi_get; a missing key is not this
            out += [store.get(k) for k in part]
        except RuntimeError as exc:
            if "not implemented" not in str(exc).lower() and "not supported" not in str(exc).lower():
                raise
            out += [store.get(k) for k in part]
    return out


def _wait_nodes(store: Any, ranks: Sequence[int], group: Optional[int], until: Callable[[], bool],
                pause: float = 0.05) -> List[int]:
    """Wait for the messages of `ranks` (one group's, or every node's when flat) until they are all in or `until()`;
    the ones still missing. One counter read per round; a sweep over the nodes still missing (one round trip
    when they are all in, else one each) when the counter says all are in, or now and then (a node may have
    added twice, or not at all): never more than a fifth of the time."""
    waiting = list(ranks)
    if not waiting:
        return waiting
    counter, total = _arrived_key(waiting[0], group), len(waiting)
    swept, cost, claimed = 0.0, 0.0, -1
    while waiting and not until():
        count = store.add(counter, 0)
        if (count >= total and count != claimed) or time.monotonic() - swept > max(1.0, 4 * cost):
            claimed = count
            began = time.monotonic()
            waiting = _swept(store, lambda r: node_key(r, group), waiting)
            swept = time.monotonic()
            cost = swept - began
        if waiting:
            time.sleep(pause)
    return waiting


def _read_nodes(store: Any, got: Collected, ranks: Sequence[int], group: Optional[int]) -> None:
    """The messages of `ranks` (all posted) into `got`."""
    for r, raw in zip(ranks, _get_all(store, [node_key(r, group) for r in ranks])):
        try:
            got.payloads[r] = peer_payload(raw)
        except ValueError as exc:  # a bad node is reported as one; the others are still collected
            got.bad[r] = str(exc)


def _lead_group(store: Any, rdzv: Rendezvous, group: int, timeout: float, progress: Progress) -> None:
    """A group leader's part: gather the group's messages until all are in or rank 0 posts `cutoff` (bounded
    by this node's own timeout when rank 0 says nothing), post `group/K`, delete what it read."""
    k = rdzv.rank // group
    ranks = group_ranks(k, group, rdzv.nnodes)
    bound = time.monotonic() + timeout + 30
    progress(f"leading group {k} (ranks {ranks.start}..{ranks.stop - 1})")
    waiting = _wait_nodes(store, ranks[1:], group, lambda: bool(store.check(["cutoff"])) or time.monotonic() > bound,
                          LEADER_POLL)
    if waiting:
        waiting = _swept(store, lambda r: node_key(r, group), waiting)  # the last ones in before the cutoff
    came = [r for r in ranks if r not in waiting]
    raws = dict(zip(came, _get_all(store, [node_key(r, group) for r in came])))
    store.set(f"group/{k}", group_document(k, raws))
    store.add("groups", 1)
    if store.check(["cutoff"]):
        return  # rank 0 may be reading these messages itself now (a late document): they stay
    for r in came:  # the document was posted before the cutoff, so rank 0 reads it, not these
        store.delete_key(node_key(r, group))


def _gather_flat(store: Any, got: Collected, deadline: float, progress: Progress) -> None:
    n = got.rdzv.nnodes
    progress(f"waiting up to {got.timeout:g} s for {n - 1} node(s)")
    got.missing = _wait_nodes(store, range(1, n), None, lambda: time.monotonic() >= deadline)
    read_from = time.monotonic()
    _read_nodes(store, got, [r for r in range(1, n) if r not in got.missing], None)
    got.read_s = time.monotonic() - read_from


def _gather_groups(store: Any, got: Collected, group: int, deadline: float, progress: Progress) -> None:
    """Group 0's messages read here; every other group's document, until all are in or the deadline (then
    `cutoff`, and GROUP_GRACE more for the documents)."""
    n = got.rdzv.nnodes
    ngroups = -(-n // group)
    progress(f"waiting up to {got.timeout:g} s for {n - 1} node(s) in {ngroups} group(s) of {group}")
    own = list(group_ranks(0, group, n))[1:]
    own_total, pending = len(own), list(range(1, ngroups))
    cut: Optional[float] = None
    swept, cost = 0.0, 0.0
    while True:
        now = time.monotonic()
        if cut is None and now >= deadline:
            store.set("cutoff", "1")
            cut = now + GROUP_GRACE
        due = now - swept > max(1.0, 4 * cost)
        if cut is None and own and (store.add(_arrived_key(0, group), 0) >= own_total or due):
            own = _swept(store, lambda r: node_key(r, group), own)
        if pending and (store.add("groups", 0) > ngroups - 1 - len(pending) or due):
            began = time.monotonic()
            pending = [k for k in pending if not store.check([f"group/{k}"])]
            swept = time.monotonic()
            cost = swept - began
        if (not pending and (not own or cut is not None)) or (cut is not None and now >= cut):
            break
        time.sleep(0.05)
    read_from = time.monotonic()
    got.missing = own
    _read_nodes(store, got, [r for r in group_ranks(0, group, n)[1:] if r not in own], group)
    bodies = Bodies()  # one body per distinct machine across the groups: rank 0 holds those, not N copies
    for k in range(1, ngroups):
        ranks = group_ranks(k, group, n)
        if k in pending and not store.check([f"group/{k}"]):  # not even now, after the grace
            why = f"never sent its group's document (waited {got.timeout:g} s and {GROUP_GRACE:g} s more)"
        else:
            try:
                members, bad = read_group_document(store.get(f"group/{k}"), k, ranks)
                store.delete_key(f"group/{k}")
            except ValueError as exc:
                why = f"sent a group document rank 0 cannot use: {exc}"
            else:
                kept: Dict[int, Any] = {}  # this document's body -> the one rank 0 keeps
                for m in members:
                    snap = m.payload.get("snapshot")
                    if id(snap) not in kept:
                        kept[id(snap)] = bodies.docs[bodies.add(snap)[0]]
                    got.payloads[m.rank] = dict(m.payload, snapshot=kept[id(snap)])
                    got.snapshot_hosts[m.rank] = m.host
                got.bad.update(bad)
                got.missing += [r for r in ranks if r not in got.payloads and r not in bad]
                continue
        got.lost_leaders[ranks.start] = why  # read what its members posted, where it is still there
        present = [r for r in ranks if store.check([node_key(r, group)])]
        _read_nodes(store, got, present, group)
        got.lost.update({r: ranks.start for r in ranks if r not in present})
    got.missing.sort()
    got.read_s = time.monotonic() - read_from


def _lead(store: Any, rdzv: Rendezvous, own: Dict[str, Any], timeout: float, bandwidth: Optional[BandwidthPlan],
          decide: Callable[[Collected], int], progress: Progress, start: float, torch: Any, dist: Any,
          group: Optional[int] = None) -> int:
    deadline = start + timeout
    got = Collected(rdzv, timeout, {0: own}, [], group=group)
    if group is None:
        _gather_flat(store, got, deadline, progress)
    else:
        _gather_groups(store, got, group, deadline, progress)
    got.gathered = time.monotonic() - start
    absent = sorted(set(got.missing) | set(got.lost))
    arrived = [r for r in range(rdzv.nnodes) if r not in absent]
    payloads = got.payloads
    if bandwidth is not None and not absent:
        got.backend = "nccl" if all(_finite(p.get("cuda_devices", 0)) and p.get("cuda_devices", 0) > 0
                                    for p in payloads.values()) else "gloo"
        got.nbytes = bandwidth.nbytes
    elif bandwidth is not None:
        got.bandwidth_error = f"not measured: rank(s) {', '.join(map(str, absent))} never arrived"
    age, last = _tick(store, 0.0, None)
    # the plan names who is absent (usually none), not who arrived: every node reads it
    _set_json(store, "plan", {"absent": absent, "backend": got.backend})
    progress(f"{len(arrived)}/{rdzv.nnodes} node(s) arrived; measuring clocks")
    age = _clock_phase(store, len(arrived) - 1, age, last)
    silent = set(_swept(store, lambda r: f"clock/{r}", arrived[1:]))  # no answer in time: their clock unknown
    answered = [r for r in arrived[1:] if r not in silent]
    for r, raw in zip(answered, _get_all(store, [f"clock/{r}" for r in answered])):
        try:
            got.clocks[r] = peer_readings(raw, age)
        except ValueError as exc:
            got.bad.setdefault(r, str(exc))
    if got.backend is not None and bandwidth is not None:
        progress(f"measuring node-to-node bandwidth over {got.backend}")
        row, error = _bandwidth(store, rdzv, got.backend, bandwidth, timeout, progress, torch, dist)
        if error is None:
            rows = [row] + [_peer_row(store, r, rdzv.nnodes, timeout) for r in range(1, rdzv.nnodes)]
            refused = [r for r, x in enumerate(rows) if x is None]
            got.rows = matrix_from_rows([x if x is not None else [None] * rdzv.nnodes for x in rows])
            for r in refused:
                got.bad.setdefault(r, "its bandwidth row is not one number or null per node")
        else:
            got.bandwidth_error = error
    got.seconds = time.monotonic() - start
    code = decide(got)
    store.set("verdict", str(code))
    _await_done(store, len(arrived) - 1)
    return code


def _peer_row(store: Any, rank: int, nnodes: int, timeout: float) -> Optional[List[Optional[float]]]:
    try:
        return peer_row(_wait_json(store, f"bw/{rank}", timeout), nnodes)
    except (ValueError, RecursionError):
        return None


def _wait_json(store: Any, key: str, timeout: float) -> Any:
    store.wait([key], _td(timeout))
    return _get_json(store, key)


def _tick(store: Any, age: float, last: Optional[float]) -> Tuple[float, float]:
    """Post rank 0's clock: (the greatest age a value read from `clock/now` can have had, this value's stamp).
    `last`: the stamp of the value this one replaces."""
    stamp = time.time()
    store.set("clock/now", repr(stamp))
    now = time.time()
    return max(age, now - (last if last is not None else stamp)), stamp


def _clock_phase(store: Any, followers: int, age: float, last: float) -> float:
    """Keep `clock/now` fresh until every follower has posted its readings (bounded); the values' greatest age."""
    deadline = time.monotonic() + PING_TIMEOUT + 0.002 * followers
    while time.monotonic() < deadline and store.add("clocked", 0) < followers:
        time.sleep(TICK)
        age, last = _tick(store, age, last)
    return max(age, time.time() - last)


def _await_done(store: Any, followers: int) -> None:
    deadline = time.monotonic() + DONE_TIMEOUT + 0.01 * followers  # a big fleet reads the verdict for a while
    while followers > 0 and store.add("done", 0) < followers and time.monotonic() < deadline:
        time.sleep(0.05)


def _follow(store: Any, rdzv: Rendezvous, timeout: float, bandwidth: Optional[BandwidthPlan], progress: Progress,
            torch: Any, dist: Any) -> int:
    progress("snapshot sent; waiting for rank 0")
    plan = _wait_json(store, "plan", timeout + 30)
    if rdzv.rank not in plan["absent"]:
        readings = []
        for _ in range(PINGS):
            t0 = _wall_clock()
            theirs = store.get("clock/now")
            t1 = _wall_clock()
            try:
                readings.append([t0, peer_clock(theirs), t1])
            except ValueError:
                pass  # rank 0 has stopped posting its clock
        _set_json(store, f"clock/{rdzv.rank}", readings)
        store.add("clocked", 1)
        if plan.get("backend") and bandwidth is not None:
            row, error = _bandwidth(store, rdzv, plan["backend"], bandwidth, timeout, progress, torch, dist)
            _set_json(store, f"bw/{rdzv.rank}", row if error is None else [None] * rdzv.nnodes)
    # rank 0 decides after the bandwidth rounds; those can take a while on a big fleet
    store.wait(["verdict"], _td(3 * timeout + 60))
    code = int(store.get("verdict").decode())
    store.add("done", 1)
    return code


def _bandwidth(store: Any, rdzv: Rendezvous, backend: str, plan: BandwidthPlan, timeout: float, progress: Progress,
               torch: Any, dist: Any) -> tuple:
    """(this rank's row, None) or (None, why not): a failed measurement is reported, not fatal."""
    device = "cpu"
    if backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", "0") or 0)
        device = f"cuda:{local % max(1, torch.cuda.device_count())}"
        torch.cuda.set_device(device)
    try:
        dist.init_process_group(backend, store=dist.PrefixStore("pg", store), rank=rdzv.rank,
                                world_size=rdzv.nnodes, timeout=_td(timeout))
    except Exception as exc:
        return None, f"process group ({backend}) did not form: {_one_line(exc)}"
    try:
        return measure_row(dist, torch, rdzv.rank, rdzv.nnodes, device, plan.nbytes, plan.iters, progress), None
    except Exception as exc:
        return None, f"bandwidth measurement over {backend} failed: {_one_line(exc)}"
    finally:
        try:
            dist.destroy_process_group()
        except Exception:
            pass
