"""Compatibility tables (rules/tables/): each fact once, validated on load, read by machine and NCCL rules alike."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.knowledge import load_knowledge
from envdoctor.nccl import diagnose_text
from envdoctor.nccl import load_rules as load_nccl_rules
from envdoctor.rules.tables import load_tables
from envdoctor.snapshot import load_snapshot
from envdoctor.wheels.index import bundled_path
from tests.conftest import ROOT, diagnose_bundled, fixture_path

BLACKWELL_LOG = """rtx:7:7 [0] NCCL INFO NCCL version 2.27.3+cuda12.8
NVIDIA GeForce RTX 5090 with CUDA capability sm_120
rtx:7:40 [0] enqueue.cc:93 NCCL WARN ncclMaxSharedMem 99136 exceeds device/fn maxSharedMem 101376
"""


def _rules_copy(tmp_path: Path, blackwell_nccl: str) -> Path:
    d = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", d)
    path = d / "tables" / "nccl_min_for_gpu.json"
    doc = json.loads(path.read_text())
    next(r for r in doc["rows"] if r["key"] == "blackwell")["nccl"] = blackwell_nccl
    path.write_text(json.dumps(doc))
    return d


def _blackwell_with_nccl(version: str):
    snap = load_snapshot(fixture_path("rtx5090_old_torch"))
    return dataclasses.replace(snap, torch=dataclasses.replace(snap.torch, nccl=version))


def _nccl_too_old_score(report) -> float:
    return next((f.score for f in report.findings if f.category == "nccl_too_old_for_gpu"), 0.0)


def test_one_nccl_too_old_fact_drives_the_machine_rule_and_the_nccl_context_rule(tmp_path):
    snap = _blackwell_with_nccl("2.27.3")
    bundled_nccl = load_nccl_rules()
    assert "ED405" not in {f.id for f in diagnose_bundled(snap)}  # 2.27.3 >= 2.26: fine
    before = _nccl_too_old_score(diagnose_text(BLACKWELL_LOG, rules=bundled_nccl))

    d = _rules_copy(tmp_path, "2.30")  # the one fact, changed in its one place
    know = load_knowledge(d, bundled_path())
    from envdoctor.diagnose import diagnose

    ed405 = [f for f in diagnose(snap, know.rules, know.index) if f.id == "ED405"]
    assert ed405 and "needs >= 2.30" in ed405[0].title
    edited = load_nccl_rules(d / "nccl", d / "tables")
    after = diagnose_text(BLACKWELL_LOG, rules=edited)
    assert _nccl_too_old_score(after) >= before + 8  # blackwell-with-old-nccl now holds
    assert any("NCCL 2.30 or newer" in w for f in after.findings for w in f.why)
    assert "Blackwell (B200, RTX 50xx) >= 2.30" in edited.categories["nccl_too_old_for_gpu"].fix


def test_a_bad_table_is_one_clear_error(tmp_path):
    d = _rules_copy(tmp_path, "two.six")
    with pytest.raises(InputError) as info:
        load_tables(d / "tables")
    msg = str(info.value)
    assert msg.startswith("invalid compatibility tables:") and "nccl_min_for_gpu.json: rows[0]: bad or missing nccl" in msg


def test_an_unknown_table_reference_is_a_load_error(tmp_path):
    d = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", d)
    path = d / "nccl" / "categories.json"
    path.write_text(path.read_text().replace("{table:nccl_min_for_gpu.hopper}", "{table:nccl_min_for_gpu.volta}"))
    with pytest.raises(InputError, match="no table entry 'nccl_min_for_gpu.volta'"):
        load_nccl_rules(d / "nccl", d / "tables")


def test_the_rules_cache_follows_file_changes(tmp_path):
    import os

    from envdoctor.rules.registry import load_rulebook

    d = tmp_path / "rules"
    shutil.copytree(ROOT / "rules", d, ignore=shutil.ignore_patterns("nccl"))
    first = load_rulebook(d)
    assert load_rulebook(d) is first
    path = d / "tables" / "shm.json"
    doc = json.loads(path.read_text())
    doc["min_mib"] = 2048
    st = path.stat()
    path.write_text(json.dumps(doc))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime: the size still tells
    again = load_rulebook(d)
    assert again is not first and again.tables.shm_min_mib == 2048
