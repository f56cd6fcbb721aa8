"""The labelled corpora (real failures from public issue threads, tests/nccl/corpus/*.jsonl): their cases are
well formed, name known categories, and are diagnosed as the threads established (bench/nccl_bench.py
measures the same corpora).

`dev.jsonl` holds the cases the signatures were first written from: each must rank first. `real_nccl.jsonl`
holds later real cases, some of them honestly ambiguous logs (a bare 'unhandled system error' from two
containers): there the cause must be among the first three, and the corpus as a whole must reach the targets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from envdoctor.nccl import diagnose_text, load_rules
from tests.nccl.helpers import ROOT

CORPUS_DIR = ROOT / "tests" / "nccl" / "corpus"
DEV = CORPUS_DIR / "dev.jsonl"
REAL = CORPUS_DIR / "real_nccl.jsonl"
DIST = CORPUS_DIR / "real_dist.jsonl"  # torch.distributed failures that carry no NCCL WARN
MORE = CORPUS_DIR / "real_more.jsonl"  # real cases collected after the signatures were tuned, as a check of generality
# Cases rebuilt from the failure survey (tests/corpus/survey.jsonl), both splits: they measure envdoctor on threads
# nobody tuned on, so they are held to no accuracy target, and may name a survey mechanism envdoctor has no cause for.
SURVEY = CORPUS_DIR / "survey_logs.jsonl"
MECHANISMS = json.loads((ROOT / "tests" / "corpus" / "mechanisms.json").read_text(encoding="utf-8"))
TOP1_TARGET, TOP3_TARGET = 0.90, 0.95


def cases(path: Path = DEV) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def all_cases() -> List[Dict[str, Any]]:
    return [c for path in sorted(CORPUS_DIR.glob("*.jsonl")) for c in cases(path)]


def test_cases_are_well_formed_and_name_known_categories() -> None:
    rows = all_cases()
    assert len(cases(DEV)) >= 20 and len(cases(REAL)) >= 40
    assert len({c["id"] for c in rows}) == len(rows), "case ids are unique across the corpora"
    categories = set(load_rules().categories)
    survey_ids = {c["id"] for c in cases(SURVEY)}
    for case in rows:
        assert case["log"].strip() and case["root_cause"].strip() and case["fix"].strip(), case["id"]
        known = categories | set(MECHANISMS) if case["id"] in survey_ids else categories
        assert case["category"] in known and case["source"]["url"].startswith("https://"), case["id"]
    for case in cases(REAL):
        assert case["source"]["url"].startswith("https://github.com/"), case["id"]
        assert case["confidence"] in ("high", "medium"), case["id"]
    urls = [c["source"]["url"] for c in cases(REAL)]
    assert len(set(urls)) == len(urls), "one case per thread"
    more = cases(MORE)
    assert len(more) >= 10
    for case in more:
        assert case["source"]["url"].startswith("https://github.com/"), case["id"]
        assert case["confidence"] in ("high", "medium"), case["id"]
    more_urls = [c["source"]["url"] for c in more]
    others = {c["source"]["url"] for path in CORPUS_DIR.glob("*.jsonl") if path != MORE for c in cases(path)}
    assert len(set(more_urls)) == len(more_urls) and not set(more_urls) & others, "threads not seen before, once each"


@pytest.mark.parametrize("case", cases(DEV) + cases(DIST), ids=lambda c: c["id"])
def test_labelled_cause_is_found(case: Dict[str, Any]) -> None:
    ranked = [f.category for f in diagnose_text(case["log"]).findings]
    if case.get("weak_log"):  # a paraphrase, not a raw log: the cause must still be among the first three
        assert case["category"] in ranked[:3], ranked
    else:
        assert ranked[:1] == [case["category"]], ranked


@pytest.mark.parametrize("case", cases(REAL), ids=lambda c: c["id"])
def test_real_case_cause_is_among_the_first_three(case: Dict[str, Any]) -> None:
    ranked = [f.category for f in diagnose_text(case["log"]).findings]
    assert case["category"] in ranked[:3], ranked


@pytest.mark.parametrize("case", cases(MORE), ids=lambda c: c["id"])
def test_later_real_case_ranks_first(case: Dict[str, Any]) -> None:
    ranked = [f.category for f in diagnose_text(case["log"]).findings]
    assert ranked[:1] == [case["category"]], ranked


def test_survey_cases_are_new_threads_once_each() -> None:
    survey = cases(SURVEY)
    assert len(survey) >= 20
    for case in survey:
        assert case["id"].startswith("survey-") and case["source"]["url"].startswith("https://github.com/"), case["id"]
        assert case["confidence"] in ("high", "medium"), case["id"]
    urls = [c["source"]["url"] for c in survey]
    others = {c["source"]["url"] for path in CORPUS_DIR.glob("*.jsonl") if path != SURVEY for c in cases(path)}
    assert len(set(urls)) == len(urls) and not set(urls) & others


def test_corpus_reaches_the_accuracy_targets() -> None:
    # The survey cases measure (bench/nccl_bench.py reports them); the targets hold for the tuned corpora.
    rows = [c for path in sorted(CORPUS_DIR.glob("*.jsonl")) if path != SURVEY for c in cases(path)]
    ranked = [[f.category for f in diagnose_text(c["log"]).findings] for c in rows]
    top1 = sum(r[:1] == [c["category"]] for c, r in zip(rows, ranked)) / len(rows)
    top3 = sum(c["category"] in r[:3] for c, r in zip(rows, ranked)) / len(rows)
    assert top1 >= TOP1_TARGET and top3 >= TOP3_TARGET, (top1, top3)
