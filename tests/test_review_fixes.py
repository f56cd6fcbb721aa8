"""Cases an independent review found: the planner and the rules must agree with each other and with FACTS.md."""

from __future__ import annotations

import json

import pytest

from envdoctor import compat
from envdoctor.snapshot import load_snapshot, snapshot_from_json
from envdoctor.wheels.index import load_index
from envdoctor.wheels.planner import Wishes, facts_from_snapshot, plan
from tests.conftest import diagnose_bundled, fixture_path


def _plan(snap, **wishes):
    return plan(facts_from_snapshot(snap), load_index(), Wishes(**wishes))


@pytest.mark.parametrize("cc, os_name, need", [
    ("10.0", "linux", "570.26"), ("10.3", "linux", "570.26"), ("12.0", "linux", "570.26"), ("12.1", "linux", "570.26"),
    ("12.0", "windows", "570.65"), ("9.0", "linux", None), ("8.9", "windows", None),
])
def test_blackwell_needs_r570_by_major_version(cc, os_name, need):
    assert compat.gpu_min_driver(cc, os_name) == need


@pytest.mark.parametrize("cc", ["10.0", "10.3", "12.1"])
def test_old_driver_blackwell_is_impossible_for_fix_and_an_error_for_check(cc):
    snap = load_snapshot(fixture_path("b200_driver_575"))
    snap.driver.version = "565.57.01"
    for g in snap.gpus:
        g.compute_capability = cc
    p = _plan(snap)
    assert p.status == "impossible" and p.upgrade == ["driver >= 570.26"]
    assert "ED107" in {f.id for f in diagnose_bundled(snap)}


def test_wsl_blackwell_uses_the_windows_driver_minimum():
    snap = load_snapshot(fixture_path("wsl2_rtx4090"))
    snap.gpus[0].compute_capability = "12.0"
    snap.driver.version = "566.36"
    assert "ED107" in {f.id for f in diagnose_bundled(snap)}
    snap.driver.version = "572.16"
    assert "ED107" not in {f.id for f in diagnose_bundled(snap)}


def test_hidden_cuda_keeps_the_right_torch():
    p = _plan(load_snapshot(fixture_path("h100_cuda_hidden")))
    assert p.status == "nothing_to_do" and p.kept == ["torch 2.5.1+cu124"]
    assert any("reinstalling would not help" in n for n in p.notes)


def test_empty_arch_list_is_unknown_not_broken():
    snap = load_snapshot(fixture_path("h200_8x_healthy"))
    snap.torch.arch_list = []
    assert _plan(snap).status == "nothing_to_do"
    assert not [f for f in diagnose_bundled(snap) if f.severity != "info"]


@pytest.mark.parametrize("name", ["deepspeed_broken", "deepspeed_stale_ops"])
def test_fix_deepspeed_replaces_a_broken_deepspeed(name):
    p = _plan(load_snapshot(fixture_path(name)), deepspeed=True)
    assert [pkg.name for pkg in p.packages] == ["deepspeed"]


def test_unreadable_driver_version_is_unknown_not_old():
    snap = load_snapshot(fixture_path("driver_version_junk"))
    ids = {f.id for f in diagnose_bundled(snap)}
    assert "ED110" in ids and not ids & {"ED101", "ED210"}
    p = _plan(snap)
    assert p.status == "impossible" and "unknown" in p.reason and "driver >= " not in " ".join(p.upgrade)


def test_deepspeed_notes_follow_nvcc():
    snap = load_snapshot(fixture_path("v100_cuda13_build"))
    notes = " ".join(_plan(snap, deepspeed=True).notes)
    assert "cannot compile for compute capability 7.0" in notes and "TORCH_CUDA_ARCH_LIST=7.0" not in notes
    data = json.loads(fixture_path("h100_8x_nvswitch").read_text())
    notes = " ".join(_plan(snapshot_from_json(data), deepspeed=True).notes)
    assert "TORCH_CUDA_ARCH_LIST" not in notes  # nvcc 12.4 targets every arch DeepSpeed lists


@pytest.mark.parametrize("url", ["http://", "https:///whl", "http://mirror .example/whl", "http://mirror/whl\nx",
                                 "ftp://mirror/whl", "file://"])
def test_bad_index_base_is_exit_2(url):
    from tests.conftest import run_cli

    res = run_cli(["fix", "--snapshot", str(fixture_path("t4_cpu_torch")), "--dry-run", "--index-base", url])
    assert res.returncode == 2 and "--index-base" in res.stderr and "Traceback" not in res.stderr


def test_deeply_nested_json_is_exit_2(tmp_path):
    from tests.conftest import run_cli

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    for args, env in ((["check", "--snapshot", str(deep)], None),
                      (["check", "--snapshot", str(fixture_path("b200_driver_575"))], {"ENVDOCTOR_WHEELS_INDEX": str(deep)}),
                      (["fix", "--snapshot", str(fixture_path("b200_driver_575")), "--dry-run"],
                       {"ENVDOCTOR_WHEELS_INDEX": str(deep)})):
        res = run_cli(args, env=env)
        assert res.returncode == 2 and "nested too deeply" in res.stderr and "Traceback" not in res.stderr
