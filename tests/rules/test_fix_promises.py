"""A finding's fix says what `envdoctor fix` will really do on that machine (issue 31): no promise of a torch that
runs when the driver predates the GPU (fix plans nothing then), no GPU words on a machine without one."""

from __future__ import annotations

from envdoctor.snapshot import load_snapshot
from envdoctor.wheels.planner import plan
from envdoctor.wheels.wishes import Wishes
from tests.conftest import bundled_knowledge, diagnose_bundled, fixture_path


def _fix(snap, rule):
    return next(f.fix for f in diagnose_bundled(snap) if f.id == rule)


def test_no_kernels_on_a_driver_that_predates_the_gpu_says_upgrade_the_driver_first():
    snap = load_snapshot(fixture_path("rtx5090_driver_565"))
    assert plan(snap, bundled_knowledge().index, Wishes()).status == "impossible"
    fix = _fix(snap, "ED102")
    assert "upgrade the NVIDIA driver first" in fix and "plans nothing" in fix and ">= 570.26" in fix
    assert "chooses one that runs" not in fix


def test_no_kernels_with_a_driver_that_fits_says_fix_chooses_a_build():
    snap = load_snapshot(fixture_path("rtx5090_old_torch"))
    assert plan(snap, bundled_knowledge().index, Wishes()).status == "planned"
    fix = _fix(snap, "ED102")
    assert "`envdoctor fix --yes`" in fix and "chooses one that runs on every GPU with this driver" in fix


def test_torch_not_installed_on_a_machine_without_a_gpu_names_the_cpu_build():
    snap = load_snapshot(fixture_path("gtx1080ti_no_torch"))
    snap.gpus = []
    assert plan(snap, bundled_knowledge().index, Wishes()).torch.variant == "cpu"
    fix = _fix(snap, "ED108")
    assert "the CPU build on a machine without an NVIDIA GPU" in fix
    assert not fix.rstrip(".").endswith("runs on every GPU with this driver")
