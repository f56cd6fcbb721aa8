"""Text built to break the readers: they never raise, never grow without bound, always give a valid snapshot."""

from __future__ import annotations

import random

from envdoctor.jsonschema_lite import validate_snapshot
from envdoctor.text import facts as facts_module
from envdoctor.text import report_document
from tests.text.helpers import FIXTURES, read

SNIPPETS = [
    "GPU 99999999999999999999999: NVIDIA X", "shared memory (/dev/shm) size .... 1.2.3.4 GB",
    "shared memory (/dev/shm) size .... " + "9" * 5000 + " GB", "|   0  NVIDIA A100  On | 00000000:07:00.0 Off | "
    + "9" * 5000 + " |", "| N/A 30C P0 50W / 400W | " + "9" * 5000 + "MiB / " + "9" * 5000 + "MiB | 0% Default |",
    "Total VRAM " + "9" * 5000 + " MB, total RAM 1 MB", "CPU(s): " + "9" * 5000, "Package Version", "----- -----",
    "torch==", "==========", "System Info", "Device: cuda:0", "**VRAM Total:** " + "9" * 5000,
    "PyTorch version: ", "CUDA used to build PyTorch: N/A", "ROCM used to build PyTorch: N/A", "",
    "\x00\x01\x02", "> > > PyTorch version: 2.1.0", "deepspeed info ................... , , ",
    "torch install path ............... ['unterminated", "# packages in environment at :", "#", "a 1 b c d e f g",
]


def test_random_pastes_never_break() -> None:
    rng = random.Random(30)
    corpus = [line for p in sorted(FIXTURES.glob("*.txt")) for line in p.read_text(encoding="utf-8").split("\n")]
    for _ in range(60):
        lines = [rng.choice(SNIPPETS) if rng.random() < 0.4 else rng.choice(corpus) for _ in range(rng.randint(1, 80))]
        facts = read("\n".join(lines))
        assert validate_snapshot(report_document(facts, created="2026-12-02T00:00:00Z")) == []
        for section in facts.sections:
            assert 1 <= section.start <= section.end <= len(lines)


def test_a_huge_listing_stays_bounded(monkeypatch) -> None:
    monkeypatch.setattr(facts_module, "MAX_FACTS", 2000)  # the bound, scaled down to keep the test short
    body = "\n".join(f"pkg{i}==1.{i}" for i in range(2500))
    facts = read(body)
    assert len(facts.evidence) == 2000 and len(facts.doc["python"]["packages"]) == 2000
    assert facts.truncated and "facts" in facts.truncated[0]
