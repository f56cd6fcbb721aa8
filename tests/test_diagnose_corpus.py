"""The diagnose corpus (tests/diagnose/corpus) is well formed, and bench/diagnose_bench.py scores right.

The corpus measures `envdoctor diagnose` on real posted texts; these tests check its shape (every line
valid, every text present, ids unique, the split by thread hash, labels that exist, its size and spread)
and the bench's scoring on small hand-made result documents. No test here requires a diagnosis to be right.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from datetime import date
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "diagnose" / "corpus"))

import corpus  # noqa: E402


def _bench():
    spec = importlib.util.spec_from_file_location("diagnose_bench", ROOT / "bench" / "diagnose_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bench = _bench()
CASES = corpus.cases()


def test_every_index_line_has_exactly_the_documented_keys_with_valid_values():
    for case in CASES:
        assert tuple(case) == corpus.KEYS, case["id"]
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", case["id"]), case["id"]
        assert set(case["source"]) == {"url", "title"}
        assert case["source"]["url"].startswith("https://github.com/"), case["id"]
        assert case["source"]["title"].strip(), case["id"]
        assert case["date"] is None or date.fromisoformat(case["date"]), case["id"]
        assert case["kinds"] and set(case["kinds"]) <= set(corpus.KINDS), case["id"]
        assert len(set(case["kinds"])) == len(case["kinds"]), case["id"]
        assert case["settled"] in corpus.SETTLED, case["id"]
        assert len(case["settled_by"].strip()) > 20, case["id"]
        assert case["query"].strip() and isinstance(case["rank"], int) and case["rank"] >= 1, case["id"]
        assert isinstance(case["negative_control"], bool)
        assert isinstance(case["notes"], str)


def test_ids_and_threads_are_unique():
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    threads = [corpus.split.normalise(c["source"]["url"]) for c in CASES]
    assert len(threads) == len(set(threads)), "one case per thread"


def test_every_case_has_a_non_empty_text_and_no_text_lacks_a_case():
    for case in CASES:
        assert corpus.text_of(case).strip(), case["id"]
    files = {p.stem for p in corpus.TEXTS.glob("*.txt")}
    assert files == {c["id"] for c in CASES}


def test_split_is_the_thread_hash():
    for case in CASES:
        assert case["split"] == corpus.split.split_of_url(case["source"]["url"]), case["id"]
    sides = {c["split"] for c in CASES}
    assert sides == {"dev", "validation"}


def test_every_label_is_a_known_category_or_a_defined_mechanism():
    known = corpus.known_labels()
    for case in CASES:
        for label in case["expect"] + case["also_ok"] + [case["mechanism"]]:
            assert label in known, (case["id"], label)


def test_readme_defines_every_slug_it_adds_with_a_definition():
    defined = corpus.readme_mechanisms()
    assert {"gpu_oom_batch_size", "user_code_error", "environment_healthy"} <= set(defined)
    assert all(len(d) > 20 for d in defined.values())


def test_causes_expect_something_and_controls_expect_nothing():
    for case in CASES:
        if case["negative_control"]:
            assert case["expect"] == [] and case["also_ok"] == [], case["id"]
        else:
            assert case["expect"], case["id"]
            assert not set(case["expect"]) & set(case["also_ok"]), case["id"]


def test_size_and_spread():
    assert len(CASES) >= 150
    assert sum(c["negative_control"] for c in CASES) >= 25
    kinds = {k for c in CASES for k in c["kinds"]}
    assert len(kinds - {"other"}) >= 8
    assert len({c["mechanism"] for c in CASES}) >= 25
    assert len({c["query"] for c in CASES}) >= 30


def test_no_query_gives_more_than_four_cases():
    per_query: dict = {}
    for case in CASES:
        per_query.setdefault(case["query"], []).append(case["rank"])
    for query, ranks in per_query.items():
        assert len(ranks) <= 4 and len(ranks) == len(set(ranks)), query


# --- the bench's scoring on hand-made documents --------------------------------------------------------------

def _doc(*findings):
    return {"schema": "envdoctor.diagnose/1", "inputs": [], "sections": [],
            "findings": [{"id": f"F{i}", "category": c, "severity": s, "confidence": conf, "evidence": []}
                         for i, (c, s, conf) in enumerate(findings)]}


CAUSE = {"id": "c1", "negative_control": False, "expect": ["driver_too_old"], "also_ok": ["cuda_unavailable"]}
CONTROL = {"id": "n1", "negative_control": True, "expect": [], "also_ok": []}


def test_top1_right_when_the_first_finding_is_expected():
    row = bench.score_case(CAUSE, _doc(("driver_too_old", "error", "high"), ("cuda_unavailable", "warning", "low")))
    assert row["top1"] and row["top3"] and row["right"]
    assert row["top_confidence"] == "high"


def test_top3_only_when_the_expected_cause_is_second_or_third():
    row = bench.score_case(CAUSE, _doc(("nccl_oom", "error", "low"), ("x", "warning", "low"),
                                       ("driver_too_old", "error", "high")))
    assert not row["top1"] and row["top3"] and not row["right"]
    row = bench.score_case(CAUSE, _doc(*[(f"c{i}", "error", "low") for i in range(3)], ("driver_too_old", "error", "high")))
    assert not row["top3"]


def test_also_ok_first_is_not_top1():
    row = bench.score_case(CAUSE, _doc(("cuda_unavailable", "error", "medium")))
    assert not row["top1"] and row["also_ok_top1"]


def test_no_findings_is_wrong_for_a_cause_and_right_for_a_control():
    assert not bench.score_case(CAUSE, _doc())["right"]
    assert bench.score_case(CONTROL, _doc())["right"]
    assert bench.score_case(CONTROL, {"findings": None})["right"]


def test_a_control_is_wrong_on_any_error_and_right_with_warnings_only():
    assert bench.score_case(CONTROL, _doc(("gpu_oom", "warning", "low"), ("triton", "info", "low")))["right"]
    row = bench.score_case(CONTROL, _doc(("gpu_oom", "error", "high")))
    assert not row["right"] and row["false_errors"] == ["gpu_oom"]


def test_summary_separates_splits_and_counts_each_kind_and_mechanism():
    cases = [dict(CAUSE, id="a", split="dev", kinds=["traceback", "collect_env"], mechanism="driver_too_old"),
             dict(CAUSE, id="b", split="validation", kinds=["traceback"], mechanism="driver_too_old"),
             dict(CONTROL, id="c", split="dev", kinds=["cuda_error"], mechanism="gpu_oom_batch_size")]
    rows = [bench.score_case(cases[0], _doc(("driver_too_old", "error", "high"))),
            bench.score_case(cases[1], _doc(("cuda_unavailable", "error", "high"))),
            bench.score_case(cases[2], _doc(("gpu_oom", "error", "low")))]
    s = bench.summarise(cases, rows)
    assert s["dev"]["total"] == {"cases": 2, "causes": 1, "top1": 1, "top3": 1, "controls": 1,
                                 "controls_right": 0, "high": 1, "high_right": 1, "failures": 0}
    assert s["validation"]["total"]["top1"] == 0 and s["validation"]["total"]["high"] == 1
    assert s["dev"]["by_kind"]["collect_env"]["top1"] == 1 and s["dev"]["by_kind"]["traceback"]["causes"] == 1
    assert s["dev"]["by_mechanism"]["gpu_oom_batch_size"]["controls"] == 1
    text = bench.report(s)
    assert "== dev" in text and "== validation" in text and "by mechanism" in text


def test_a_failing_run_is_a_wrong_answer_recorded_as_a_failure():
    def boom(text, path):
        raise RuntimeError("engine crashed")
    rows = bench.measure([dict(CAUSE, id=CASES[0]["id"])], boom)
    assert rows[0]["right"] is False and "engine crashed" in rows[0]["failure"]


def test_documents_are_read_from_typed_values():
    class Result:
        def to_document(self):
            return {"findings": [{"category": "driver_too_old", "severity": "error"}]}
    assert bench._as_document(Result())["findings"][0]["category"] == "driver_too_old"
    assert bench._as_document('{"findings": []}') == {"findings": []}


def test_bench_says_cleanly_when_diagnose_is_missing(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(bench, "in_process_runner", lambda: None)
    monkeypatch.setattr(bench, "cli_available", lambda: False)
    assert bench.main(["--out", str(tmp_path / "r.json")]) == 2
    assert "envdoctor diagnose is missing" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_bench_writes_dev_rows_only(monkeypatch, tmp_path):
    import json
    monkeypatch.setattr(bench, "pick_runner", lambda force_cli=False: (lambda text, path: _doc()))
    out = tmp_path / "r.json"
    assert bench.main(["--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    dev = {c["id"] for c in CASES if c["split"] == "dev"}
    assert {r["id"] for r in doc["dev_cases"]} == dev
    assert doc["summary"]["validation"]["total"]["cases"] == len(CASES) - len(dev)


def test_an_unreadable_use_case_falls_back_to_the_cli(monkeypatch):
    def wrong_signature(text, path):
        raise TypeError("diagnose_text() missing 1 required positional argument")
    monkeypatch.setattr(bench, "in_process_runner", lambda: wrong_signature)
    monkeypatch.setattr(bench, "cli_available", lambda: True)
    assert bench.pick_runner() is bench.cli_run
    monkeypatch.setattr(bench, "in_process_runner", lambda: (lambda text, path: _doc()))
    assert bench.pick_runner() is not bench.cli_run


def test_unknown_case_id_exits_2(capsys):
    assert bench.main(["no-such-case"]) == 2


@pytest.mark.parametrize("case", [c for c in CASES if c["negative_control"]], ids=lambda c: c["id"])
def test_controls_name_a_non_environment_mechanism(case):
    assert case["mechanism"] in {"gpu_oom_batch_size", "user_code_error", "data_label_out_of_range",
                                 "environment_healthy", "user_setup_error", "not_environment", "engine_config_exceeds_memory",
                                 "model_config_error"}


def test_a_signature_finding_names_the_mechanism_its_id_is_made_from():
    case = {"id": "c2", "negative_control": False, "expect": ["driver_library_mismatch"], "also_ok": []}
    doc = {"findings": [{"id": "TXT-DRIVER-LIBRARY-MISMATCH", "category": "cuda_unavailable", "severity": "error"}]}
    assert bench.score_case(case, doc)["top1"] and bench.score_case(case, doc, strict=True)["top1"]
    other = {"findings": [{"id": "TXT-NO-NVIDIA-DRIVER", "category": "cuda_unavailable", "severity": "error"}]}
    assert not bench.score_case(case, other)["top1"]


def test_a_machine_rule_names_the_mechanisms_the_table_gives_it_unless_strict():
    case = {"id": "c3", "negative_control": False, "expect": ["driver_library_mismatch"], "also_ok": []}
    doc = {"findings": [{"id": "ED112", "category": "cuda_unavailable", "severity": "error"}]}
    assert "driver_library_mismatch" in bench.RULE_MECHANISMS["ED112"]
    assert bench.score_case(case, doc)["top1"]
    assert not bench.score_case(case, doc, strict=True)["top1"]
