"""Fuzz envdoctor's commands in-process with 100,000+ hostile inputs and tally how they ended (issue 30).

    python bench/fuzz_bench.py --n 100000 [--seed0 0] [--deadline 20] [--out bench/results/fuzz.json | --no-write]
    python bench/fuzz_bench.py --family snapshot --seed 17 --show    # one case, its output

Inputs are made from the recorded snapshots, NCCL logs, the wheel index, the rules database and argument values
(tests/fuzz_cases.py). Outcomes: exit codes; internal errors (exit 70) grouped by exception and envdoctor frame;
hangs (an input past its deadline); leaks (a planted secret in stdout or stderr); raw escapes (a control or
bidi character in stdout or stderr); crash files not mode 0600. Target: 0 of each but exit codes.

The tally (seed0, the count, per-family counts, exit codes and each problem's count with a seed that shows it) goes
to --out; a `before` tally already there is kept beside it. Memory stays bounded: each input's files are removed
before the next, and only counts and one example seed per problem are kept."""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fuzz_cases import FAMILIES, make_case, run_case, scratch  # noqa: E402


def _max_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _rss_mb() -> float:
    """The resident size now (the peak only grows: this says whether memory is held from input to input)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError, IndexError):
        return 0.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--deadline", type=float, default=20.0)
    ap.add_argument("--family")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--show", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "fuzz.json"))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--minutes", type=float, default=0, help="stop after this long (the tally says how many ran)")
    ap.add_argument("--memory-gb", type=float, default=4.0,
                    help="address-space cap: an input that makes envdoctor read without bound (/dev/zero) is a "
                         "MemoryError (tallied as exit 70) instead of the kernel killing the whole run")
    args = ap.parse_args()
    if args.memory_gb:
        import resource

        cap = int(args.memory_gb * 2 ** 30)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    work = scratch() / "w"
    if args.show:
        case = make_case(args.family, args.seed)
        print(case.argv, case.env, {k: len(v) for k, v in case.files.items()}, file=sys.stderr)
        o = run_case(case, work, args.deadline)
        print(o, file=sys.stderr)
        print(o.text, file=sys.stderr)
        return 0
    families = [args.family] if args.family else list(FAMILIES)
    weights = [FAMILIES[f][0] for f in families]
    tally = {"seed0": args.seed0, "requested": args.n, "deadline_s": args.deadline,
             "inputs": 0, "by_family": collections.Counter(), "exit_codes": collections.Counter(), "exit_70": 0,
             "hangs": 0, "leaks": 0, "raw_escapes": 0, "crash_files_not_0600": 0, "harness_errors": 0}
    bugs: collections.Counter = collections.Counter()
    examples: dict = {}
    start = time.monotonic()
    import random

    pick = random.Random(args.seed0)
    for i in range(args.seed0, args.seed0 + args.n):
        if args.minutes and time.monotonic() - start > args.minutes * 60:
            break
        family = pick.choices(families, weights)[0]
        try:
            o = run_case(make_case(family, i), work, args.deadline)
        except Exception as exc:  # the harness's own bug, or an exception past cli.main: tallied, the run goes on
            tally["harness_errors"] += 1
            label = f"{family}: harness {type(exc).__name__}: {str(exc)[:80]}"
            bugs[label] += 1
            examples.setdefault(label, i)
            continue
        tally["inputs"] += 1
        tally["by_family"][family] += 1
        tally["exit_codes"][str(o.code)] += 1
        for key, hit in (("hangs", o.hang), ("leaks", o.leak), ("raw_escapes", o.escape), ("exit_70", o.code == 70),
                         ("crash_files_not_0600", o.crash_mode not in (None, 0o600))):
            if hit:
                tally[key] += 1
                label = o.internal if key == "exit_70" else key
                bugs[f"{family}: {label}"] += 1
                examples.setdefault(f"{family}: {label}", i)
        if tally["inputs"] % 1000 == 0:
            print(f"{tally['inputs']} inputs, {time.monotonic() - start:.0f} s: exit70 {tally['exit_70']} hangs "
                  f"{tally['hangs']} leaks {tally['leaks']} escapes {tally['raw_escapes']} "
                  f"(RSS {_rss_mb():.0f} MB, max {_max_rss_mb():.0f} MB)", file=sys.stderr, flush=True)
    tally["seconds"] = round(time.monotonic() - start, 1)
    tally["max_rss_mb"] = round(_max_rss_mb())
    tally["end_rss_mb"] = round(_rss_mb())
    shutil.rmtree(work.parent, ignore_errors=True)
    tally["distinct_problems"] = len(bugs)
    tally["problems"] = {k: {"count": v, "example_seed": examples[k]} for k, v in bugs.most_common()}
    text = json.dumps(tally, indent=1, default=dict)
    print(text)
    if not args.no_write:
        out = Path(args.out)
        try:
            old = json.loads(out.read_text())
        except (OSError, ValueError):
            old = {}
        doc = {"how": f"python bench/fuzz_bench.py --n {args.n} --seed0 {args.seed0} (in-process, "
                      f"{args.memory_gb:g} GiB address-space cap)", "after": tally}
        if isinstance(old, dict) and "before" in old:
            doc = {"how_before": old.get("how"), "before": old["before"], **doc}
        out.write_text(json.dumps(doc, indent=1, default=dict) + "\n")
    bad = sum(tally[k] for k in ("exit_70", "hangs", "leaks", "raw_escapes", "crash_files_not_0600", "harness_errors"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
