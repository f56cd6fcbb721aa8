"""The apply-a-fix and undo use cases: the installer's outcome as a typed result and its document; the compute
capabilities torch is verified on, built in one place."""

from __future__ import annotations

import pytest

from envdoctor.errors import InputError
from envdoctor.install import installer
from envdoctor.install.installer import Outcome
from envdoctor.usecases.apply_fix import apply_fix, verified_capabilities
from envdoctor.usecases.plan_fix import FixWishes, other_machine, plan_fix
from envdoctor.usecases.undo_fix import UNDO_SCHEMA, undo_fix
from tests.json_schemas import assert_valid
from tests.usecases.test_plan_fix import setup_for


def planned_here(snapshot, tmp_path, target=None):
    """A plan as if made for an interpreter here (its commands from the snapshot's: nothing is run)."""
    import dataclasses

    result = plan_fix(snapshot, setup_for(tmp_path), FixWishes(), None, target)
    return dataclasses.replace(result, python="/envs/train/bin/python")


def test_torch_is_verified_on_this_machines_gpus_and_on_none_for_a_target(snapshot_of, tmp_path):
    snap = snapshot_of("h100_8x_nvswitch")
    assert verified_capabilities(planned_here(snap, tmp_path)) == ["9.0"] * 8
    target = other_machine(gpu="12.0", driver="570.133.07")
    assert verified_capabilities(planned_here(snap, tmp_path, target)) == []


def test_applying_hands_the_plan_to_the_installer_and_returns_what_it_did(snapshot_of, tmp_path, monkeypatch):
    calls = []

    def execute(plan, python, ccs, progress, state_root, use_uv, break_system_packages=False, live=None):
        calls.append((python, ccs, state_root, use_uv, break_system_packages))
        progress("installing")
        return Outcome("rolled_back", "verification failed", [["pip", "install", "torch"]], {"torch": "2.4"},
                       {"torch": "2.4"}, rollback_ok=True)

    monkeypatch.setattr(installer, "execute", execute)
    planned = planned_here(snapshot_of("rtx5090_old_torch"), tmp_path)
    heard = []
    result = apply_fix(planned, setup_for(tmp_path), heard.append, break_system_packages=True)
    assert calls == [("/envs/train/bin/python", ["12.0"], tmp_path / "state", False, True)] and heard == ["installing"]
    assert (result.status, result.message, result.rollback_ok, result.exit_code()) == (
        "rolled_back", "verification failed", True, 3)
    doc = result.to_json()
    assert {k: doc[k] for k in ("status", "commands", "message", "rollback_ok")} == {
        "status": "rolled_back", "commands": [["pip", "install", "torch"]], "message": "verification failed",
        "rollback_ok": True}
    assert doc["packages"] == planned.to_json()["packages"]
    assert_valid(doc)


def test_a_plan_for_a_snapshot_from_elsewhere_is_not_applied(snapshot_of, tmp_path):
    result = plan_fix(snapshot_of("rtx5090_old_torch"), setup_for(tmp_path), FixWishes(), None)
    with pytest.raises(InputError, match="elsewhere"):
        apply_fix(result, setup_for(tmp_path), print)


def test_undo_returns_the_envdoctor_undo_1_document(monkeypatch, tmp_path):
    monkeypatch.setattr(installer, "undo", lambda python, progress, root: Outcome(
        "undone", "restored torch 2.4.1", before={"torch": "2.9.1"}, after={"torch": "2.4.1"}))
    result = undo_fix("/envs/train/bin/python", print, tmp_path)
    assert result.exit_code() == 0
    assert result.to_json() == {"schema": UNDO_SCHEMA, "status": "undone", "message": "restored torch 2.4.1",
                                "before": {"torch": "2.9.1"}, "after": {"torch": "2.4.1"}}
    monkeypatch.setattr(installer, "undo", lambda python, progress, root: Outcome("nothing_to_do", "no fix to undo"))
    assert undo_fix("/envs/train/bin/python", print, tmp_path).exit_code() == 3
