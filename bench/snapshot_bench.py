"""Load + validate one real fixture snapshot, against `json.loads` of the same bytes in the same run.

    python bench/snapshot_bench.py [FIXTURE_NAME] [--repeat N] [--number N]

The code measured is the checkout this file lies in; to measure another (the code before a change), copy this
file into that checkout's bench/ and run it there.

Prints the median time of each, per call, and their ratio. `load` is what `load_snapshot` does after reading
the file: json.loads, the schema check and building the typed model (`snapshot_from_json(json.loads(text))`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Tuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envdoctor.snapshot import snapshot_from_json  # noqa: E402


def per_call(fn, text: str, number: int, repeat: int) -> Tuple[float, float]:
    """The best and the median of `repeat` runs of `number` calls, in seconds per call (the best is the one
    to compare on a shared machine: other processes only ever add time)."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn(text)
        runs.append((time.perf_counter() - start) / number)
    return min(runs), statistics.median(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("fixture", nargs="?", default="a100_gen3_idle")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=50)
    args = parser.parse_args()
    path = ROOT / "tests" / "fixtures" / "snapshots" / f"{args.fixture}.json"
    text = path.read_text(encoding="utf-8")
    start = time.perf_counter()
    snapshot_from_json(json.loads(text), str(path))  # the first call pays for anything built once
    first = time.perf_counter() - start
    parse = per_call(json.loads, text, args.number, args.repeat)
    load = per_call(lambda t: snapshot_from_json(json.loads(t), str(path)), text, args.number, args.repeat)
    print(f"{path.name}: {len(text.encode())} bytes          best     median")
    print(f"first load        {first * 1e3:8.3f} ms")
    print(f"json.loads        {parse[0] * 1e3:8.3f} ms {parse[1] * 1e3:8.3f} ms")
    print(f"load + validate   {load[0] * 1e3:8.3f} ms {load[1] * 1e3:8.3f} ms")
    print(f"ratio             {load[0] / parse[0]:8.2f} x  {load[1] / parse[1]:8.2f} x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
