"""Check a tools/gpu_proof.sh run from its $OUT: it reached its end, nothing crashed, timed out or failed, at most
8 files came out, and (--no-gpu, the CI run on a CPU machine) every step that needs a GPU was skipped with its
reason while the others ran.

    python3 tools/gpu_proof_check.py OUT [--no-gpu]

Exit 0 when all hold; 1 with one line per problem otherwise.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

# Steps that need a CUDA GPU (the script skips them without one); every other step runs everywhere.
GPU_STEPS = ("nvidia_smi_q", "nccl_info", "nccl_diagnose", "selftest_allreduce_nccl", "selftest_collectives",
             "selftest_backward", "selftest_compile", "nccl_inject", "nccl_inject_diagnose", "selftest_gpu_stress",
             "selftest_zero3")
EVERYWHERE = ("collect_env", "snapshot", "check", "fix_dry_run", "health", "selftest_gpu", "compare")
MAX_FILES = 8


def read_steps(out: Path) -> List[Dict[str, str]]:
    with (out / "steps.tsv").open(encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def problems(out: Path, no_gpu: bool) -> List[str]:
    """What is wrong with the run whose outputs are in `out` ([] when nothing is)."""
    found: List[str] = []
    try:
        rows = read_steps(out)
    except OSError as exc:
        return [f"no steps.tsv in {out}: {exc.strerror or exc}"]
    by_name = {r["step"]: r for r in rows}
    if "END" not in by_name:
        found.append("the script did not reach its end (no END row)")
    files = [p for p in out.rglob("*") if p.is_file()]
    if len(files) > MAX_FILES:
        found.append(f"{len(files)} files in OUT, at most {MAX_FILES} come back")
    if not (out / "gpu_proof.tar.gz").is_file():
        found.append("gpu_proof.tar.gz is missing")
    for r in rows:
        if r["status"] in ("crashed", "timeout", "failed"):
            found.append(f"step {r['step']}: {r['status']} (rc {r['rc']}): {r['note']}")
        if r["status"] == "skipped" and not r["note"].strip():
            found.append(f"step {r['step']}: skipped without a reason")
    for name in EVERYWHERE + GPU_STEPS:
        if name not in by_name:
            found.append(f"step {name} is missing from steps.tsv")
    if no_gpu:
        for name in GPU_STEPS:
            if name in by_name and by_name[name]["status"] != "skipped":
                found.append(f"step {name} needs a GPU but was {by_name[name]['status']} on a machine without one")
        for name in EVERYWHERE:
            if name in by_name and by_name[name]["status"] != "ok":
                found.append(f"step {name} should run everywhere but was {by_name[name]['status']}")
        found += _gpu_selftest_skipped(out)
    return found


def _gpu_selftest_skipped(out: Path) -> List[str]:
    """Without CUDA, `selftest gpu --json` itself reports the test skipped with the reason."""
    import tarfile

    try:
        with tarfile.open(out / "gpu_proof.tar.gz") as tar:
            member: Optional[tarfile.ExFileObject] = tar.extractfile("./selftest_gpu.out")  # type: ignore[assignment]
            doc = json.loads(member.read().decode()) if member else None
    except (OSError, KeyError, ValueError, tarfile.TarError) as exc:
        return [f"selftest_gpu.out unreadable in the archive: {exc}"]
    tests = [t for t in (doc or {}).get("tests", []) if t.get("name") == "gpu"]
    if not tests or tests[0].get("status") != "skipped" or not tests[0].get("error"):
        return [f"selftest gpu did not report itself skipped with a reason: {tests[:1]}"]
    return []


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--no-gpu", action="store_true", help="the run was on a machine without a GPU (CI)")
    args = ap.parse_args(argv)
    bad = problems(args.out, args.no_gpu)
    for line in bad:
        print(f"gpu_proof_check: {line}")
    if not bad:
        rows = read_steps(args.out)
        end = next(r for r in rows if r["step"] == "END")
        print(f"gpu_proof_check: {len(rows) - 1} steps, reached its end in {end['seconds']}s; "
              f"{sum(r['status'] == 'skipped' for r in rows)} skipped, {sum(r['status'] == 'ok' for r in rows)} ran")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
