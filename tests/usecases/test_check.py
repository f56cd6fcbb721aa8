"""The check use case: findings sorted, for the interpreter asked about, and the envdoctor.check/1 document."""

from __future__ import annotations

import copy

from envdoctor.findings import exit_code, for_interpreter, sort_findings, summary
from envdoctor.usecases.check import CHECK_SCHEMA, check
from tests.conftest import bundled_knowledge, diagnose_bundled
from tests.json_schemas import assert_valid


def test_findings_are_the_rules_findings_most_severe_first(snapshot_of):
    snap = snapshot_of("rtx5090_old_torch")
    result = check(snap, bundled_knowledge())
    assert result.findings == sort_findings(diagnose_bundled(snap))
    assert result.findings and result.findings[0].severity == "error"
    assert result.summary == summary(result.findings)
    assert result.exit_code() == exit_code(result.findings) == 1


def test_the_document_is_envdoctor_check_1(snapshot_of):
    snap = snapshot_of("h100_8x_nvswitch")
    result = check(snap, bundled_knowledge())
    doc = result.to_json()
    assert_valid(doc)
    assert doc == {"schema": CHECK_SCHEMA, "snapshot": snap.to_json(), "findings": [f.to_json() for f in result.findings],
                   "summary": summary(result.findings)}


def test_the_fixes_name_the_interpreter_asked_about(snapshot_of):
    snap = snapshot_of("rtx5090_old_torch")
    python = "/opt/envs/train/bin/python"
    result = check(snap, bundled_knowledge(), python=python)
    assert result.findings == sort_findings(for_interpreter(diagnose_bundled(snap), python))
    assert any(python in f.fix for f in result.findings)


def test_a_baseline_adds_what_drifted(snapshot_of):
    snap = snapshot_of("h100_8x_nvswitch")
    before = copy.deepcopy(snap)
    before.torch.version = "2.4.1+cu121"
    plain = check(snap, bundled_knowledge())
    drift = check(snap, bundled_knowledge(), baseline=before)
    assert len(drift.findings) > len(plain.findings)
    assert drift.findings == sort_findings(diagnose_bundled(snap, before))


def test_strict_counts_warnings(snapshot_of):
    result = check(snapshot_of("a100_pcie_8x"), bundled_knowledge())  # warnings, no error
    assert result.summary["errors"] == 0 and result.summary["warnings"]
    assert (result.exit_code(), result.exit_code(strict=True)) == (0, 1)
