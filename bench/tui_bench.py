"""The TUI's responsiveness with the real probes of this machine, headless: N fresh processes, each timing

  first_paint       the first frame (every probe shown as running)
  all_probes_shown  the frame after the last probe answered (the torch probe imports torch in a child)
  findings_shown    the frame after the rules ran on the finished snapshot

from the process launch (Python start and imports included) and from the app's creation.

  python bench/tui_bench.py [--runs 5] [--python PATH]      -> bench/results/tui.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import asyncio, json, sys, time
from envdoctor.probes.base import ProbeContext
from envdoctor.tui.app import make_app

async def main():
    app = make_app(probe_context=ProbeContext(python=sys.argv[1]))
    async with app.run_test(size=(120, 40)) as pilot:
        while "findings_shown" not in app.timings:
            await pilot.pause(0.01)
    print(json.dumps({**app.timings, "torch": str(app.snapshot.torch.version),
                      "probes": {p.name: p.seconds for p in app.snapshot.probes}}))

asyncio.run(main())
"""

MARKS = ("first_paint", "all_probes_shown", "findings_shown")


def one_run(python: str, target: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NO_COLOR", None)
    launched = time.monotonic()  # CLOCK_MONOTONIC is shared by every process on the machine
    res = subprocess.run([python, "-c", CHILD, target], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise SystemExit(f"bench child failed ({res.returncode}): {res.stderr[-2000:]}")
    t = json.loads(res.stdout.strip().splitlines()[-1])
    out = {"from_launch_s": {m: round(t[m] - launched, 4) for m in MARKS},
           "from_app_start_s": {m: round(t[m] - t["start"], 4) for m in MARKS},
           "torch": t["torch"], "probe_seconds": t["probes"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the interpreter whose environment is probed")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "tui.json"))
    args = ap.parse_args()
    runs = [one_run(sys.executable, args.python) for _ in range(args.runs)]
    summary = {}
    for base in ("from_launch_s", "from_app_start_s"):
        summary[base] = {m: {"median": round(statistics.median(r[base][m] for r in runs), 4),
                             "max": round(max(r[base][m] for r in runs), 4)} for m in MARKS}
    doc = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}",
        "terminal": "headless 120x40 (App.run_test)",
        "runs": args.runs,
        "torch": runs[0]["torch"],
        "summary": summary,
        "results": runs,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    for base, marks in summary.items():
        print(base + ": " + ", ".join(f"{m} {v['median']:.3f}s (max {v['max']:.3f}s)" for m, v in marks.items()))


if __name__ == "__main__":
    main()
