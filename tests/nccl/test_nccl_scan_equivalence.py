"""The fast scan (each line key read once, shapes without a needle skipped: envdoctor/nccl/shapes.py) finds
exactly what reading every line finds, on the corpus, the fixtures and logs built to trip it up."""

from __future__ import annotations

import io
import json
import random
import shutil
from pathlib import Path
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envdoctor.nccl import load_rules
from envdoctor.nccl.diagnose import Scanner
from envdoctor.nccl.shapes import unsafe_gates
from tests.nccl.helpers import FIXTURES, ROOT

CORPUS = ROOT / "tests" / "nccl" / "corpus"


def both(inputs, chunk_bytes: int = 1 << 20, max_line: int = 8192, rules=None):
    out = []
    for shaped in (True, False):
        scanner = Scanner(rules or load_rules(), shaped=shaped, chunk_bytes=chunk_bytes, max_line=max_line)
        for label, data in inputs:
            scanner.scan(label, io.BytesIO(data))
        out.append(scanner.report().to_json())
    return out


def corpus_logs() -> List:
    rows = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                rows.append(pytest.param(case.get("log", ""), id=f"{path.stem}:{case['id']}"))
    return rows


@pytest.mark.parametrize("log", corpus_logs())
def test_corpus_case_scans_the_same(log: str) -> None:
    fast, every = both([("<text>", log.encode("utf-8", errors="replace"))])
    assert fast == every


def test_fixtures_scan_the_same_one_by_one_and_together() -> None:
    paths = sorted(FIXTURES.glob("*"))
    for p in paths:
        fast, every = both([(p.name, p.read_bytes())])
        assert fast == every, p.name
    together = [(p.name, p.read_bytes()) for p in paths]
    fast, every = both(together, chunk_bytes=4096)
    assert fast == every


def info_job(rnd: random.Random, ranks: int) -> List[str]:
    """INFO lines of a job whose ranks disagree where last-wins facts could be skipped wrongly."""
    lines = []
    for r in range(ranks):
        host, dev = f"node{r // 4}", r % 4
        pre = f"{host}:{100 + r}:{200 + r} [{dev}] NCCL INFO "
        lines += [pre + "cudaDriverVersion " + rnd.choice(["12020", "12040"]),
                  pre + "NCCL_P2P_LEVEL set by environment to " + rnd.choice(["NVL", "SYS"]),
                  pre + f"comm 0x1 rank {r} nranks {ranks} cudaDev {dev} busId {rnd.choice(['1a000', '3b000'])}",
                  pre + "NVLS multicast support is " + rnd.choice(["", "not "]) + "available on dev 0",
                  pre + f"NCCL version 2.{rnd.choice([18, 21])}.5+cuda12.4"]
        for c in range(6):
            via = rnd.choice(["P2P/IPC/read", "SHM/direct/direct", "NET/IB/0/GDRDMA", "NET/Socket/1"])
            lines.append(pre + f"Channel {c:02d}/0 : {r}[{dev}] -> {(r + 1) % ranks}[{(dev + 1) % 4}] via {via}")
    lines.append("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout")
    return lines


@pytest.mark.parametrize("seed", range(4))
def test_a_job_whose_ranks_disagree_scans_the_same(seed: int) -> None:
    rnd = random.Random(seed)
    lines = info_job(rnd, 16)
    rnd.shuffle(lines)
    data = "\n".join(lines).encode()
    for chunk in (512, 1 << 20):
        fast, every = both([("a.log", data), ("b.log", data[: len(data) // 2])], chunk_bytes=chunk)
        assert fast == every


FRAGMENTS = [
    "n1:11:12 [0] NCCL INFO ", "n2:13:14 [1] NCCL INFO ", "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
    "Channel 07/1 : 3[3] -> 8[0] [send] via NET/IB/0/GDRDMA", "Channel 01 : 0[0] -> 1[1] via SHM",
    "NCCL version 2.18.5+cuda12.2", "NCCL version 2.21.5", "comm 0x5 rank 3 nRanks 8 nNodes 2",
    "cudaDev 1 busId 1a000", "NCCL_IB_HCA set by environment to mlx5", "Bootstrap : Using eth0:10.0.0.1<0>",
    "NET/IB : No device found.", "include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
    "Duplicate GPU detected", "H100", "signal 11", "errno: 98 - Address already in use", "\x00\x03", "\x00",
    "z" * 300, "\r", " ", "Channel", "[0]", "12", "\ufffd",
]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(FRAGMENTS), max_size=4).map("".join), max_size=60),
       st.sampled_from([64, 300, 1 << 20]))
def test_any_mix_of_line_pieces_scans_the_same(lines: List[str], chunk: int) -> None:
    data = "\n".join(lines + lines[::2]).encode("utf-8")
    fast, every = both([("x.log", data)], chunk_bytes=chunk, max_line=200)
    assert fast == every


def test_gates_that_could_sit_on_a_channel_lines_numbers_are_unsafe() -> None:
    assert unsafe_gates([b"l 00/", b"] -> 5", b"0:4", b"nel 1"]) == [b"l 00/", b"] -> 5", b"nel 1"]
    assert unsafe_gates([b"h100", b"errno: 98", b"72.17.", b"comm 0x", b"x 1"]) == []


def test_a_signature_reading_channel_numbers_still_counts_every_line(tmp_path: Path) -> None:
    rules_dir = tmp_path / "nccl"
    shutil.copytree(ROOT / "rules" / "nccl", rules_dir)
    doc = json.loads((rules_dir / "signatures.json").read_text(encoding="utf-8"))
    doc["signatures"].append({
        "id": "channel-twelve", "pattern": r"Channel 12/\d+ : \d+\[\d+\] -> \d+\[\d+\] via SHM", "needles": ["nel 12/"],
        "weights": {"shm_exhausted": 1}, "means": "a test signature that reads a channel number",
        "example": "n:1:2 [0] NCCL INFO Channel 12/0 : 0[0] -> 1[1] via SHM"})
    (rules_dir / "signatures.json").write_text(json.dumps(doc), encoding="utf-8")
    rules = load_rules(rules_dir, tables_dir=ROOT / "rules" / "tables")
    lines = [f"n:1:2 [0] NCCL INFO Channel {c:02d}/0 : {r}[0] -> {r + 1}[1] via SHM" for r in range(8) for c in range(16)]
    fast, every = both([("x.log", "\n".join(lines).encode())], rules=rules)
    assert fast == every
    assert sum(1 for e in fast["findings"][0]["evidence"] if "Channel 12/" in e) == 4


def _gates() -> List[bytes]:
    from envdoctor.nccl.diagnose import prefilter_for

    return sorted(prefilter_for(load_rules()).by_gate)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_gates()), st.sampled_from([b"0", b"7", b"12", b" ", b"X", b"H", b"-", b"("]),
                          st.binary(max_size=4)), max_size=12), st.booleans())
def test_candidates_of_a_shape_are_the_candidates_of_the_line(parts: List[bytes], upper: bool) -> None:
    """Gates without a digit are looked for once per shape; the patterns and their order stay those of the line."""
    from envdoctor.nccl.diagnose import prefilter_for
    from envdoctor.nccl.shapes import FOLD

    line = b"".join(parts).replace(b"\n", b" ")
    line = line.upper() if upper else line
    pf = prefilter_for(load_rules())
    assert pf.candidates_of_shape(line, line.translate(FOLD)) == pf.candidates(line)


def test_candidates_of_a_shape_with_a_digit_gate_inside_a_plain_one() -> None:
    from envdoctor.nccl.diagnose import prefilter_for
    from envdoctor.nccl.shapes import FOLD

    pf = prefilter_for(load_rules())
    for line in (b"GPU H100 80GB HBM3 and H200 vs h20 cuda error 217 rtx 5090",
                 b"NCCL WARN Call to connect returned Connection refused, errno: 113 [h100-node-7]",
                 b"bnccl.so.2.21.5 NCCL_P2P_DISABLE=1 (NCCL_NVLS_ENABLE=0) exits with return code = -9"):
        first = pf.candidates_of_shape(line, line.translate(FOLD))
        assert first == pf.candidates(line) and first
        same_shape = line.replace(b"1", b"3").replace(b"2", b"8")
        assert pf.candidates_of_shape(same_shape, same_shape.translate(FOLD)) == pf.candidates(same_shape)
