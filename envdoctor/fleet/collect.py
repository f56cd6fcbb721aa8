"""`fleet collect`'s exchange over torch.distributed's c10d TCPStore (the store torchrun's rendezvous uses).

Every node connects to the store at the rendezvous endpoint (rank 0 hosts it; under torchrun its agent
does), posts `node/R` (its host name and snapshot) and then answers rank 0. Rank 0:

1. waits for every node's snapshot until --timeout; the ones that never came are named, not waited for;
2. posts `plan` (who arrived, whether to measure bandwidth and over which backend);
3. measures every node's clock against its own at once: rank 0 posts its clock (`clock/now`) every TICK
   seconds, each node reads it three times between two readings of its own clock and posts them
   (`clock/R`); the best bound is kept (the value's age, which rank 0 measures, widens the bound);
4. with --bandwidth and every node present: a gloo (or NCCL, when every node has GPUs) process group and the
   pairwise matrix (measure.py);
5. decides (the caller's diagnosis) and posts `verdict`, the exit code every node then exits with; it keeps
   the store up until each node has read it (bounded).

Every wait is bounded; a node whose rank 0 died sees the store's connection fail and exits 2.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from envdoctor.errors import InputError
from envdoctor.fleet.checks import ClockReading
from envdoctor.fleet.endpoint import Rendezvous, check_endpoint
from envdoctor.fleet.measure import matrix_from_rows, measure_row

PREFIX = "envdoctor.fleet/1"
PINGS = 3
PING_TIMEOUT = 5.0  # the clock phase lasts at most this, and a little more per node on a big fleet
TICK = 0.01  # how often rank 0 posts its clock during the clock phase
DONE_TIMEOUT = 10.0
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


def _set_json(store: Any, key: str, value: Any) -> None:
    store.set(key, json.dumps(value))


def _cuda_devices(torch: Any, dist: Any) -> int:
    try:
        return int(torch.cuda.device_count()) if dist.is_nccl_available() and torch.cuda.is_available() else 0
    except Exception:
        return 0


def run(rdzv: Rendezvous, payload: Callable[[], Dict[str, Any]], timeout: float, bandwidth: Optional[BandwidthPlan],
        decide: Callable[[Collected], int], progress: Progress) -> int:
    """This node's part; rank 0 calls `decide` on what it gathered. The exit code every node ends with."""
    torch, dist = _torch()
    start = time.monotonic()
    store = connect(rdzv, timeout, progress)
    body = payload()
    if bandwidth is not None:
        body["cuda_devices"] = _cuda_devices(torch, dist)
    try:
        _set_json(store, f"node/{rdzv.rank}", body)
        if rdzv.rank:
            store.add("arrived", 1)
        if rdzv.rank == 0:
            return _lead(store, rdzv, body, timeout, bandwidth, decide, progress, start, torch, dist)
        return _follow(store, rdzv, timeout, bandwidth, progress, torch, dist)
    except CollectError:
        raise
    except Exception as exc:  # the store's connection broke (rank 0 gone) or a wait ran out
        raise CollectError(f"lost the rendezvous at {rdzv.endpoint}: {_one_line(exc)}") from None


def _lead(store: Any, rdzv: Rendezvous, own: Dict[str, Any], timeout: float, bandwidth: Optional[BandwidthPlan],
          decide: Callable[[Collected], int], progress: Progress, start: float, torch: Any, dist: Any) -> int:
    deadline = start + timeout
    waiting = list(range(1, rdzv.nnodes))
    progress(f"waiting up to {timeout:g} s for {len(waiting)} node(s)")
    swept, cost = 0.0, 0.0
    while waiting and time.monotonic() < deadline:
        # one counter read per round; a sweep over the nodes (a round trip each) when all say they are in, or
        # now and then (a node may have added twice, or not at all): never more than a fifth of rank 0's time
        if store.add("arrived", 0) >= len(waiting) or time.monotonic() - swept > max(1.0, 4 * cost):
            began = time.monotonic()
            waiting = [r for r in waiting if not store.check([f"node/{r}"])]
            swept = time.monotonic()
            cost = swept - began
        if waiting:
            time.sleep(0.05)
    arrived = [r for r in range(rdzv.nnodes) if r not in waiting]
    read_from = time.monotonic()
    payloads, bad = {0: own}, {}
    for r in arrived[1:]:
        try:
            payloads[r] = peer_payload(store.get(f"node/{r}"))
        except ValueError as exc:  # a bad node is reported as one; the others are still collected
            bad[r] = str(exc)
    got = Collected(rdzv, timeout, payloads, waiting, bad, gathered=time.monotonic() - start,
                    read_s=time.monotonic() - read_from)
    if bandwidth is not None and not waiting:
        got.backend = "nccl" if all(_finite(p.get("cuda_devices", 0)) and p.get("cuda_devices", 0) > 0
                                    for p in payloads.values()) else "gloo"
        got.nbytes = bandwidth.nbytes
    elif bandwidth is not None:
        got.bandwidth_error = f"not measured: rank(s) {', '.join(map(str, waiting))} never arrived"
    age, last = _tick(store, 0.0, None)
    _set_json(store, "plan", {"arrived": arrived, "backend": got.backend})
    progress(f"{len(arrived)}/{rdzv.nnodes} node(s) arrived; measuring clocks")
    age = _clock_phase(store, len(arrived) - 1, age, last)
    for r in arrived[1:]:
        if not store.check([f"clock/{r}"]):
            continue  # the node did not answer in time: its clock stays unknown
        try:
            got.clocks[r] = peer_readings(store.get(f"clock/{r}"), age)
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
    if rdzv.rank in plan["arrived"]:
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
