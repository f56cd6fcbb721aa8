"""Planner latency over the table-test grid, and `fix --dry-run --snapshot` end to end.

Usage: python bench/plan_bench.py  -> prints figures, writes bench/results/plan.json
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envdoctor.wheels.index import bundled_path, load_index, read_index  # noqa: E402
from envdoctor.wheels.planner import GpuFact, MachineFacts, Wishes, plan  # noqa: E402

GPUS = {"P100": "6.0", "V100": "7.0", "T4": "7.5", "A100": "8.0", "L4": "8.9", "H100": "9.0", "RTX 4090": "8.9",
        "B200": "10.0", "RTX 5090": "12.0"}
DRIVERS = ["450.51.06", "470.256.02", "535.247.01", "550.163.01", "570.172.08", "580.95.05"]
PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]


def main() -> int:
    t0 = time.perf_counter()
    read_index(bundled_path())
    load_ms = (time.perf_counter() - t0) * 1000
    index = load_index()
    samples = []
    for name, cc in GPUS.items():
        for drv in DRIVERS:
            for py in PYTHONS:
                for n_gpus in (1, 8):
                    m = MachineFacts(python=py, driver=drv, gpus=[GpuFact(i, name, cc) for i in range(n_gpus)])
                    t = time.perf_counter()
                    plan(m, index, Wishes(deepspeed=True))
                    samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    e2e = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "envdoctor", "fix", "--snapshot", str(ROOT / "tests/data/h100_575.json"),
                        "--dry-run", "--json"], cwd=ROOT, check=True, capture_output=True)
        e2e.append((time.perf_counter() - t) * 1000)
    result = {
        "machine": f"{platform.machine()} {platform.python_implementation()} {platform.python_version()}",
        "plans": len(samples),
        "plan_ms_median": round(statistics.median(samples), 3),
        "plan_ms_p95": round(samples[int(len(samples) * 0.95)], 3),
        "plan_ms_max": round(samples[-1], 3),
        "index_load_and_validate_ms": round(load_ms, 2),
        "fix_dry_run_snapshot_ms_median": round(statistics.median(e2e), 1),
        "budget_ms": 50,
    }
    out = ROOT / "bench" / "results" / "plan.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
