"""`envdoctor check --snapshot FILE` against its floor, `python -c "import json"`, in the same interleaved rounds.

  python bench/snapshot_check_bench.py [--runs 9] [--baseline-tree DIR] [--snapshot FILE]

Each command runs `--runs` times, interleaved (so that load drifts hit them alike); CPU time (user + system of
the child, from getrusage) and wall time are taken per run, and medians reported with their ratio to the floor.
CPU time is the steadier figure on a loaded machine. Three variants of check: warm (the validation cache in a
scratch cache folder already holds the bundled rules), cold (an empty cache folder each run: every rule checked,
then remembered) and, with --baseline-tree (another checkout, e.g. `git archive HEAD~3 | tar -x -C DIR`),
that checkout's check. Target: warm check at most 0.15 s. Writes bench/results/snapshot_check.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

from compiled import byte_compile_envdoctor  # bench/, beside the script

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "snapshots" / "h100_8x_nvswitch.json"


def once(argv: List[str], env: Dict[str, str]) -> Tuple[float, float]:
    """(cpu seconds, wall seconds) of one run of `argv`, in the tree on its PYTHONPATH (`python -m` imports from the
    working directory first)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    res = subprocess.run(argv, cwd=env.get("PYTHONPATH", ROOT), env=env, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode not in (0, 1):
        raise SystemExit(f"{argv} failed ({res.returncode}): {res.stderr[-500:]!r}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--snapshot", default=str(FIXTURE))
    ap.add_argument("--baseline-tree", metavar="DIR")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "snapshot_check.json"))
    args = ap.parse_args()
    byte_compile_envdoctor()
    scratch = Path(tempfile.mkdtemp(prefix="ed-snapcheck-"))
    base = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    base.pop("ENVDOCTOR_RULES_DIR", None)
    warm_env = dict(base, XDG_CACHE_HOME=str(scratch / "warm"))
    py = sys.executable
    check = [py, "-m", "envdoctor", "check", "--snapshot", str(Path(args.snapshot).resolve())]
    commands = {"import_json": ([py, "-c", "import json"], base), "check_warm": (check, warm_env),
                "check_cold": (check, None)}
    if args.baseline_tree:
        tree = str(Path(args.baseline_tree).resolve())
        import compileall

        compileall.compile_dir(str(Path(tree) / "envdoctor"), quiet=1)
        commands["check_baseline"] = (check, dict(base, PYTHONPATH=tree, XDG_CACHE_HOME=str(scratch / "base")))
    once(check, warm_env)  # fills the warm cache (and the page cache)
    samples: Dict[str, List[Tuple[float, float]]] = {k: [] for k in commands}
    try:
        for i in range(args.runs):
            for name, (argv, env) in commands.items():
                if env is None:  # cold: a cache folder nobody has written yet
                    env = dict(base, XDG_CACHE_HOME=str(scratch / f"cold{i}"))
                samples[name].append(once(argv, env))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    results = {k: {"cpu_median_s": round(statistics.median(c for c, _ in v), 4),
                   "wall_median_s": round(statistics.median(w for _, w in v), 4),
                   "cpu_runs": [round(c, 4) for c, _ in v], "wall_runs": [round(w, 4) for _, w in v]}
               for k, v in samples.items()}
    floor = results["import_json"]
    ratios = {k: {"cpu": round(v["cpu_median_s"] / max(floor["cpu_median_s"], 1e-4), 2),
                  "wall": round(v["wall_median_s"] / floor["wall_median_s"], 2)}
              for k, v in results.items() if k != "import_json"}
    doc = {"machine": f"{platform.machine()} {os.cpu_count()} cpus, Python {platform.python_version()}",
           "runs": args.runs, "target": "check_warm cpu and wall <= 0.15 s", "results": results,
           "over_import_json": ratios}
    for k, v in results.items():
        print(f"{k:16s} cpu {v['cpu_median_s']:.3f}s  wall {v['wall_median_s']:.3f}s"
              + (f"  ({ratios[k]['cpu']}x / {ratios[k]['wall']}x import json)" if k in ratios else ""))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
