"""The labelled dev corpus (real failures from public issue threads, tests/nccl/corpus/*.jsonl): its cases
are well formed, name known categories, and are diagnosed as the threads established (bench/nccl_bench.py
measures the same corpus)."""

from __future__ import annotations

import json
from typing import Any, Dict, List

import pytest

from envdoctor.nccl import diagnose_text, load_rules
from tests.nccl.helpers import ROOT

CORPUS = ROOT / "tests" / "nccl" / "corpus"


def cases() -> List[Dict[str, Any]]:
    return [json.loads(line) for path in sorted(CORPUS.glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_cases_are_well_formed_and_name_known_categories() -> None:
    rows = cases()
    assert len(rows) >= 20 and len({c["id"] for c in rows}) == len(rows)
    categories = set(load_rules().categories)
    for case in rows:
        assert case["log"].strip() and case["source"]["url"].startswith("https://"), case["id"]
        assert case["category"] in categories, case["id"]


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["id"])
def test_labelled_cause_is_found(case: Dict[str, Any]) -> None:
    ranked = [f.category for f in diagnose_text(case["log"]).findings]
    if case.get("weak_log"):  # a paraphrase, not a raw log: the cause must still be among the first three
        assert case["category"] in ranked[:3], ranked
    else:
        assert ranked[:1] == [case["category"]], ranked
