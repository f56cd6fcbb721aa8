"""Benchmark of `envdoctor selftest collectives` against a bare torch.distributed loop; writes
bench/results/collectives.json.

In one run, interleaved: `envdoctor selftest collectives --backend gloo --nproc 2 --json` (every collective, 1 KiB..
64 MiB) and bench/bare_collectives.py through the same launcher with the same collectives, sizes and iteration
counts (the ones envdoctor chose in that round; in rounds where the bare loop goes first, those of the round
before). Which side goes first alternates. The figure per collective is the median over rounds of ours/bare busbw at
the largest size (64 MiB). Then the same at 64 MiB alone with a fixed iteration count (--focus-iters), for a steadier
figure at that size. Target: >= 0.9 for every collective.

Usage: python bench/collectives_bench.py [--rounds N] [--focus-rounds N] [--focus-iters N]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Optional

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "collectives.json"
LARGEST = str(64 << 20)
Figures = Dict[str, Dict[str, float]]  # collective -> size -> busbw GB/s


def ours(*extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "envdoctor", "selftest", "collectives", "--backend", "gloo",
                           "--nproc", "2", "--json", *extra], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"envdoctor selftest collectives failed:\n{proc.stdout}\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)["tests"][0]["metrics"]


def bare(iters: Dict[str, Dict[str, int]]) -> Figures:
    triples = ",".join(f"{name}:{size}:{n}" for name, by_size in iters.items()
                       for size, n in sorted(by_size.items(), key=lambda kv: int(kv[0])))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bare.json"
        env = dict(os.environ, BARE_OUT=str(out))
        subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                        str(ROOT / "bench" / "bare_collectives.py"), triples], env=env, check=True,
                       capture_output=True, timeout=900)
        return json.loads(out.read_text())


def busbw_of(metrics: dict) -> Figures:
    return {n: c["busbw_gbps"] for n, c in metrics["collectives"].items() if "busbw_gbps" in c}


def iters_of(metrics: dict) -> Dict[str, Dict[str, int]]:
    return {n: c["iters"] for n, c in metrics["collectives"].items() if "iters" in c}


def paired(extra: list, rounds: int, label: str, fixed: Optional[Dict[str, Dict[str, int]]] = None) -> list:
    """Rounds of (ours, bare), alternating which goes first, so both see the same busy machine on average."""
    out, last = [], fixed
    for r in range(rounds):
        if r % 2 and last is not None:
            b = bare(last)
            m = ours(*extra)
        else:
            m = ours(*extra)
            b = bare(fixed or iters_of(m))
        last = fixed or iters_of(m)
        o = busbw_of(m)
        out.append({"envdoctor": o, "bare": b, "iters": {n: v.get(LARGEST) for n, v in iters_of(m).items()}})
        print(f"{label} round {r + 1}: " + ", ".join(f"{n} {o[n][LARGEST]:.3f}/{b[n][LARGEST]:.3f}" for n in o),
              file=sys.stderr)
    return out


def summarise(rounds: list) -> dict:
    names = list(rounds[0]["envdoctor"])
    per: dict = {}
    for n in names:
        ratios = [r["envdoctor"][n][LARGEST] / r["bare"][n][LARGEST] for r in rounds]
        per[n] = {
            "ratio_median": round(statistics.median(ratios), 3),
            "ratio_min_max": [round(min(ratios), 3), round(max(ratios), 3)],
            "busbw_envdoctor_median_gbps": round(statistics.median(r["envdoctor"][n][LARGEST] for r in rounds), 4),
            "busbw_bare_median_gbps": round(statistics.median(r["bare"][n][LARGEST] for r in rounds), 4),
            "iters_at_largest": [r["iters"].get(n) for r in rounds],
        }
    return per


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5, help="paired rounds of the default sweep (1 KiB..64 MiB)")
    ap.add_argument("--focus-rounds", type=int, default=6, help="paired rounds at 64 MiB alone (0: none)")
    ap.add_argument("--focus-iters", type=int, default=10)
    args = ap.parse_args()
    start = time.time()
    load_before = os.getloadavg()
    sweep = paired([], args.rounds, "sweep")
    result = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_average_before": [round(x, 2) for x in load_before]},
        "what": "busbw at 64 MiB, envdoctor / bare torch.distributed loop, median over paired rounds",
        "sweep": {"command": "envdoctor selftest collectives --backend gloo --nproc 2 --json", "sizes": "1 KiB..64 MiB",
                  "rounds": args.rounds, "per_collective": summarise(sweep)},
    }
    if args.focus_rounds:
        fixed = {n: {LARGEST: args.focus_iters} for n in sweep[0]["envdoctor"]}
        focused = paired(["--min-size", "64M", "--max-size", "64M", "--iters", str(args.focus_iters)],
                         args.focus_rounds, "64 MiB", fixed)
        result["focused_64MiB"] = {"iters": args.focus_iters, "rounds": args.focus_rounds,
                                   "per_collective": summarise(focused)}
    result["seconds"] = round(time.time() - start, 1)
    result["machine"]["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: {n: v["ratio_median"] for n, v in result[k]["per_collective"].items()}
                      for k in ("sweep", "focused_64MiB") if k in result}, indent=2))


if __name__ == "__main__":
    main()
