"""Load + validate one real fixture snapshot, against `json.loads` of the same bytes in the same run.

    python bench/snapshot_bench.py [FIXTURE_NAME] [--repeat N] [--number N]

The code measured is the checkout this file lies in; to measure another (the code before a change), copy this
file into that checkout's bench/ and run it there.

Prints the best and the median time of each, per call, and their ratio; the two take turns, so that load
from other processes falls on both alike. `load` is what `load_snapshot` does after reading
the file: json.loads, the schema check and building the typed model (`snapshot_from_json(json.loads(text))`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, List, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envdoctor.snapshot import snapshot_from_json  # noqa: E402


def interleaved(fns: Sequence[Callable[[str], object]], text: str, number: int, repeat: int,
                clock: Callable[[], float] = time.perf_counter) -> List[List[float]]:
    """Per function, `repeat` timings of `number` calls each (seconds per call), the functions taking turns so
    that load from other processes falls on all of them alike."""
    runs: List[List[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, times in zip(fns, runs):
            start = clock()
            for _ in range(number):
                fn(text)
            times.append((clock() - start) / number)
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixture", nargs="?", default="a100_gen3_idle")
    parser.add_argument("--repeat", type=int, default=60)
    parser.add_argument("--number", type=int, default=20)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="cpu: this process's CPU time (default; steadier on a shared machine), wall: elapsed")
    args = parser.parse_args()
    path = ROOT / "tests" / "fixtures" / "snapshots" / f"{args.fixture}.json"
    text = path.read_text(encoding="utf-8")
    start = time.perf_counter()
    snapshot_from_json(json.loads(text), str(path))  # the first call pays for anything built once
    first = time.perf_counter() - start
    parse, load = interleaved([json.loads, lambda t: snapshot_from_json(json.loads(t), str(path))], text,
                              args.number, args.repeat, time.process_time if args.clock == "cpu" else time.perf_counter)
    ratios = [b / a for a, b in zip(parse, load)]
    print(f"{path.name}: {len(text.encode())} bytes, {args.clock} time    best     median")
    print(f"first load        {first * 1e3:8.3f} ms")
    print(f"json.loads        {min(parse) * 1e3:8.3f} ms {statistics.median(parse) * 1e3:8.3f} ms")
    print(f"load + validate   {min(load) * 1e3:8.3f} ms {statistics.median(load) * 1e3:8.3f} ms")
    print(f"ratio             {min(load) / min(parse):8.2f} x  {statistics.median(ratios):8.2f} x (median of each turn's)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
