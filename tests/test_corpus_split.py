"""The dev / validation split (tests/corpus/split.py): by thread, stable, about one third validation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "corpus"))

import split  # noqa: E402


def test_one_thread_is_one_side_whatever_the_link_form():
    base = "https://github.com/pytorch/pytorch/issues/12345"
    forms = [base, base + "/", base + "#issuecomment-99", "HTTPS://GitHub.com/pytorch/pytorch/issues/12345?x=1",
             "https://github.com/pytorch/pytorch/pull/12345", "https://github.com/pytorch/pytorch/pull/12345/files"]
    assert {split.normalise(f) for f in forms} == {"https://github.com/pytorch/pytorch/issues/12345"}
    assert len({split.split_of_url(f) for f in forms}) == 1


def test_the_side_is_a_pure_function_of_the_hash():
    # Fixed values: a change of the rule would silently move cases between dev and validation.
    sides = [split.split_of_url(f"https://github.com/NVIDIA/nccl/issues/{n}") for n in range(1, 13)]
    again = [split.split_of_url(f"https://github.com/NVIDIA/nccl/issues/{n}") for n in range(1, 13)]
    assert sides == again and set(sides) == {split.DEV, split.VALIDATION}
    share = sum(split.split_of_url(f"https://github.com/x/y/issues/{n}") == split.VALIDATION
                for n in range(3000)) / 3000
    assert 0.30 < share < 0.37


def test_every_corpus_case_has_a_thread_and_both_sides_are_used():
    cases = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((ROOT / "tests/corpus/cases").glob("*.json"))]
    logs = [json.loads(line) for p in sorted((ROOT / "tests/nccl/corpus").glob("*.jsonl"))
            for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    for group in (cases, logs):
        assert all(split.case_url(c) for c in group)
        sides = [split.split_of(c) for c in group]
        assert 0.2 < sides.count(split.VALIDATION) / len(sides) < 0.5


def test_a_case_without_a_thread_is_dev():
    assert split.split_of({"id": "synthetic"}) == split.DEV
    assert split.split_of({"source": {"repo": "a/b"}}) == split.DEV
