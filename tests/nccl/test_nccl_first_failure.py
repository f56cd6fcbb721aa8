"""The rank that failed first, found by comparing timestamps across rank logs: said in text and JSON, used in
the ranking when its error is not the one the other ranks reported after it, and not claimed when every rank
reported the same error within moments (tests/nccl/corpus/real_structure.jsonl: real logs, split per rank)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from envdoctor.nccl import diagnose_paths, diagnose_text
from tests.nccl.helpers import ROOT

STRUCTURE = ROOT / "tests" / "nccl" / "corpus" / "real_structure.jsonl"
RANK_PREFIX = re.compile(r"^\[rank(\d+)\]:")


def cases() -> List[Dict[str, Any]]:
    return [json.loads(line) for line in STRUCTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def split_per_rank(log: str, into: Path) -> List[int]:
    """One file per `[rankN]:` prefix, as each rank's own log would hold its lines (unprefixed lines go to all)."""
    by_rank: Dict[int, List[str]] = {}
    shared: List[str] = []
    for line in log.splitlines():
        m = RANK_PREFIX.match(line)
        if m:
            by_rank.setdefault(int(m.group(1)), shared[:]).append(line)
        else:
            shared.append(line)
            for lines in by_rank.values():
                lines.append(line)
    into.mkdir(parents=True, exist_ok=True)
    for rank, lines in by_rank.items():
        (into / f"rank{rank}.log").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sorted(by_rank)


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["id"])
def test_real_rank_logs_split_per_rank(case: Dict[str, Any], tmp_path: Path) -> None:
    structure = case["structure"]
    assert structure["split"] == "rank_prefix" and case["source"]["url"].startswith("https://github.com/")
    assert split_per_rank(case["log"], tmp_path) == structure["ranks"]
    for report in (diagnose_paths([tmp_path]), diagnose_text(case["log"])):
        assert [f.category for f in report.findings][:1] == [case["category"]]
        said = report.first_failure
        if structure["first_failure"] is None:
            # the facts keep the comparison, but the same error everywhere within a second names no rank
            assert report.to_json()["facts"]["first_failure"] is not None and said is None
        else:
            assert said is not None and f"rank {structure['first_failure']}" in said


# Assembled from real lines: ranks 0-2 are XPixelGroup/BasicSR#737's watchdog timeouts (SeqNum 808); rank 3's
# OOM is the error of modelscope/ms-swift#6301, after a timed step line of rank 3 ten minutes earlier.
WATCHDOG = ("[rank{r}]:[E626 06:24:44.{ns} ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) "
            "ran for 600020 milliseconds before timing out.")
OOM = ("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB. GPU 3 has a total capacity "
       "of 63.42 GiB of which 1.70 GiB is free. Process 2521735 has 474.00 MiB memory in use.")


def rank_logs(into: Path, timed: bool = True) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    for r, ns in ((0, "159932949"), (1, "903881913"), (2, "173078629")):
        line = WATCHDOG.format(r=r, ns=ns)
        (into / f"rank{r}.log").write_text((line if timed else re.sub(r"\[E626 [^ ]+ ", "[E ", line)) + "\n")
    step = "[rank3]:[I626 06:14:43.800000000 train.py:211] step 808\n" if timed else "[rank3]: step 808\n"
    (into / "rank3.log").write_text(step + OOM + "\n")
    return into


def test_the_rank_that_erred_first_is_the_cause_and_the_timeouts_its_symptom(tmp_path: Path) -> None:
    report = diagnose_paths([rank_logs(tmp_path / "timed")])
    doc = report.to_json()
    first = doc["facts"]["first_failure"]
    assert first["rank"] == 3 and first["origin"].endswith("rank3.log [rank 3]") and first["lead_seconds"] == 600.36
    assert "dist-cuda-oom" in first["signals"] and "watchdog-timeout" in first["later_signals"]
    assert doc["summary"]["first_failure"].startswith("first failure: rank 3, 600.36 s before the next error (rank 0)")
    ranked = [f.category for f in report.findings]
    assert ranked[:2] in (["timeout_rank_crashed", "gpu_oom"], ["gpu_oom", "timeout_rank_crashed"])
    oom = report.findings[ranked.index("gpu_oom")]
    assert any("rank 3 failed first" in w for w in oom.why)
    assert any(e.startswith("first failure: rank 3") for e in oom.evidence)

    untimed = [f for f in diagnose_paths([rank_logs(tmp_path / "untimed", timed=False)]).findings]
    score = {f.category: f.score for f in untimed}
    timed_score = {f.category: f.score for f in report.findings}
    assert timed_score["gpu_oom"] > score["gpu_oom"]  # the timestamps add weight to the first rank's own error
    assert timed_score.get("timeout_slow_rank", 0) < score["timeout_slow_rank"]  # and take it from 'a slow rank'


def test_an_nccl_error_on_one_host_first_outranks_the_timeouts_after_it(tmp_path: Path) -> None:
    for r in range(3):
        (tmp_path / f"rank{r}.log").write_text(WATCHDOG.format(r=r, ns="100000000").replace("06:24:44", f"06:24:4{r}")
                                               + "\n")
    (tmp_path / "rank3.log").write_text(
        "[rank3]:[I626 06:14:40.000000000 train.py:211] step 808\n"
        "gpu-b:77:99 [3] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<35000> with status=12 opcode=0 len=0 "
        "vendor err 129 (Recv) localGid ::ffff:10.0.0.3 remoteGids::ffff:10.0.0.2\n")
    report = diagnose_paths([tmp_path])
    assert report.findings[0].category == "roce_gid_index"
    assert report.first_failure is not None and report.first_failure.startswith("first failure: gpu-b, 600.1 s before")
    assert report.to_json()["facts"]["first_failure"]["host"] == "gpu-b"


def test_the_text_report_names_the_first_rank(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "envdoctor", "nccl", "diagnose", str(rank_logs(tmp_path))], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    head = out.stdout.splitlines()[1]
    assert head.startswith("  first failure: rank 3, 600.36 s before the next error (rank 0); at I626 06:14:43")
