"""`fleet collect` simulated in one process: rank 0 runs the real collect (`envdoctor.fleet.collect.run`) and
hosts the TCPStore; every other node is a thread with its own store client, running the real follower (or group
leader), or a hostile one that sends what it is told (bad JSON, a clock answer `abc`, a bandwidth row of the
wrong shape, a group document that is not one) or, as a group leader, dies before it leads.

    from fleet_sim import simulate   # bench/ on sys.path

Run as a script it measures flat against hierarchical gathering (bench/results/fleet_hier.json):

    nice -n 10 python bench/fleet_sim.py [--nodes 1024,4096] [--gather flat,hierarchical] [--group 64]
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from envdoctor.fleet import collect
from envdoctor.fleet.endpoint import Rendezvous
from envdoctor.fleet.gather import Gather


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
    group_doc: Optional[bytes] = None  # as a group leader: posted as its group's document
    dies: bool = False  # as a group leader: gone once it has posted its own message
    absent: bool = False  # never comes at all


class Tally:
    """Bytes and operations through the store, per rank, and the most bytes the store held at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sent: Dict[int, int] = {}
        self.received: Dict[int, int] = {}
        self.ops: Dict[int, int] = {}
        self.live: Dict[str, int] = {}
        self.held = self.peak_held = 0
        self.peak_keys = 0

    def count(self, rank: int, sent: int = 0, received: int = 0, key: Optional[str] = None,
              deleted: Optional[str] = None) -> None:
        with self.lock:
            self.sent[rank] = self.sent.get(rank, 0) + sent
            self.received[rank] = self.received.get(rank, 0) + received
            self.ops[rank] = self.ops.get(rank, 0) + 1
            if key is not None:
                self.held += sent - self.live.get(key, 0)
                self.live[key] = sent
            if deleted is not None:
                self.held -= self.live.pop(deleted, 0)
            self.peak_held = max(self.peak_held, self.held)
            self.peak_keys = max(self.peak_keys, len(self.live))


class Counting:
    """A store client that tallies what goes through it (set, get, multi_get, add, check, wait, delete_key)."""

    def __init__(self, store: Any, tally: Tally, rank: int) -> None:
        self._s, self._t, self._r = store, tally, rank

    def set(self, key: str, value: Any) -> None:
        self._s.set(key, value)
        self._t.count(self._r, sent=len(key) + len(value), key=key)

    def get(self, key: str) -> bytes:
        value = self._s.get(key)
        self._t.count(self._r, sent=len(key), received=len(value))
        return value

    def multi_get(self, keys: List[str]) -> List[bytes]:
        values = self._s.multi_get(keys)
        self._t.count(self._r, sent=sum(map(len, keys)), received=sum(map(len, values)))
        return values

    def add(self, key: str, n: int) -> int:
        self._t.count(self._r, sent=len(key) + 8, received=8)
        return self._s.add(key, n)

    def check(self, keys: List[str]) -> bool:
        self._t.count(self._r, sent=sum(map(len, keys)), received=1)
        return self._s.check(keys)

    def wait(self, keys: List[str], *timeout: Any) -> None:
        self._t.count(self._r, sent=sum(map(len, keys)))
        self._s.wait(keys, *timeout)

    def delete_key(self, key: str) -> bool:
        self._t.count(self._r, sent=len(key), deleted=key)
        return self._s.delete_key(key)


@dataclass
class Simulated:
    code: int
    collected: Optional[collect.Collected]
    decided: Any
    follower_codes: Dict[int, Any] = field(default_factory=dict)
    seconds: float = 0.0
    tally: Optional[Tally] = None


def _hostile_follower(rdzv: Rendezvous, h: Hostile, honest: Dict[str, Any], timeout: float,
                      wrap: Callable[[Any, int], Any]) -> int:
    import datetime

    import torch.distributed as dist

    if h.absent:
        return -9
    td = datetime.timedelta(seconds=timeout)
    store = wrap(dist.PrefixStore(collect.PREFIX, dist.TCPStore(rdzv.host, rdzv.port, is_master=False, timeout=td,
                                                                wait_for_workers=False)), rdzv.rank)
    store.wait(["layout"])
    group = json.loads(store.get("layout").decode())["group"]
    store.set(collect.node_key(rdzv.rank, group), h.payload if h.payload is not None else json.dumps(honest))
    store.add("arrived" if group is None else f"g/{rdzv.rank // group}/arrived", 1)
    if group is not None and rdzv.rank % group == 0:
        if h.dies:
            return -9
        if h.group_doc is not None:
            k = rdzv.rank // group
            keys = [collect.node_key(r, group) for r in collect.group_ranks(k, group, rdzv.nnodes)]
            store.wait(keys, td)
            store.set(f"group/{k}", h.group_doc)
            store.add("groups", 1)
            for key in keys:
                store.delete_key(key)
        else:
            collect._lead_group(store, rdzv, group, timeout, lambda _t: None)
    store.wait(["plan"])
    plan = json.loads(store.get("plan").decode())
    if rdzv.rank not in plan["absent"]:
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
             progress: Callable[[str], None] = lambda _t: None, gather: Gather = Gather(),
             count: bool = False) -> Simulated:
    """Rank 0 in this thread, nodes 1..nnodes-1 in threads; `decide(collected)` is rank 0's diagnosis (its
    result is kept; the verdict posted is 0). `hostile`: rank -> what that node sends instead. `gather`: rank 0's
    choice of flat or by groups. `count`: tally the bytes and operations through the store (`Simulated.tally`)."""
    hostile = hostile or {}
    port = free_port()
    box: Dict[str, Any] = {}
    codes: Dict[int, Any] = {}
    tally = Tally() if count else None

    def wrap(store: Any, rank: int) -> Any:
        return Counting(store, tally, rank) if tally is not None else store

    real_connect = collect.connect

    def connect(rdzv: Rendezvous, timeout: float, progress: Callable[[str], None]) -> Any:
        return wrap(real_connect(rdzv, timeout, progress), rdzv.rank)

    def decide_and_keep(got: collect.Collected) -> int:
        box["got"], box["decided"] = got, decide(got)
        return 0

    def node(r: int) -> None:
        rdzv = Rendezvous(nnodes, r, "127.0.0.1", port)
        try:
            if r in hostile:
                codes[r] = _hostile_follower(rdzv, hostile[r], payload_of(r), timeout, wrap)
            else:
                codes[r] = collect.run(rdzv, lambda: payload_of(r), timeout, None, lambda _g: 0, lambda _t: None)
        except Exception as exc:  # what a node ended with, to report
            codes[r] = f"{type(exc).__name__}: {exc}"

    old = threading.stack_size(stack_kib * 1024)
    collect.connect = connect  # type: ignore[assignment]
    start = time.monotonic()
    try:
        lead = Rendezvous(nnodes, 0, "127.0.0.1", port)
        result: Dict[str, Any] = {}

        def rank0() -> None:
            result["code"] = collect.run(lead, lambda: payload_of(0), timeout, None, decide_and_keep, progress, gather)

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
        collect.connect = real_connect  # type: ignore[assignment]
        threading.stack_size(old)
    return Simulated(result.get("code", -1), box.get("got"), box.get("decided"), codes, time.monotonic() - start, tally)


def held_bytes(root: Any) -> int:
    """What `root` holds in memory: sys.getsizeof over everything reachable through dicts, lists and tuples,
    each object once (twins' shared documents count once)."""
    seen, stack, total = set(), [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
    return total


def collect_simulated(n: int, raw: Dict[int, str], gather: Gather, count: bool = False) -> Tuple[Simulated, float]:
    """`fleet collect` of n simulated nodes whose messages are `raw` (rank -> JSON), rank 0's progress on stderr:
    the run, and the seconds rank 0's diagnosis of what it gathered took."""
    from envdoctor.settings import Settings
    from envdoctor.usecases.fleet import diagnose_collected

    know = Settings.from_env({}).knowledge()
    timing: Dict[str, float] = {}

    def decide(got: Any) -> Any:
        t = time.monotonic()
        result = diagnose_collected(got, know)
        timing["diagnose_s"] = time.monotonic() - t
        return result

    began = time.monotonic()

    def progress(text: str) -> None:
        print(f"[{time.monotonic() - began:7.1f} s] rank 0: {text}", file=sys.stderr, flush=True)

    out = simulate(n, lambda r: json.loads(raw[r]), decide, timeout=900, progress=progress, gather=gather,
                   count=count)
    return out, timing.get("diagnose_s", 0.0)


def messages(n: int) -> Dict[int, str]:
    """Each simulated node's message (rank -> JSON): the recorded 8xH100 snapshot as node r of n."""
    from pathlib import Path

    from fleet_nodes import node_document

    base = json.loads((Path(__file__).resolve().parents[1] / "tests/fixtures/snapshots/h100_8x_nvswitch.json").read_text())
    return {r: json.dumps({"hostname": f"node{r:05d}", "file": "", "snapshot": node_document(base, r, n)}) for r in range(n)}


def floor_one(n: int, stack_kib: int = 512) -> Dict[str, Any]:
    """The floor, in this process: n-1 threads each connect a store client and post its message, and rank 0
    (hosting the store) waits for them all and reads every message once, as bytes: no protocol, no parsing."""
    import datetime

    import torch.distributed as dist

    raw = messages(n)
    port = free_port()
    td = datetime.timedelta(seconds=900)
    host = dist.TCPStore("127.0.0.1", port, is_master=True, timeout=td, wait_for_workers=False)

    def node(r: int) -> None:
        s = dist.TCPStore("127.0.0.1", port, is_master=False, timeout=td, wait_for_workers=False)
        s.set(f"node/{r}", raw[r])
        s.add("arrived", 1)
        s.wait(["done"])

    old = threading.stack_size(stack_kib * 1024)
    start = time.monotonic()
    threads = [threading.Thread(target=node, args=(r,), daemon=True) for r in range(1, n)]
    for t in threads:
        t.start()
    while host.add("arrived", 0) < n - 1:
        time.sleep(0.05)
    read_from = time.monotonic()
    got = sum(len(host.get(f"node/{r}")) for r in range(1, n))
    done = time.monotonic()
    host.set("done", "1")
    for t in threads:
        t.join(60)
    threading.stack_size(old)
    return {"nodes": n, "gathered_s": round(done - start, 2), "rank0_read_s": round(done - read_from, 3), "bytes": got}


def measure_one(n: int, mode: str, group: int) -> Dict[str, Any]:
    """In this process: `fleet collect` of n simulated nodes (bench/fleet_nodes.py), flat or by groups."""
    import resource

    raw = messages(n)
    out, diagnose_s = collect_simulated(n, raw, Gather(mode, group), count=True)
    got, tally = out.collected, out.tally
    assert tally is not None
    fails = {r: c for r, c in out.follower_codes.items() if c != 0}
    result = out.decided
    held = held_bytes([got.payloads, got.snapshot_hosts]) if got else 0
    return {"nodes": n, "gather": mode, "group_size": got.group if got else None,
            "arrived": len(got.payloads) if got else 0, "bad": len(got.bad) if got else None,
            "missing": len(got.missing) if got else None, "not_collected": len(got.lost) if got else None,
            "findings": sorted(f.title for f in result.findings) if result else None,
            "gathered_s": round(got.gathered, 2) if got else None,
            "rank0_read_s": round(got.read_s, 3) if got else None,
            "clocks_s": round(got.seconds - got.gathered, 2) if got else None,
            "diagnose_s": round(diagnose_s, 2), "total_s": round(out.seconds, 2),
            "message_mb": round(sum(len(v) for v in raw.values()) / 1e6, 1),
            "rank0_holds_mb": round(held / 1e6, 2),
            "store_peak_mb": round(tally.peak_held / 1e6, 2), "store_peak_keys": tally.peak_keys,
            "store_bytes_mb": round((sum(tally.sent.values()) + sum(tally.received.values())) / 1e6, 1),
            "rank0_received_mb": round(tally.received.get(0, 0) / 1e6, 2), "rank0_store_ops": tally.ops.get(0, 0),
            "store_ops": sum(tally.ops.values()),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "failed_followers": len(fails), "first_failure": next(iter(fails.values()), None)}


def main() -> int:
    import argparse
    import os
    import subprocess
    import sys
    from pathlib import Path

    ap = argparse.ArgumentParser(description="fleet collect, flat against by groups, simulated in one process")
    ap.add_argument("--nodes", default="1024,4096")
    ap.add_argument("--gather", default="flat,hierarchical")
    ap.add_argument("--group", type=int, default=64)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "fleet_hier.json"))
    ap.add_argument("--one", nargs=3, metavar=("N", "MODE", "GROUP"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        n, mode, group = int(args.one[0]), args.one[1], int(args.one[2])
        print(json.dumps(floor_one(n) if mode == "floor" else measure_one(n, mode, group)))
        return 0
    how = (f"nice -n 10 python bench/fleet_sim.py --nodes {args.nodes} (each size and mode once, each in a fresh "
           "process); rank 0 and every node in one process, store clients in threads, on 2 cores shared with other "
           "jobs: at 4,096 threads the gather measures mostly thread contention, so compare per node and against "
           "the floor of the same size (every node posting its message to one bare TCPStore, rank 0 reading them "
           "as bytes). load_avg_at_end counts the simulation's own threads.")
    results: Dict[str, Any] = {"how": how, "cpus": os.cpu_count(), "load_avg_at_start": round(os.getloadavg()[0], 2),
                               "group_size": args.group, "runs": []}
    for n in (int(x) for x in args.nodes.split(",")):
        for mode in ["floor", *args.gather.split(",")]:
            p = subprocess.run([sys.executable, __file__, "--one", str(n), mode, str(args.group)],
                               stdout=subprocess.PIPE, text=True, timeout=3600)
            lines = p.stdout.strip().splitlines()
            r = json.loads(lines[-1]) if lines else {"nodes": n, "gather": mode, "error": f"exit {p.returncode}"}
            r.setdefault("gather", mode)
            results["runs"].append(r)
            print(json.dumps(r), flush=True)
    for r in results["runs"]:  # per node, and against the bare store floor of the same size, same run
        floor = next((f for f in results["runs"] if f["gather"] == "floor" and f["nodes"] == r["nodes"]), None)
        if r["gather"] != "floor" and "gathered_s" in r and floor:
            r["gathered_vs_floor"] = round(r["gathered_s"] / floor["gathered_s"], 2)
            r["gathered_ms_per_node"] = round(1000 * r["gathered_s"] / r["nodes"], 2)
            r["rank0_read_ms_per_node"] = round(1000 * r["rank0_read_s"] / r["nodes"], 3)
            r["rank0_holds_kb_per_node"] = round(1000 * r["rank0_holds_mb"] / r["nodes"], 2)
    results["load_avg_at_end"] = round(os.getloadavg()[0], 2)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
