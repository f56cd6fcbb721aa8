"""`fleet collect` simulated in one process: rank 0 runs the real collect (`envdoctor.fleet.collect.run`) and
hosts the TCPStore; every other node is a thread with its own store client, running the real follower, or a
hostile one that sends what it is told (bad JSON, a clock answer `abc`, a bandwidth row of the wrong shape).

    from fleet_sim import simulate   # bench/ on sys.path
"""

from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

from envdoctor.fleet import collect
from envdoctor.fleet.endpoint import Rendezvous


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Hostile:
    """What a hostile node sends instead of the protocol's values (None: the honest value)."""

    payload: Optional[bytes] = None
    clock: Optional[bytes] = None
    row: Optional[bytes] = None


@dataclass
class Simulated:
    code: int
    collected: Optional[collect.Collected]
    decided: Any
    follower_codes: Dict[int, Any] = field(default_factory=dict)
    seconds: float = 0.0


def _hostile_follower(rdzv: Rendezvous, h: Hostile, honest: Dict[str, Any], timeout: float) -> int:
    import datetime

    import torch.distributed as dist

    store = dist.PrefixStore(collect.PREFIX, dist.TCPStore(rdzv.host, rdzv.port, is_master=False,
                                                           timeout=datetime.timedelta(seconds=timeout),
                                                           wait_for_workers=False))
    store.set(f"node/{rdzv.rank}", h.payload if h.payload is not None else json.dumps(honest))
    store.add("arrived", 1)
    store.wait(["plan"])
    plan = json.loads(store.get("plan").decode())
    if rdzv.rank in plan["arrived"]:
        if h.clock is not None:
            store.set(f"clock/{rdzv.rank}", json.dumps([[time.time(), h.clock.decode(), time.time()]]))
        else:
            t0, theirs, t1 = time.time(), float(store.get("clock/now").decode()), time.time()
            store.set(f"clock/{rdzv.rank}", json.dumps([[t0, theirs, t1]]))
        store.add("clocked", 1)
        if plan.get("backend"):
            store.set(f"bw/{rdzv.rank}", h.row if h.row is not None else json.dumps([None] * rdzv.nnodes))
    store.wait(["verdict"])
    code = int(store.get("verdict").decode())
    store.add("done", 1)
    return code


def simulate(nnodes: int, payload_of: Callable[[int], Dict[str, Any]], decide: Callable[[collect.Collected], Any],
             hostile: Optional[Dict[int, Hostile]] = None, timeout: float = 120.0, stack_kib: int = 512,
             progress: Callable[[str], None] = lambda _t: None) -> Simulated:
    """Rank 0 in this thread, nodes 1..nnodes-1 in threads; `decide(collected)` is rank 0's diagnosis (its
    result is kept; the verdict posted is 0). `hostile`: rank -> what that node sends instead."""
    hostile = hostile or {}
    port = free_port()
    box: Dict[str, Any] = {}
    codes: Dict[int, Any] = {}

    def decide_and_keep(got: collect.Collected) -> int:
        box["got"], box["decided"] = got, decide(got)
        return 0

    def node(r: int) -> None:
        rdzv = Rendezvous(nnodes, r, "127.0.0.1", port)
        try:
            if r in hostile:
                codes[r] = _hostile_follower(rdzv, hostile[r], payload_of(r), timeout)
            else:
                codes[r] = collect.run(rdzv, lambda: payload_of(r), timeout, None, lambda _g: 0, lambda _t: None)
        except Exception as exc:  # what a node ended with, to report
            codes[r] = f"{type(exc).__name__}: {exc}"

    old = threading.stack_size(stack_kib * 1024)
    start = time.monotonic()
    try:
        lead = Rendezvous(nnodes, 0, "127.0.0.1", port)
        result: Dict[str, Any] = {}

        def rank0() -> None:
            result["code"] = collect.run(lead, lambda: payload_of(0), timeout, None, decide_and_keep, progress)

        t0 = threading.Thread(target=rank0, name="rank0")
        t0.start()
        time.sleep(0.2)  # the store listens before the clients connect
        threads: List[threading.Thread] = []
        for r in range(1, nnodes):
            t = threading.Thread(target=node, args=(r,), name=f"node{r}", daemon=True)
            t.start()
            threads.append(t)
        t0.join()
        for t in threads:
            t.join(timeout)
    finally:
        threading.stack_size(old)
    return Simulated(result.get("code", -1), box.get("got"), box.get("decided"), codes, time.monotonic() - start)
