"""`envdoctor fleet collect` with N local processes as nodes on 127.0.0.1: how long collect + diagnose takes
as N grows, and the loopback bandwidth matrix.

Every node contributes the same fixture snapshot (`--snapshot`), so the figures are the rendezvous, the
gather, the clock round trips and the diagnosis, not probing. Two times per N:
- wall: from starting the N processes to the last one exiting (includes each process importing torch,
  which on a small machine dominates and grows with N as the processes share the cores);
- rank 0: from rank 0 hosting the store to its verdict (`collect.seconds` in the document), split into
  waiting for the last node (`collect.gathered_s`: the other processes still importing torch) and the rest
  (the clock round trips, the diagnosis and the verdict).

    python bench/fleet_bench.py [--nodes 3,8,32] [--bandwidth-nodes 4] [--out bench/results/fleet.json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(n: int, extra: List[str], timeout: float = 900) -> Dict[str, Any]:
    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-m", "envdoctor", "fleet", "collect", "--nnodes", str(n),
                               "--node-rank", str(r), "--rdzv-endpoint", f"127.0.0.1:{port}", "--snapshot",
                               str(SNAPSHOT), "--timeout", "600", "--json", *extra],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
             for r in range(n)]
    outs = [p.communicate(timeout=timeout)[0] for p in procs]
    wall = time.monotonic() - start
    doc = json.loads(outs[0])
    c = doc["collect"]
    return {"nodes": n, "wall_s": round(wall, 2), "rank0_s": c["seconds"], "gathered_s": c["gathered_s"],
            "after_gather_s": round(c["seconds"] - c["gathered_s"], 3),
            "exit_codes": sorted({p.returncode for p in procs}), "arrived": sum(x["arrived"] for x in doc["nodes"]),
            "findings": len(doc["findings"]), "bandwidth": doc.get("bandwidth")}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", default="3,8,32")
    ap.add_argument("--bandwidth-nodes", type=int, default=4)
    ap.add_argument("--bandwidth-size", default="32M")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fleet.json"))
    args = ap.parse_args()
    results: Dict[str, Any] = {"cpus": os.cpu_count(), "collect": []}
    for n in (int(x) for x in args.nodes.split(",")):
        r = run(n, [])
        r.pop("bandwidth")
        results["collect"].append(r)
        print(f"{n:>3} nodes: wall {r['wall_s']:.1f} s; rank 0 {r['rank0_s']:.2f} s, of which waiting for the "
              f"last node {r['gathered_s']:.2f} s and clocks + diagnosis {r['after_gather_s']:.2f} s; "
              f"{r['arrived']} arrived, exit {r['exit_codes']}", flush=True)
    if args.bandwidth_nodes:
        r = run(args.bandwidth_nodes, ["--bandwidth", "--bandwidth-size", args.bandwidth_size])
        bw = r["bandwidth"]
        results["bandwidth"] = {"nodes": args.bandwidth_nodes, "wall_s": r["wall_s"], "rank0_s": r["rank0_s"], **bw}
        print(f"bandwidth, {args.bandwidth_nodes} nodes over {bw['backend']}, {bw['message_bytes']} B messages "
              f"(rank 0 {r['rank0_s']:.1f} s); GB/s, row sends to column:")
        for name, row in zip(bw["nodes"], bw["matrix_gbps"]):
            print(f"  {name:>6} " + " ".join("     -" if v is None else f"{v:6.2f}" for v in row))
        print(f"  median capacity {bw['median_gbps']} GB/s; slow nodes {bw['slow_nodes']}; slow links {bw['slow_links']}")
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
