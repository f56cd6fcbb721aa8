"""Benchmark of `envdoctor selftest`, in one run; writes bench/results/selftest.json.

1. all-reduce: envdoctor's busbw (gloo, 2 ranks, 1 KiB..64 MiB) against a bare torch.distributed loop run
   through the same launcher with the same sizes and iteration counts; rounds alternate, medians compared.
   Target: envdoctor / bare >= 0.9 at 16 MiB (its measurement adds nothing to the timed loop).
   Then the same at 16 MiB alone (30 iterations, rounds + 2 rounds), less exposed to a busy machine.
2. backward: the non-scalar backward's speed-up over the per-sample loop (batch 8 and 16).

Usage: python bench/selftest_bench.py [--rounds N]
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

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "selftest.json"
SIZE_16M = str(16 << 20)


def envdoctor(*args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "envdoctor", "selftest", *args, "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise SystemExit(f"envdoctor selftest {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(proc.stdout)["tests"][0]


def bare(iters: dict) -> dict:
    pairs = ",".join(f"{s}:{n}" for s, n in sorted(iters.items(), key=lambda kv: int(kv[0])))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bare.json"
        env = dict(os.environ, BARE_OUT=str(out))
        subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                        str(ROOT / "bench" / "bare_allreduce.py"), pairs], env=env, check=True, capture_output=True,
                       timeout=900)
        return json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    start = time.time()
    ours, theirs, iters = [], [], []
    for r in range(args.rounds):
        t = envdoctor("allreduce", "--nproc", "2", "--backend", "gloo")
        iters.append(t["metrics"]["iters"])  # the bare loop repeats this round's sizes and iteration counts
        ours.append(t["metrics"]["busbw_gbps"])
        theirs.append(bare(iters[-1]))
        print(f"round {r + 1}: 16 MiB envdoctor {ours[-1][SIZE_16M]:.3f} GB/s, bare {theirs[-1][SIZE_16M]:.3f} GB/s",
              file=sys.stderr)
    # the same comparison at 16 MiB alone, 30 iterations, more rounds: less exposed to a busy machine
    focused = []
    for r in range(args.rounds + 2):
        t = envdoctor("allreduce", "--nproc", "2", "--backend", "gloo", "--min-size", "16M", "--max-size", "16M",
                      "--iters", "30")
        focused.append({"envdoctor": t["metrics"]["busbw_gbps"][SIZE_16M], "bare": bare({SIZE_16M: 30})[SIZE_16M]})
        print(f"focused round {r + 1}: envdoctor {focused[-1]['envdoctor']:.3f}, bare {focused[-1]['bare']:.3f} GB/s",
              file=sys.stderr)
    f_ours = statistics.median(f["envdoctor"] for f in focused)
    f_bare = statistics.median(f["bare"] for f in focused)
    sizes = sorted(ours[0], key=int)
    med_ours = {s: statistics.median(o[s] for o in ours) for s in sizes}
    med_bare = {s: statistics.median(b[s] for b in theirs) for s in sizes}
    backward = {}
    for batch in (8, 16):
        m = envdoctor("backward", "--batch", str(batch), "--repeats", "9", "--no-deepspeed")["metrics"]
        backward[str(batch)] = {k: m[k] for k in ("looped_seconds", "batched_seconds", "speedup", "max_rel_grad_diff",
                                                  "looped_peak_bytes", "batched_peak_bytes", "memory_method", "parameters")}
        print(f"backward batch {batch}: x{m['speedup']:.2f}", file=sys.stderr)
    result = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "loadavg_at_end": os.getloadavg()},
        "allreduce": {
            "backend": "gloo", "world_size": 2, "rounds": args.rounds, "iters_per_round": iters,
            "busbw_gbps_envdoctor_median": {s: round(v, 4) for s, v in med_ours.items()},
            "busbw_gbps_bare_median": {s: round(v, 4) for s, v in med_bare.items()},
            "ratio_at_16MiB": round(med_ours[SIZE_16M] / med_bare[SIZE_16M], 3),
            "ratio_per_size": {s: round(med_ours[s] / med_bare[s], 3) for s in sizes},
            "rounds_16MiB": [{"envdoctor": round(o[SIZE_16M], 4), "bare": round(b[SIZE_16M], 4)} for o, b in zip(ours, theirs)],
        },
        "allreduce_16MiB_focused": {
            "iters": 30, "rounds": [{k: round(v, 4) for k, v in f.items()} for f in focused],
            "busbw_gbps_envdoctor_median": round(f_ours, 4), "busbw_gbps_bare_median": round(f_bare, 4),
            "ratio": round(f_ours / f_bare, 3),
        },
        "backward": backward,
        "seconds": round(time.time() - start, 1),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({"ratio_at_16MiB": result["allreduce"]["ratio_at_16MiB"],
                      "ratio_at_16MiB_focused": result["allreduce_16MiB_focused"]["ratio"],
                      "backward_speedup": {b: v["speedup"] for b, v in backward.items()}}, indent=2))


if __name__ == "__main__":
    main()
