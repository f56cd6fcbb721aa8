"""The corpus of machines rebuilt from public reports: every case is well formed and builds a valid snapshot."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))

import build

CASE_FILES = build.case_files()
KNOWN = set(build.CATEGORIES) | {build.HEALTHY}
# A survey case may name a mechanism envdoctor has no category for yet (it measures the gap).
SURVEY_KNOWN = KNOWN | set(build.SURVEY_MECHANISMS)
ALSO_OK = set(build.CATEGORIES) | set(build.OTHER_CATEGORIES)


def test_corpus_size_and_coverage() -> None:
    cases = [build.load_case(p) for p in CASE_FILES]
    assert len(cases) >= 45
    assert sum(c["category"] == build.HEALTHY for c in cases) >= 8
    assert len({c["category"] for c in cases}) >= 15


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case_is_well_formed(path: Path) -> None:
    case = build.load_case(path)
    url = urlparse(case["source"])
    assert url.scheme == "https" and url.netloc, case["source"]
    assert case["settled_by"].strip()
    survey = case["id"].startswith("survey-")
    assert case["category"] in (SURVEY_KNOWN if survey else KNOWN)
    assert set(case["expect"]) <= set(build.CATEGORIES) | (set(build.SURVEY_MECHANISMS) if survey else set())
    assert set(case["also_ok"]) <= ALSO_OK
    assert not set(case["expect"]) & set(case["also_ok"])
    if case["category"] == build.HEALTHY:
        assert case["expect"] == []
    else:
        assert case["expect"], "a broken machine must expect at least one finding"


@pytest.mark.parametrize("path", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_case_builds_a_valid_snapshot(path: Path) -> None:
    case = build.load_case(path)
    snapshot = build.build_snapshot(case)
    assert build.validate(snapshot) == []
    assert_stated_facts_kept(case["snapshot"], snapshot, "")


def assert_stated_facts_kept(stated: object, built: object, where: str) -> None:
    """Every fact the case states is in the built snapshot unchanged; the builder only adds nulls."""
    if isinstance(stated, dict):
        assert isinstance(built, dict), where
        for key, value in stated.items():
            assert key in built, f"{where}.{key}"
            assert_stated_facts_kept(value, built[key], f"{where}.{key}")
    elif isinstance(stated, list):
        assert isinstance(built, list) and len(built) == len(stated), where
        for i, (a, b) in enumerate(zip(stated, built)):
            assert_stated_facts_kept(a, b, f"{where}[{i}]")
    else:
        assert built == stated, where


def test_unstated_fields_are_bare_nulls() -> None:
    case = {"id": "x", "source": "https://example.org", "settled_by": "-", "category": "healthy",
            "expect": [], "also_ok": [], "notes": "",
            "snapshot": {"host": {"os": "linux", "arch": "x86_64"}, "python": {"version": "3.11"},
                         "torch": {"importable": True, "version": "2.5.1+cu124"}}}
    snapshot = build.build_snapshot(case)
    assert snapshot["driver"] is None and snapshot["cuda_toolkit"] is None
    assert snapshot["torch"]["cuda"] is None and snapshot["host"]["glibc"] is None
    assert snapshot["absent"] == {}  # unknown, never "known not to exist"
    assert snapshot["gpus"] == []
    nvml = next(p for p in snapshot["probes"] if p["name"] == "nvml")
    assert nvml["status"] == "skipped"  # an empty GPU list here means "not probed", not "no GPUs"
    torch_probe = next(p for p in snapshot["probes"] if p["name"] == "torch")
    assert torch_probe["status"] == "ok"
    assert build.validate(snapshot) == []


def test_bad_case_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text(json.dumps({"id": "broken"}), encoding="utf-8")
    with pytest.raises(build.CaseError, match="broken.json: missing keys"):
        build.load_case(bad)
    wrong_id = tmp_path / "other.json"
    wrong_id.write_text(json.dumps({k: [] for k in build.CASE_KEYS} | {"id": "x"}), encoding="utf-8")
    with pytest.raises(build.CaseError, match="differs from the file name"):
        build.load_case(wrong_id)
