"""envdoctor check against its anchors, in one run: wall time of N interleaved rounds of each command.

  python bench/check_bench.py [--runs 5] [--python PATH ...]

With several --python, each interpreter is measured in turn (e.g. one with torch alone, one with
torch and DeepSpeed, whose import envdoctor also checks).

Compares a full `envdoctor check` with a bare `python -c "import torch"` (the floor: envdoctor must
import torch in a child to learn about it), where DeepSpeed is installed also with `import torch,
deepspeed` (check imports DeepSpeed too), and with `python -m torch.utils.collect_env`; and times
`check --snapshot FILE`, which probes nothing. Each ratio is given of the medians, of the minima and as
the median of the per-round ratios. Writes bench/results/check.json.
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
from typing import Optional

from compiled import byte_compile_envdoctor  # bench/, beside the script

ROOT = Path(__file__).resolve().parents[1]


def wall(argv, env, runs, cwd=ROOT):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        res = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if res.returncode not in (0, 1):
            raise SystemExit(f"{argv} failed ({res.returncode}): {res.stderr[-500:]}")
    return {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4),
            "runs": [round(t, 4) for t in times]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--python", action="append", help="interpreter(s) to measure (default: this one)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "check.json"))
    ap.add_argument("--baseline-tree", metavar="DIR",
                    help="another checkout of envdoctor (e.g. a git worktree of an older commit) whose `check` runs in "
                         "the same interleaved rounds, for a before/after ratio under the same load")
    args = ap.parse_args()
    byte_compile_envdoctor()
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    doc = {"machine": f"{platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}",
           "runs": args.runs, "targets": {"check_over_import_torch": "<= 1.0", "envdoctor_check_snapshot": "< 0.4 s"},
           "interpreters": {}}
    for py in args.python or [sys.executable]:
        result = measure(py, env, args.runs, args.baseline_tree)
        doc["interpreters"][result["packages"] or Path(py).name] = result  # no host paths in results
    if args.baseline_tree:
        doc["baseline_tree"] = f"another checkout (git rev {_rev(args.baseline_tree)})"
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")


def _rev(tree: str) -> str:
    res = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return res.stdout.strip() or "unknown"


def packages(py: str) -> str:
    code = (
        "from importlib import metadata\n"
        "found = []\n"
        "for name in ('torch', 'deepspeed'):\n"
        "    try:\n"
        "        found.append(name + ' ' + metadata.version(name))\n"
        "    except metadata.PackageNotFoundError:\n"
        "        pass\n"
        "print(', '.join(found))\n"
    )
    return subprocess.run([py, "-c", code], capture_output=True, text=True).stdout.strip()


def measure(py: str, env: dict, runs: int, baseline_tree: Optional[str] = None) -> dict:
    fixture = str(ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json")
    # Interleave the commands so that cache state and machine load hit them alike.
    has_ds = "deepspeed" in packages(py)
    commands = {
        "import_torch": [py, "-c", "import torch"],
        # check also imports DeepSpeed where it is installed (is it importable?): its floor is both imports
        **({"import_torch_deepspeed": [py, "-c", "import torch, deepspeed"]} if has_ds else {}),
        "envdoctor_check": [py, "-m", "envdoctor", "check"],
        "envdoctor_check_snapshot": [py, "-m", "envdoctor", "check", "--snapshot", fixture],
        "collect_env": [py, "-m", "torch.utils.collect_env"],
    }
    envs = {k: env for k in commands}
    cwds = {k: ROOT for k in commands}
    if baseline_tree:
        # `python -m` puts its working directory first on sys.path: the baseline runs from its own tree, or this
        # tree's envdoctor would shadow it whatever PYTHONPATH says
        tree = Path(baseline_tree).resolve()
        commands["envdoctor_check_baseline"] = [py, "-m", "envdoctor", "check"]
        envs["envdoctor_check_baseline"] = dict(env, PYTHONPATH=str(tree))
        cwds["envdoctor_check_baseline"] = tree
    for name, argv in commands.items():  # warm the page cache once
        subprocess.run(argv, cwd=cwds[name], env=envs[name], capture_output=True)
    samples = {k: [] for k in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            samples[name].append(wall(argv, envs[name], 1, cwds[name])["runs"][0])
    results = {k: {"median_s": round(statistics.median(v), 4), "min_s": round(min(v), 4), "runs": v}
               for k, v in samples.items()}

    def ratio(a: str, b: str) -> dict:
        """a over b: of the medians, of the minima, and the median of the ratios within each round (the
        machine's speed drifts by tens of percent within minutes; a round's commands run back to back)."""
        paired = [x / y for x, y in zip(samples[a], samples[b])]
        return {"of_medians": round(results[a]["median_s"] / results[b]["median_s"], 3),
                "of_minima": round(results[a]["min_s"] / results[b]["min_s"], 3),
                "paired_median": round(statistics.median(paired), 3)}

    ratios = {
        "check_over_import_torch": ratio("envdoctor_check", "import_torch"),
        "collect_env_over_import_torch": ratio("collect_env", "import_torch"),
        "check_over_collect_env": ratio("envdoctor_check", "collect_env"),
    }
    if has_ds:
        ratios["check_over_import_torch_deepspeed"] = ratio("envdoctor_check", "import_torch_deepspeed")
    if baseline_tree:
        ratios["baseline_check_over_import_torch"] = ratio("envdoctor_check_baseline", "import_torch")
        ratios["check_over_baseline_check"] = ratio("envdoctor_check", "envdoctor_check_baseline")
    print(f"{py} ({packages(py)})")
    for k, v in results.items():
        print(f"  {k:28s} median {v['median_s']:.3f}s  min {v['min_s']:.3f}s")
    for k, v in ratios.items():
        print(f"  {k:34s} medians {v['of_medians']}  minima {v['of_minima']}  paired {v['paired_median']}")
    return {"packages": packages(py), "results": results, "ratios": ratios}


if __name__ == "__main__":
    main()
