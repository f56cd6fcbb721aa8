"""NCCL diagnosis bench: accuracy on the labelled dev corpus, throughput and memory on a generated log.

    python bench/nccl_bench.py [--size-mb 256] [--dense-mb 100] [--memory-mb 2048] [--corpus PATH]
                               [--out bench/results/nccl.json]

Accuracy: top-1 / top-3 over the labelled corpora `tests/nccl/corpus/*.jsonl` (each file and all together, by
category), also without the `weak_log` entries (threads with no raw log). Throughput: a generated log (training
output with NCCL INFO blocks, warnings, tracebacks, binary garbage and over-long lines, and a failure at the end) is written to a
temporary file and diagnosed in a child process (so its peak RSS is the diagnosis alone), then again under
tracemalloc for the peak of Python allocations. A second, NCCL_DEBUG=INFO-dense log gives the worst case.
Each throughput is measured --repeat times, each run right after `grep -c -F NCCL` on the same file: the
best and the median MB/s (wall-clock and CPU), and our time over grep's run by run (how many times slower
than grep); this machine's speed drifts by tens of percent within minutes, so no figure stands alone. A third log
of --memory-mb MiB gives the peak RSS (ru_maxrss of the child) on a large input.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any, Dict, List, Tuple

from compiled import byte_compile_envdoctor  # bench/, beside the script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envdoctor.nccl import diagnose_paths, diagnose_text  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "corpus"))
from split import DEV, VALIDATION, split_of  # noqa: E402

CORPUS_DIR = ROOT / "tests" / "nccl" / "corpus"


def _shown(path: Path) -> str:
    """A path inside the repository as relative to its root (results stay comparable across checkouts)."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _score(sel: List[Dict[str, Any]]) -> Dict[str, Any]:
    n = len(sel)
    return {"n": n, "top1": round(sum(r["top1"] for r in sel) / n, 4) if n else None,
            "top3": round(sum(r["top3"] for r in sel) / n, 4) if n else None}


def _named_by() -> Dict[str, set]:
    """mechanism slug -> the NCCL categories whose signatures name it (tests/corpus/mechanisms.json): a survey log
    labelled with a mechanism's slug is right when envdoctor names that mechanism by its own category."""
    table = json.loads((ROOT / "tests" / "corpus" / "mechanisms.json").read_text(encoding="utf-8"))
    return {slug: {rule[len("NCCL-"):].lower().replace("-", "_") for rule in entry.get("envdoctor", ())
                   if rule.startswith("NCCL-")} for slug, entry in table.items()}


def accuracy(corpora: List[Path]) -> Dict[str, Any]:
    rows: List[Dict[str, Any]] = []
    named_by = _named_by()
    for corpus in corpora:
        for line in corpus.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            report = diagnose_text(case.get("log", ""))
            cats = [f.category for f in report.findings]
            conf = report.findings[0].confidence if report.findings else "none"
            right = {case["category"]} | named_by.get(case["category"], set())
            rows.append({"id": case["id"], "file": corpus.name, "expected": case["category"], "got": cats[:3],
                         "confidence": conf,
                         "top1": bool(cats) and cats[0] in right, "top3": bool(right & set(cats[:3])),
                         "weak_log": bool(case.get("weak_log")), "misleading_log": bool(case.get("misleading_log")),
                         "split": split_of(case)})
    categories = sorted({r["expected"] for r in rows if r["split"] == DEV})
    return {
        "corpus": [_shown(c) for c in corpora],
        "all": _score(rows),
        "by_file": {c.name: _score([r for r in rows if r["file"] == c.name]) for c in corpora},
        "excluding_weak_log": _score([r for r in rows if not r["weak_log"]]),
        "misleading_only": _score([r for r in rows if r["misleading_log"]]),
        # dev only: a category's validation figure would say which validation cases fail
        "by_category": {c: _score([r for r in rows if r["expected"] == c and r["split"] == DEV]) for c in categories},
        # tuned on dev only; validation is what a closing note quotes (tests/corpus/split.py)
        "by_split": {side: _score([r for r in rows if r["split"] == side]) for side in (DEV, VALIDATION)},
        # how often the top cause was right at each confidence it was given: the calibration, per side
        "calibration": {side: calibration([r for r in rows if r["split"] == side]) for side in (DEV, VALIDATION)},
        # only dev misses are named: validation is measured, never read case by case (tests/corpus/split.py)
        "misses": [r for r in rows if not r["top1"] and r["split"] == DEV],
        "validation_misses": sum(1 for r in rows if not r["top1"] and r["split"] == VALIDATION),
    }


CONFIDENCES = ("high", "medium", "low", "none")


def calibration(sel: List[Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """Per confidence of the top finding ("none": nothing found): how many cases, and how often it was right."""
    out = {}
    for level in CONFIDENCES:
        at = [r for r in sel if r["confidence"] == level]
        right = sum(r["top1"] for r in at)
        out[level] = {"n": len(at), "right": right, "precision": round(right / len(at), 4) if at else None}
    return out


RANKS, PER_NODE = 512, 8  # the job whose NCCL_DEBUG=INFO output the generated logs carry


def info_block(rank: int, channels: int = 32) -> List[str]:
    """What one rank of a 512-rank job prints at NCCL_DEBUG=INFO while its communicator starts (NCCL 2.21)."""
    node, dev = divmod(rank, PER_NODE)
    host, pid = f"gpu-node-{node:03d}", 40000 + rank
    pre, tpre = f"{host}:{pid}:{pid} [{dev}] NCCL INFO ", f"{host}:{pid}:{pid + 731} [{dev}] NCCL INFO "
    nxt, prv = (rank + 1) % RANKS, (rank - 1) % RANKS
    peer = (rank + PER_NODE) % RANKS
    out = [pre + "cudaDriverVersion 12040",
           pre + f"Bootstrap : Using eth0:10.1.{node}.{dev + 10}<0>",
           pre + "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory "
                 "No plugin found (libnccl-net.so), using internal implementation",
           tpre + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; "
                  f"OOB eth0:10.1.{node}.{dev + 10}<0>",
           tpre + "Using non-device net plugin version 0",
           tpre + "Using network IB",
           tpre + f"comm 0x55d3a{rank:04x} rank {rank} nranks {RANKS} cudaDev {dev} nvmlDev {dev} busId {dev + 1}8000 "
                  "commId 0x7f1c2d3e4f5a6b7c - Init START",
           tpre + f"Setting affinity for GPU {dev} to ffffff,ffffff000000",
           tpre + f"NVLS multicast support is not available on dev {dev}",
           tpre + f"comm 0x55d3a{rank:04x} rank {rank} nRanks {RANKS} nNodes {RANKS // PER_NODE} localRanks {PER_NODE} "
                  f"localRank {dev} MNNVL 0",
           tpre + "Trees " + " ".join(f"[{c}] {nxt}/-1/-1->{rank}->{prv}" for c in range(channels // 2)),
           tpre + "P2P Chunksize set to 131072"]
    if rank == 0:
        out.insert(0, pre + "NCCL version 2.21.5+cuda12.4")
    for c in range(channels):
        if dev == PER_NODE - 1 or dev == 0:
            other = peer if dev == PER_NODE - 1 else (rank - PER_NODE) % RANKS
            side = "send" if dev == PER_NODE - 1 else "receive"
            out.append(tpre + f"Channel {c:02d}/0 : {rank}[{dev}] -> {other}[{other % PER_NODE}] [{side}] "
                              f"via NET/IB/{c % 4}/GDRDMA")
        out.append(tpre + f"Channel {c:02d}/0 : {rank}[{dev}] -> {nxt}[{nxt % PER_NODE}] via P2P/IPC/read")
        out.append(tpre + f"Channel {c:02d}/0 : {prv}[{prv % PER_NODE}] -> {rank}[{dev}] via P2P/IPC/read")
    out += [tpre + "Connected all rings", tpre + "Connected all trees",
            tpre + "threadThresholds 8/8/64 | 4096/8/64 | 512 | 512",
            tpre + f"{channels} coll channels, {channels} collnet channels, 0 nvls channels, {channels} p2p channels, "
                   f"{channels} p2p channels per peer",
            tpre + f"ncclCommInitRank comm 0x55d3a{rank:04x} rank {rank} nranks {RANKS} cudaDev {dev} nvmlDev {dev} "
                   f"busId {dev + 1}8000 commId 0x7f1c2d3e4f5a6b7c - Init COMPLETE"]
    return out


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/opt/app/data.py", line 88, in __getitem__',
    "    sample = self.decode(path)",
    "PIL.UnidentifiedImageError: cannot identify image file '/data/shard-0042/img_{i}.jpg'",
]
TAIL = ("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
        "[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=4411, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600047 ms\n")


def write_log(path: Path, size: int, dense: bool = False, seed: int = 0) -> int:
    """Write a generated log of about `size` bytes; returns the bytes written.

    dense: every line is an NCCL INFO line of the 512-rank job (the ranks' start-up blocks, one after
    another, as a job launched with NCCL_DEBUG=INFO writes them). Otherwise training output (progress,
    tracebacks, warnings, binary garbage, over-long lines) with the job's INFO blocks on about 4% of the
    lines. Both end in a failure.
    """
    rnd = random.Random(seed)
    written = 0
    info: List[str] = []
    rank = 0
    with open(path, "wb", buffering=1 << 20) as f:
        i = 0
        while written < size:
            parts: List[str] = []
            for _ in range(2000):
                i += 1
                roll = rnd.random()
                if dense or roll < 0.04:
                    if not info:
                        info = info_block(rank)[::-1]
                        rank = (rank + 1) % RANKS
                    parts.append(info.pop())
                elif roll < 0.85:
                    parts.append(f"[2026-01-01 10:{(i // 60) % 60:02d}:{i % 60:02d}] INFO train.py:211 epoch {i // 100000} "
                                 f"step {i} loss {2 + rnd.random():.4f} lr 3.0e-4 grad_norm {rnd.random():.3f} "
                                 f"tokens/s {rnd.randint(90000, 120000)}")
                elif roll < 0.95:
                    parts.append(f"{i:>6}/{10**6} [{'#' * (i % 40):<40}] {i % 100}% it/s {rnd.random() * 10:.2f}")
                elif roll < 0.985:
                    parts.append(TRACEBACK[i % len(TRACEBACK)].format(i=i))
                elif roll < 0.995:
                    parts.append("/usr/lib/python3/site-packages/torch/utils/data/dataloader.py:557: UserWarning: "
                                 "This DataLoader will create 16 worker processes in total.")
                elif roll < 0.999:
                    parts.append("".join(chr(rnd.randint(0x20, 0x2FF)) for _ in range(120)))
                else:
                    parts.append("z" * rnd.randint(10_000, 200_000))
            data = ("\n".join(parts) + "\n").encode("utf-8", errors="replace")
            if not dense and i % 40000 < 2000:
                data += bytes(rnd.getrandbits(8) for _ in range(512)) + b"\n"  # binary garbage
            f.write(data)
            written += len(data)
        f.write(TAIL.encode())
        written += len(TAIL)
    return written


def child(path: str, traced: bool) -> None:
    """Diagnose one file; print timing and memory as JSON (run in a fresh process)."""
    if traced:
        tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    report = diagnose_paths([path])
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    out: Dict[str, Any] = {"seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3), "bytes": os.path.getsize(path),
                           "findings": [f.category for f in report.findings],
                           "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    if traced:
        out["tracemalloc_peak_mib"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 2)
        tracemalloc.stop()
    print(json.dumps(out))


def measure(path: Path, traced: bool) -> Dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", str(path)] + (["--traced"] if traced else [])
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    out = json.loads(res.stdout)
    out["mb_per_s"] = round(out["bytes"] / 1e6 / out["seconds"], 1)
    out["cpu_mb_per_s"] = round(out["bytes"] / 1e6 / max(out["cpu_seconds"], 1e-9), 1)
    return out


def grep_once(path: Path) -> Dict[str, Any]:
    """`grep -c -F NCCL` on the file (after a read to warm the page cache, as the diagnosis had it)."""
    grep = shutil.which("grep")
    if grep is None:
        return {}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([grep, "-c", "-F", "NCCL", str(path)], capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": round(wall, 4), "cpu_seconds": round(cpu, 4), "matches": int(res.stdout.strip() or 0)}


def interleaved(path: Path, repeat: int) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """The diagnosis and grep, one after the other, `repeat` times: this machine's speed drifts by tens of
    percent within minutes, so each figure is read beside its anchor, and the best and the median are kept."""
    ours, greps = [], []
    for _ in range(repeat):
        greps.append(grep_once(path))
        ours.append(measure(path, traced=False))
    return ours, greps


def _stat(values: List[float], best) -> Dict[str, float]:
    return {"best": round(best(values), 4), "median": round(statistics.median(values), 4)}


def baseline_rss() -> float:
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import envdoctor.nccl as n; n.load_rules(); "
            "import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    cmd = [sys.executable, "-c", code]
    return round(float(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout), 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=256)
    ap.add_argument("--dense-mb", type=int, default=100)
    ap.add_argument("--corpus", action="append", help="a labelled corpus file (repeatable; default: every "
                    "tests/nccl/corpus/*.jsonl)")
    ap.add_argument("--accuracy-only", action="store_true", help="measure accuracy only (no throughput run)")
    ap.add_argument("--memory-mb", type=int, default=2048, help="size of the log for peak memory (0: skip)")
    ap.add_argument("--out", help="where the JSON result goes (default bench/results/nccl.json; with "
                    "--accuracy-only only when given)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of each throughput measure, interleaved with grep")
    ap.add_argument("--child")
    ap.add_argument("--traced", action="store_true")
    args = ap.parse_args()
    byte_compile_envdoctor()
    if args.child:
        child(args.child, args.traced)
        return 0

    result: Dict[str, Any] = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                                          "platform": platform.platform()}}
    corpora = [Path(c) for c in args.corpus] if args.corpus else sorted(CORPUS_DIR.glob("*.jsonl"))
    acc = accuracy(corpora)
    result["accuracy"] = acc
    a, w = acc["all"], acc["excluding_weak_log"]
    print(f"accuracy ({a['n']} cases): top-1 {a['top1']:.1%}, top-3 {a['top3']:.1%}; "
          f"without weak_log ({w['n']}): top-1 {w['top1']:.1%}, top-3 {w['top3']:.1%}")
    for side, sc in acc["by_split"].items():
        print(f"  {side} ({sc['n']}): top-1 {sc['top1']:.1%}, top-3 {sc['top3']:.1%}")
    for side, levels in acc["calibration"].items():
        said = ", ".join(f"{lv} {c['right']}/{c['n']}" + (f" ({c['precision']:.0%} right)" if c["n"] else "")
                         for lv, c in levels.items() if c["n"])
        print(f"  {side} top cause right, by its confidence: {said}")
    for name, sc in acc["by_file"].items():
        print(f"  {name} ({sc['n']}): top-1 {sc['top1']:.1%}, top-3 {sc['top3']:.1%}")
    for cat, sc in acc["by_category"].items():
        print(f"  {cat:<28} {sc['n']:>3}  top-1 {sc['top1']:.0%}  top-3 {sc['top3']:.0%}")
    for miss in acc["misses"]:
        print(f"  miss {miss['id']} ({miss['split']}): expected {miss['expected']}, got {miss['got']}")
    print(f"  validation misses: {acc['validation_misses']} (not named)")
    if args.accuracy_only:
        if args.out:  # the accuracy alone, never over the full default result file
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        return 0

    result["baseline_rss_mib"] = baseline_rss()
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, mb, dense in (("mixed", args.size_mb, False), ("info_dense", args.dense_mb, True)):
            if mb <= 0:
                continue
            path = Path(tmp) / f"{name}.log"
            t0 = time.perf_counter()
            size = write_log(path, mb * 2**20, dense=dense)
            gen = time.perf_counter() - t0
            ours, greps = interleaved(path, args.repeat)
            traced = measure(path, traced=True)
            plain = min(ours, key=lambda r: r["seconds"])
            mbs = [r["mb_per_s"] for r in ours]
            cpu_mbs = [r["cpu_mb_per_s"] for r in ours]
            paired = [r["seconds"] / g["seconds"] for r, g in zip(ours, greps) if g.get("seconds")]
            paired_cpu = [r["cpu_seconds"] / g["cpu_seconds"] for r, g in zip(ours, greps) if g.get("cpu_seconds")]
            grep = min(greps, key=lambda g: g.get("seconds", 0)) if greps and greps[0] else {}
            runs[name] = {"size_mib": round(size / 2**20, 1), "generate_seconds": round(gen, 1), **plain,
                          "repeat": args.repeat, "mb_per_s_runs": mbs, "mb_per_s_stats": _stat(mbs, max),
                          "cpu_mb_per_s_stats": _stat(cpu_mbs, max),
                          "tracemalloc_peak_mib": traced["tracemalloc_peak_mib"],
                          "traced_seconds": traced["seconds"], "grep": grep,
                          "times_grep": round(plain["seconds"] / grep["seconds"], 1) if grep.get("seconds") else None,
                          "times_grep_paired": _stat(paired, min) if paired else None,
                          "times_grep_cpu_paired": _stat(paired_cpu, min) if paired_cpu else None,
                          "load_average": round(os.getloadavg()[0], 1)}
            pair = runs[name]["times_grep_paired"] or {}
            print(f"{name}: {size / 2**20:.0f} MiB, {args.repeat} runs: best {max(mbs)} MB/s, median "
                  f"{statistics.median(mbs):.1f} MB/s (CPU best {max(cpu_mbs)}, median {statistics.median(cpu_mbs):.1f}); "
                  f"grep -c -F NCCL best {grep.get('seconds')}s; our time / grep's, run by run: best "
                  f"{pair.get('best', 0):.1f}x, median {pair.get('median', 0):.1f}x (CPU: median "
                  f"{(runs[name]['times_grep_cpu_paired'] or {}).get('median', 0):.1f}x); "
                  f"load average {runs[name]['load_average']}; "
                  f"peak RSS {plain['peak_rss_mib']} MiB (baseline {result['baseline_rss_mib']} MiB); "
                  f"tracemalloc peak {traced['tracemalloc_peak_mib']} MiB; findings {plain['findings'][:2]}")
            path.unlink()
        if args.memory_mb > 0:
            path = Path(tmp) / "large.log"
            size = write_log(path, args.memory_mb * 2**20)
            big = measure(path, traced=False)
            runs["large"] = {"size_mib": round(size / 2**20, 1), **big}
            print(f"large: {size / 2**20:.0f} MiB in {big['seconds']:.1f}s = {big['mb_per_s']} MB/s "
                  f"(CPU {big['cpu_mb_per_s']} MB/s); peak RSS {big['peak_rss_mib']} MiB")
            path.unlink()
    result["throughput"] = runs
    out = Path(args.out or ROOT / "bench" / "results" / "nccl.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
