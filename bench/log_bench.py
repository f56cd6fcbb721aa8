"""Log bench: `nccl diagnose` and `diagnose` on logs made of REAL lines, at the variety of a 512-rank job.

    python bench/log_bench.py [--mixed-mb 1024] [--dense-mb 256] [--repeat 3] [--out FILE]

The lines come from the labelled NCCL corpora (`tests/nccl/corpus/*.jsonl`, dev cases only: the validation split is
never read). Their fields are varied as a real 512-rank job varies them: per-rank `host:pid:tid [local]` prefixes,
hex communicator ids and busIds, 512-rank channel / ring / tree lines, interleaved tqdm progress bars (carriage
returns) and training output. Two variants: INFO-dense (NCCL_DEBUG=INFO output, mostly connection lines) and mixed
(training output with NCCL INFO blocks); each ends with a real failure (a dev case's error lines), so the
diagnosis must read to the end. The logs are written to a temporary file, never committed.

Each measure runs in a child process (`os.wait4`: its own CPU time and peak RSS), right after `grep -c -F NCCL` on
the same file, so the ratio to grep is taken in the same minute on the same cache.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))
sys.path.insert(0, str(ROOT))

import split  # noqa: E402  (tests/corpus/split.py: dev or validation by the thread's URL)

RANKS = 512
GPUS_PER_NODE = 8
BUS_IDS = ("18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000")


def dev_lines() -> Tuple[List[str], List[str]]:
    """(the NCCL INFO lines, the other lines) of every dev case of the NCCL corpora, without their prefixes: the lines
    a job prints while it runs. A line that matches a signature (an error, a warning) is left to the failure at the
    end: a healthy job does not print its failure's trace every few seconds."""
    from envdoctor.evidence.signatures import default_signatures_dirs, load_rules

    signatures = [s.regex for s in load_rules(default_signatures_dirs()).signatures]
    info: List[str] = []
    other: List[str] = []
    for path in sorted((ROOT / "tests" / "nccl" / "corpus").glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            if not raw.strip():
                continue
            case = json.loads(raw)
            if split.split_of(case) != "dev":
                continue
            for line in str(case.get("log", "")).splitlines():
                line = line.rstrip()
                if not line or any(rx.search(line) for rx in signatures):
                    continue
                at = line.find(" NCCL INFO ")
                if at >= 0:
                    info.append(line[at + 1:])
                elif " NCCL WARN " not in line:
                    other.append(line)
    return info, other


def failures() -> List[str]:
    """The error lines of dev cases (each a real failure text), to end a log with."""
    out = []
    for path in sorted((ROOT / "tests" / "nccl" / "corpus").glob("*.jsonl")):
        for raw in path.read_text(encoding="utf-8").splitlines():
            if raw.strip():
                case = json.loads(raw)
                if split.split_of(case) == "dev" and not case.get("weak_log") and "WARN" in case.get("log", ""):
                    out.append(case["log"])
    return out


class Job:
    """The varying fields of one 512-rank job."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.hosts = [f"gpu-node-{n:04d}" for n in range(RANKS // GPUS_PER_NODE)]
        self.pids = [rng.randrange(1000, 4_000_000) for _ in range(RANKS)]
        # each rank's threads: the main one, NCCL's proxy and service threads
        self.tids = [[pid, pid + rng.randrange(1, 400), pid + rng.randrange(400, 900)] for pid in self.pids]
        self.comm = [f"0x{rng.getrandbits(64):016x}" for _ in range(64)]  # one per communicator

    def prefix(self, rank: int) -> str:
        return f"{self.hosts[rank // GPUS_PER_NODE]}:{self.pids[rank]}:{self.rng.choice(self.tids[rank])} " \
               f"[{rank % GPUS_PER_NODE}]"

    def vary(self, text: str, rank: int) -> str:
        """A corpus INFO line with its numbers and ids made those of one rank of this job (a rank prints the same
        configuration at every communicator it joins; communicator ids differ)."""
        out = []
        for tok in text.split(" "):
            if tok.startswith("0x") and len(tok) > 6:
                tok = self.rng.choice(self.comm)
            elif tok.isdigit() and len(tok) < 6:
                tok = str(zlib.crc32(f"{rank}:{tok}".encode()) % RANKS)
            out.append(tok)
        return " ".join(out)

    def channel(self, rank: int) -> str:
        c = self.rng.randrange(32)
        peer = (rank + 1) % RANKS
        via = self.rng.choice(("P2P/IPC", "P2P/CUMEM/read", "NET/IB/0/GDRDMA", "NET/Socket/1", "SHM/direct/direct"))
        return (f"{self.prefix(rank)} NCCL INFO Channel {c:02d}/{self.rng.randrange(2)} : {rank}[{rank % 8}] -> "
                f"{peer}[{peer % 8}] [send] via {via}")

    def ring_tree(self, rank: int) -> str:
        r = self.rng
        if r.random() < 0.5:
            ring = " ".join(str((rank + i) % RANKS) for i in range(r.randrange(8, 24)))
            return f"{self.prefix(rank)} NCCL INFO Channel {r.randrange(32):02d}/32 : {ring}"
        return (f"{self.prefix(rank)} NCCL INFO Trees [{r.randrange(32)}] {r.randrange(RANKS)}/{r.randrange(RANKS)}/"
                f"-1->{rank}->{r.randrange(RANKS)} [{r.randrange(32)}] -1/-1/-1->{rank}->{r.randrange(RANKS)}")

    def comm_init(self, rank: int) -> str:
        return (f"{self.prefix(rank)} NCCL INFO comm 0x{self.rng.getrandbits(48):012x} rank {rank} nRanks {RANKS} "
                f"nNodes {RANKS // 8} localRanks 8 localRank {rank % 8} MNNVL 0 commId {self.rng.choice(self.comm)} "
                f"busId {self.rng.choice(BUS_IDS)} - Init COMPLETE")

    def progress(self) -> str:
        r = self.rng
        total = r.choice((500, 1000, 2000))
        bars = []
        for step in sorted(r.sample(range(total), 6)):
            pct = step * 100 // total
            bar = "█" * (pct // 10) + " " * (10 - pct // 10)
            bars.append(f"{pct:3d}%|{bar}| {step}/{total} [{step // 60:02d}:{step % 60:02d}<01:10, {r.uniform(1, 9):.2f}it/s, "
                        f"loss={r.uniform(0.1, 3):.4f}]")
        return "\r".join(bars)

    def training(self, other: List[str]) -> str:
        r = self.rng
        if r.random() < 0.5:
            return (f"[rank{r.randrange(RANKS)}]: step {r.randrange(100000)} | loss {r.uniform(0.1, 4):.4f} | lr "
                    f"{r.uniform(1e-5, 3e-4):.2e} | grad_norm {r.uniform(0.1, 5):.3f} | tokens/s {r.randrange(10**5, 10**6)}")
        return r.choice(other) if other else "INFO:root:training"


def write_log(path: Path, size: int, dense: bool, seed: int = 0) -> int:
    """A log of about `size` bytes; returns its size."""
    rng = random.Random(seed)
    job = Job(rng)
    info, other = dev_lines()
    ends = failures()
    written = 0
    with path.open("w", encoding="utf-8") as f:
        while written < size:
            lines = []
            for _ in range(2000):
                rank = rng.randrange(RANKS)
                x = rng.random()
                # proportions of a communicator's setup per rank: a comm line, its configuration lines, then one
                # connection line per channel and peer and the ring and tree lines (mixed: between training steps)
                if dense:
                    line = job.channel(rank) if x < 0.5 else job.ring_tree(rank) if x < 0.8 else \
                        job.comm_init(rank) if x < 0.83 else f"{job.prefix(rank)} {job.vary(rng.choice(info), rank)}"
                else:
                    line = job.training(other) if x < 0.45 else job.progress() if x < 0.6 else \
                        job.channel(rank) if x < 0.78 else job.ring_tree(rank) if x < 0.9 else \
                        f"{job.prefix(rank)} {job.vary(rng.choice(info), rank)}" if x < 0.98 else job.comm_init(rank)
                lines.append(line)
            chunk = "\n".join(lines) + "\n"
            f.write(chunk)
            written += len(chunk.encode("utf-8"))
        tail = rng.choice(ends) + "\n"
        f.write(tail)
        written += len(tail.encode("utf-8"))
    return written


def child(argv: List[str], tree: Path = ROOT) -> Tuple[float, float, int, str]:
    """(CPU seconds, wall seconds, peak RSS in KiB, stdout) of one child process running envdoctor from `tree`."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=str(tree),
                         env={**os.environ, "PYTHONPATH": str(tree)})
    out = p.stdout.read() if p.stdout else b""
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - start, ru.ru_maxrss, out.decode(errors="replace")


def measure(path: Path, repeat: int, before: Optional[Path] = None) -> Dict[str, object]:
    """grep, then `nccl diagnose` and `diagnose` (and both of the `before` tree), `repeat` times."""
    size = path.stat().st_size
    mb = size / 1e6
    runs: Dict[str, List[float]] = {"grep": [], "nccl diagnose": [], "diagnose": []}
    if before is not None:
        runs["nccl diagnose (before)"] = []
        runs["diagnose (before)"] = []
    rss: Dict[str, int] = {}
    tops: Dict[str, str] = {}
    for _ in range(repeat):
        nccl = [sys.executable, "-m", "envdoctor", "nccl", "diagnose", "--json", str(path)]
        todo = [("grep", ["grep", "-c", "-F", "NCCL", str(path)], ROOT), ("nccl diagnose", nccl, ROOT),
                ("diagnose", [sys.executable, "-m", "envdoctor", "diagnose", "--json", str(path)], ROOT)]
        if before is not None:
            todo.append(("nccl diagnose (before)", nccl, before))
            todo.append(("diagnose (before)", todo[2][1], before))
        for name, argv, tree in todo:
            cpu, _wall, peak, out = child(argv, tree)
            runs[name].append(cpu)
            rss[name] = max(rss.get(name, 0), peak)
            if name != "grep":
                try:
                    doc = json.loads(out)
                    tops[name] = doc["findings"][0]["category"] if doc["findings"] else "(none)"
                except (ValueError, KeyError, IndexError):
                    tops[name] = "(no document)"
    out: Dict[str, object] = {"bytes": size}
    for name, cpus in runs.items():
        best = min(cpus)
        out[name] = {"cpu_s_best": round(best, 3), "cpu_s_median": round(statistics.median(cpus), 3),
                     "mb_per_cpu_s": round(mb / best, 1) if best else None, "peak_rss_mib": round(rss[name] / 1024, 1),
                     **({"top_cause": tops.get(name)} if name != "grep" else {})}
    g = min(runs["grep"]) or 1e-9
    out["times_grep"] = {name: round(min(runs[name]) / g, 1) for name in runs if name != "grep"}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mixed-mb", type=int, default=1024, help="size of the mixed log (MiB)")
    ap.add_argument("--dense-mb", type=int, default=256, help="size of the INFO-dense log (MiB)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", help="write the results (JSON) here")
    ap.add_argument("--before", metavar="TREE",
                    help="also run `nccl diagnose` and `diagnose` from this source tree (an older commit)")
    args = ap.parse_args()
    results: Dict[str, object] = {"ranks": RANKS}
    with tempfile.TemporaryDirectory(prefix="envdoctor-log-bench-") as tmp:
        for name, mib, dense in (("mixed", args.mixed_mb, False), ("info_dense", args.dense_mb, True)):
            if mib <= 0:
                continue
            path = Path(tmp) / f"{name}.log"
            write_log(path, mib << 20, dense)
            results[name] = measure(path, args.repeat, Path(args.before) if args.before else None)
            path.unlink()
            r = results[name]
            print(f"{name} ({r['bytes'] / 2**20:.0f} MiB): " + "; ".join(
                f"{k} {r[k]['mb_per_cpu_s']} MB/s CPU, peak RSS {r[k]['peak_rss_mib']} MiB"
                + (f", top {r[k]['top_cause']}" if "top_cause" in r[k] else "")
                for k in r if isinstance(r[k], dict) and "peak_rss_mib" in r[k]) + f"; x grep: {r['times_grep']}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
