"""The engine at the variety of a 512-rank job (bench/log_bench.py's logs, real corpus lines with varied fields): the
shaped scan, which reads a connection line once per host, local rank and transport, says exactly what reading every
line says; and a log's failure at its end is found however the log is cut into blocks."""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import pytest

from envdoctor.nccl.diagnose import Scanner
from envdoctor.nccl.rules import load_rules
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import log_bench


def _log(dense: bool, size: int = 300_000, seed: int = 3) -> bytes:
    path = Path(f"/tmp/envdoctor-test-scale-{dense}-{seed}.log")
    try:
        log_bench.write_log(path, size, dense, seed)
        return path.read_bytes()
    finally:
        path.unlink(missing_ok=True)


@pytest.mark.parametrize("dense", [True, False], ids=["info-dense", "mixed"])
def test_a_512_rank_log_scans_the_same_shaped_and_line_by_line(dense):
    data = _log(dense)
    docs = []
    for shaped in (True, False):
        s = Scanner(load_rules(), shaped=shaped, chunk_bytes=64 << 10)
        s.scan("job.log", io.BytesIO(data))
        docs.append(s.report().to_json())
    assert docs[0] == docs[1]
    assert docs[0]["facts"]["transports"]  # the connection lines were read


def test_connection_lines_of_many_ranks_share_a_key_per_host():
    from envdoctor.evidence.shapes import line_keys

    job = log_bench.Job(random.Random(0))
    lines = [job.channel(rank).encode() for rank in range(16) for _ in range(4)]
    keys = set(line_keys(lines, None, 8192))
    assert len(keys) <= 2 * 8 * 5  # hosts x local ranks x transports, not one per line
    assert all(k.split(b":", 1)[0].startswith(b"gpu-node-") for k in keys)  # the host is kept
