"""NCCL cause ids carry the prefix once (issue 31): the cause nccl_oom is NCCL-OOM, never NCCL-NCCL-OOM; the old
double-prefixed ids stay accepted wherever an id is typed (`rules explain`, `fix --only/--skip`)."""

from __future__ import annotations

import dataclasses

from envdoctor.cli import main
from envdoctor.findings import current_id
from envdoctor.knowledge import bundled_catalog
from envdoctor.nccl import diagnose_text
from envdoctor.wheels.planner import Plan
from envdoctor.wheels.steps import FixStep, select, settle

OOM_LOG = ("gpu-a:911:930 [1] transport/p2p.cc:220 NCCL WARN Cuda failure 'out of memory'\n"
           "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)\n")
RENAMED = {"nccl_env_misconfig": "NCCL-ENV-MISCONFIG", "nccl_library_mismatch": "NCCL-LIBRARY-MISMATCH",
           "nccl_oom": "NCCL-OOM", "nccl_too_old_for_gpu": "NCCL-TOO-OLD-FOR-GPU",
           "nccl_version_regression": "NCCL-VERSION-REGRESSION"}


def test_every_nccl_cause_id_has_the_prefix_once():
    entries = [e for e in bundled_catalog() if e.kind == "nccl"]
    assert entries and not [e.id for e in entries if e.id.startswith("NCCL-NCCL-")]
    assert {e.name: e.id for e in entries if e.name in RENAMED} == RENAMED


def test_a_diagnosis_carries_the_new_id_in_its_json():
    [top, *_] = diagnose_text(OOM_LOG).findings
    assert top.category == "nccl_oom" and top.to_nccl_json()["id"] == "NCCL-OOM"


def test_rules_explain_takes_the_old_id_as_an_alias(capsys):
    assert main(["rules", "explain", "NCCL-NCCL-OOM"]) == 0
    old = capsys.readouterr().out
    assert main(["rules", "explain", "NCCL-OOM"]) == 0
    assert old == capsys.readouterr().out and old.startswith("NCCL-OOM")


def test_the_old_id_names_the_same_step_for_only_and_skip():
    assert current_id(" NCCL-NCCL-OOM") == "NCCL-OOM" and current_id("nccl-nccl-oom") == "NCCL-oom"
    assert current_id("ED101") == "ED101" and current_id("NCCL-SHM-EXHAUSTED") == "NCCL-SHM-EXHAUSTED"
    plan = Plan(status="planned", reason="")
    plan.steps.append(FixStep(id="S1", kind="requirements", findings=["NCCL-OOM"], requirements=["x==1"], reason="r"))
    plan.steps.append(dataclasses.replace(plan.steps[0], id="S2", findings=["ED501"], requirements=["y==1"]))
    settle(plan)
    assert select(plan, skip=("NCCL-NCCL-OOM",)) == []
    assert [s.status for s in plan.steps] == ["skipped", "planned"] and plan.requirements == ["y==1"]


def test_rules_list_names_no_old_id(capsys):
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    assert "NCCL-OOM " in out and "NCCL-NCCL-" not in out
