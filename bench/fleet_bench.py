"""Fleet at cluster size, each figure side by side with its floor measured in the same run.

files (issue 29.1): `envdoctor fleet nodeNNNNN.json...` on 1,024, 4,096 and 16,384 simulated nodes
(bench/fleet_nodes.py: the recorded 8xH100 snapshot with real variety and one odd node), against the floor:
`json.load` of the same files in one Python process. Both run as fresh processes, alternately, `--repeat`
times; the medians of wall and CPU (user+sys) time are kept, and their ratio.

store (issue 29.3): `fleet collect` of 1,024 and 4,096 nodes in one process (bench/fleet_sim.py: rank 0 runs
the real collect and hosts one TCPStore, every other node is a thread with its own client), flat (every node
to rank 0; flat against by groups is `python bench/fleet_sim.py`). Per size, in a child process: the gather
(rank 0's start to the last snapshot in: here mostly the threads starting), of which rank 0 reading every
message once all are in, the clock phase, the diagnosis, rank 0's memory for what it gathered (tracemalloc of
the payloads parsed), the bytes gathered, and the process's peak RSS (all clients included).

check (issue 29.5): `envdoctor check --snapshot F` against `python -c "import json"`, fresh processes, medians.

    python bench/fleet_bench.py [--sections files,store,check] [--files 1024,4096,16384] [--store 1024,4096]
        [--code DIR (the envdoctor tree to measure; default this one)] [--out bench/results/fleet_scale.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json"
sys.path.insert(0, str(ROOT / "bench"))

FLOOR = "import json, sys\nfor f in sys.argv[1:]:\n    with open(f) as h:\n        json.load(h)\n"


def timed(argv: List[str], env: Dict[str, str]) -> Dict[str, float]:
    """One fresh process: wall and CPU (user + sys) seconds, and its exit code."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # cwd outside any tree: `python -m envdoctor` puts the cwd first on sys.path, ahead of PYTHONPATH
    p = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "rc": p.returncode, "lines": len(p.stdout.splitlines()), "stderr": p.stderr[-300:]}


def medians(runs: List[Dict[str, float]]) -> Dict[str, float]:
    return {k: round(statistics.median(r[k] for r in runs), 3) for k in ("wall", "cpu")}


def side_by_side(a: List[str], b: List[str], env: Dict[str, str], repeat: int) -> Dict[str, Any]:
    """a against its floor b, alternately."""
    ra, rb = [], []
    for _ in range(repeat):
        rb.append(timed(b, env))
        ra.append(timed(a, env))
    ma, mb = medians(ra), medians(rb)
    return {"run": ma, "floor": mb, "ratio_wall": round(ma["wall"] / mb["wall"], 2),
            "ratio_cpu": round(ma["cpu"] / mb["cpu"], 2), "rc": ra[-1]["rc"], "lines": ra[-1]["lines"],
            "stderr": ra[-1]["stderr"] if ra[-1]["rc"] not in (0, 1) else ""}


def files_section(sizes: List[int], env: Dict[str, str], repeat: int, where: Path) -> List[Dict[str, Any]]:
    from fleet_nodes import write_nodes

    out = []
    for n in sizes:
        d = where / f"nodes{n}"
        paths = sorted(str(p) for p in d.glob("*.json")) if d.is_dir() else []
        if len(paths) != n:
            paths = [str(p) for p in write_nodes(n, d)]
        r = side_by_side([sys.executable, "-m", "envdoctor", "fleet", *paths], [sys.executable, "-c", FLOOR, *paths],
                         env, repeat)
        r["nodes"] = n
        out.append(r)
        print(f"fleet {n:>6} nodes: wall {r['run']['wall']:.2f} s vs json.load floor {r['floor']['wall']:.2f} s "
              f"= {r['ratio_wall']:.2f}x (CPU {r['run']['cpu']:.2f} / {r['floor']['cpu']:.2f} s = {r['ratio_cpu']:.2f}x); "
              f"exit {r['rc']}, {r['lines']} lines {r['stderr']}", flush=True)
    return out


def check_section(env: Dict[str, str], repeat: int) -> Dict[str, Any]:
    r = side_by_side([sys.executable, "-m", "envdoctor", "check", "--snapshot", str(SNAPSHOT)],
                     [sys.executable, "-c", "import json"], env, repeat)
    r2 = side_by_side([sys.executable, "-m", "envdoctor", "check", "--snapshot", str(SNAPSHOT)],
                      [sys.executable, "-c", "pass"], env, 1)
    r["floor_pass_wall"] = r2["floor"]["wall"]
    print(f"check --snapshot: wall {r['run']['wall']:.3f} s vs `python -c 'import json'` {r['floor']['wall']:.3f} s "
          f"= {r['ratio_wall']:.2f}x (CPU {r['run']['cpu']:.3f} / {r['floor']['cpu']:.3f} s); exit {r['rc']}", flush=True)
    return r


def store_one(n: int) -> Dict[str, Any]:
    """In this process: collect n simulated nodes against one TCPStore (run as a child of the bench)."""
    import tracemalloc

    from fleet_sim import collect_simulated, messages

    from envdoctor.fleet.gather import Gather

    raw = messages(n)
    out, diagnose_s = collect_simulated(n, raw, Gather("flat"))
    got = out.collected
    tracemalloc.start()
    held = {r: json.loads(raw[r]) for r in range(n)}
    rank0_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del held
    fails = {r: c for r, c in out.follower_codes.items() if c != 0}
    return {"nodes": n, "arrived": len(got.payloads) if got else 0, "bad": len(got.bad) if got else None,
            "gathered_s": round(got.gathered, 2) if got else None,
            "rank0_read_s": round(got.read_s, 2) if got else None,
            "clocks_s": round(got.seconds - got.gathered, 2) if got else None,
            "diagnose_s": round(diagnose_s, 2), "total_s": round(out.seconds, 2),
            "gathered_mb": round(sum(len(v) for v in raw.values()) / 1e6, 1),
            "rank0_payload_mb": round(rank0_bytes / 1e6, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "failed_followers": len(fails), "first_failure": next(iter(fails.values()), None)}


def store_section(sizes: List[int], env: Dict[str, str]) -> List[Dict[str, Any]]:
    out = []
    for n in sizes:
        p = subprocess.run([sys.executable, __file__, "--store-one", str(n)], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=1800)
        lines = p.stdout.strip().splitlines()
        r = json.loads(lines[-1]) if lines else {"nodes": n, "error": f"exit {p.returncode}"}
        out.append(r)
        print(f"collect {n:>5} nodes, one TCPStore: {json.dumps(r)}", flush=True)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sections", default="files,store,check")
    ap.add_argument("--files", default="1024,4096,16384")
    ap.add_argument("--store", default="1024,4096")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--code", default=str(ROOT), help="the envdoctor tree measured (PYTHONPATH); the nodes and "
                                                      "the simulation come from this one")
    ap.add_argument("--nodes-dir", default=None, help="where the node files are written (kept between runs)")
    ap.add_argument("--store-one", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fleet_scale.json"))
    args = ap.parse_args()
    if args.store_one is not None:
        print(json.dumps(store_one(args.store_one)))
        return 0
    where = Path(args.nodes_dir or Path(tempfile.gettempdir()) / "envdoctor-fleet-bench")
    # as installed: bytecode compiled once (pip does at install), kept outside the tree measured
    env = dict(os.environ, PYTHONPATH=str(Path(args.code).resolve()), PYTHONPYCACHEPREFIX=str(where / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "envdoctor", "check", "--snapshot", str(SNAPSHOT)], env=env,
                   capture_output=True, cwd=tempfile.gettempdir())
    sections = args.sections.split(",")
    code = Path(args.code).resolve()
    shown = "." if code == ROOT else f"another tree ({code.name})"  # no machine's paths in a committed result
    results: Dict[str, Any] = {"cpus": os.cpu_count(), "code": shown, "repeat": args.repeat,
                               "load_avg_at_start": os.getloadavg()[0]}
    if "files" in sections:
        results["files"] = files_section([int(x) for x in args.files.split(",")], env, args.repeat, where)
    if "check" in sections:
        results["check"] = check_section(env, max(args.repeat, 7))
    if "store" in sections:
        results["store"] = store_section([int(x) for x in args.store.split(",")], env)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
