"""Scrubbing throughput: `scrub_secrets` and `scrub_identity` over hostile and ordinary text, in MB/s.

Each input is also passed once through `str.replace` in the same run (the anchor): the ratio
scrub / anchor says how the scrubber compares with a plain linear pass on this machine, today.

Usage: python bench/redact_bench.py [--scale 1.0] [--no-write]  -> prints figures, writes bench/results/redact.json
"""

from __future__ import annotations

import argparse
import base64
import json
import platform
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envdoctor.redact import scrub_identity, scrub_secrets  # noqa: E402


def inputs(scale: float) -> Dict[str, str]:
    rng = random.Random(11)
    alnum = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(int(100_000 * scale)))
    lines = []
    size = 0
    while size < 3_000_000 * scale:
        blob = base64.b64encode(rng.randbytes(rng.randint(200, 3000))).decode()
        line = f"node-3:1234:1234 [0] NCCL INFO payload={blob}" if rng.random() < 0.5 else blob
        lines.append(line)
        size += len(line) + 1
    ordinary = ("NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.1.2.3<0>\n"
                "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345 PIP_INDEX_URL=https://bob:pw@pypi.example/simple\n"
                "torch 2.9.1+cu128 at /home/alice/venv/lib/python3.12/site-packages/torch/__init__.py\n") * int(10_000 * scale)
    return {"alnum_100k": alnum, "base64_log_3m": "\n".join(lines), "ordinary_log": ordinary}


def mb_per_s(fn: Callable[[str], str], text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(text)
        best = min(best, time.perf_counter() - t)
    return len(text.encode()) / 1e6 / max(best, 1e-9)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="input size factor (the old quadratic code needs ~0.05)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    result: Dict[str, object] = {
        "machine": f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}",
        "revision": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                   text=True).stdout.strip(),
        "scale": args.scale,
    }
    for name, text in inputs(args.scale).items():
        anchor = mb_per_s(lambda s: s.replace("a", "A"), text, 5)
        secrets = mb_per_s(scrub_secrets, text, 3)
        identity = mb_per_s(lambda s: scrub_identity(s, ["node-3", "vm"], ["alice"]), text, 3)
        result[name] = {"bytes": len(text), "secrets_mb_s": round(secrets, 2), "identity_mb_s": round(identity, 2),
                        "anchor_str_replace_mb_s": round(anchor, 1),
                        "secrets_vs_anchor": round(secrets / anchor, 5), "identity_vs_anchor": round(identity / anchor, 5)}
        print(f"{name:<15} {len(text) / 1e6:6.2f} MB  secrets {secrets:8.2f} MB/s  identity {identity:8.2f} MB/s  "
              f"anchor str.replace {anchor:8.1f} MB/s  ratio {secrets / anchor:.5f} / {identity / anchor:.5f}")
    if not args.no_write:
        out = ROOT / "bench" / "results" / "redact.json"
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
