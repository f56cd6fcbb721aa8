"""The TUI's responsiveness with the real probes of this machine, headless: N fresh processes, each timing

  first_paint       the first frame (every probe shown as running)
  all_probes_shown  the frame after the last probe answered (the torch probe imports torch in a child)
  findings_shown    the frame after the rules ran on the finished snapshot

from the process launch (Python start and imports included) and from the app's creation. The child imports
envdoctor.cli first and the app module through importlib, as the `envdoctor` console script does.

Each run is paired with an anchor measured the same way, interleaved: the first paint of a bare Textual app
(Header, Static, Footer) at the same size under the same harness, so a machine that is slower this minute
shows as a slower anchor, and the ratio ours/anchor stays comparable between runs and machines.

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
from typing import Dict, List

from compiled import byte_compile_envdoctor  # bench/, beside the script

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import envdoctor.cli  # what the console script imports first
import asyncio, importlib, json, sys, time
from envdoctor.probes.base import ProbeContext

async def main():
    app = importlib.import_module("envdoctor.tui.app").make_app(probe_context=ProbeContext(python=sys.argv[1]))
    async with app.run_test(size=(120, 40)) as pilot:
        while "findings_shown" not in app.timings:
            await pilot.pause(0.01)
    print(json.dumps({**app.timings, "torch": str(app.snapshot.torch.version),
                      "probes": {p.name: p.seconds for p in app.snapshot.probes}}))

asyncio.run(main())
"""

ANCHOR = r"""
import asyncio, json, time
from textual.app import App
from textual.widgets import Footer, Header, Static

class Bare(App):
    def compose(self):
        yield Header()
        yield Static("hello")
        yield Footer()

    def on_mount(self):
        self.call_after_refresh(lambda: self.timings.setdefault("first_paint", time.monotonic()))

async def main():
    app = Bare()
    app.timings = {"start": time.monotonic()}
    async with app.run_test(size=(120, 40)) as pilot:
        while "first_paint" not in app.timings:
            await pilot.pause(0.01)
    print(json.dumps(app.timings))

asyncio.run(main())
"""

MARKS = ("first_paint", "all_probes_shown", "findings_shown")


def _child(python: str, code: str, *args: str) -> tuple:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NO_COLOR", None)
    launched = time.monotonic()  # CLOCK_MONOTONIC is shared by every process on the machine
    res = subprocess.run([python, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise SystemExit(f"bench child failed ({res.returncode}): {res.stderr[-2000:]}")
    return launched, json.loads(res.stdout.strip().splitlines()[-1])


def one_run(python: str, target: str) -> dict:
    launched, t = _child(python, CHILD, target)
    return {"from_launch_s": {m: round(t[m] - launched, 4) for m in MARKS},
            "from_app_start_s": {m: round(t[m] - t["start"], 4) for m in MARKS},
            "torch": t["torch"], "probe_seconds": t["probes"]}


def anchor_run(python: str) -> dict:
    launched, t = _child(python, ANCHOR)
    return {"from_launch_s": round(t["first_paint"] - launched, 4),
            "from_app_start_s": round(t["first_paint"] - t["start"], 4)}


def stats(values: List[float]) -> Dict[str, float]:
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4), "max": round(max(values), 4)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable, help="the interpreter whose environment is probed")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "tui.json"))
    args = ap.parse_args()
    byte_compile_envdoctor()
    runs, anchors = [], []
    for _ in range(args.runs):  # interleaved: each run and its anchor see the machine in the same minute
        anchors.append(anchor_run(sys.executable))
        runs.append(one_run(sys.executable, args.python))
    summary: Dict[str, Dict[str, Dict[str, float]]] = {}
    for base in ("from_launch_s", "from_app_start_s"):
        summary[base] = {m: stats([r[base][m] for r in runs]) for m in MARKS}
    anchor = {base: stats([a[base] for a in anchors]) for base in ("from_launch_s", "from_app_start_s")}
    ratio = {base: stats([r[base]["first_paint"] / a[base] for r, a in zip(runs, anchors)])
             for base in ("from_launch_s", "from_app_start_s")}
    doc = {
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}",
        "terminal": "headless 120x40 (App.run_test)",
        "runs": args.runs,
        "torch": runs[0]["torch"],
        "summary": summary,
        "anchor": {"what": "first paint of a bare Textual app (Header, Static, Footer), same size and harness, "
                           "measured before each run",
                   "first_paint": anchor, "first_paint_ratio": ratio},
        "results": [{**r, "anchor_first_paint": a} for r, a in zip(runs, anchors)],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")
    for base, marks in summary.items():
        print(base + ": " + ", ".join(f"{m} {v['median']:.3f}s (min {v['min']:.3f}s, max {v['max']:.3f}s)"
                                      for m, v in marks.items()))
        print(f"  bare Textual app first_paint {anchor[base]['median']:.3f}s (min {anchor[base]['min']:.3f}s); "
              f"ours/bare {ratio[base]['median']:.2f}x (min {ratio[base]['min']:.2f}x)")


if __name__ == "__main__":
    main()
