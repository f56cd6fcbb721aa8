"""Driver x CUDA x compute capability, exhaustively, against expectations written by hand from
facts/FACTS.md (sections 1a-3), and through the rules that use them."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envdoctor import compat
from envdoctor.rules.engine import evaluate_rule
from envdoctor.rules.registry import load_rules
from envdoctor.snapshot import load_snapshot
from envdoctor.wheels.index import bundled_path, read_index
from tests.conftest import bundled_knowledge, diagnose_bundled, fixture_path

DRIVERS = ["418.39", "450.51.06", "450.80.02", "470.256.02", "515.65.01", "520.61.05", "525.60.12", "525.60.13",
           "535.104.05", "550.54.15", "560.35.03", "570.124.06", "575.57.08", "579.99", "580.65.06", "590.44.01"]
DRIVER_TABLE = read_index(bundled_path()).drivers
CUDAS = ["11.7", "11.8", "12.1", "12.4", "12.6", "12.8", "12.9", "13.0", "13.2"]
# Lowest driver index (into DRIVERS) that runs each CUDA on Linux: 11.x from 450.80.02, 12.x from
# 525.60.13, 13.x from R580 (580.65.06); minor-version compatibility never crosses a major.
FIRST_OK = {"11.7": 2, "11.8": 2, "12.1": 7, "12.4": 7, "12.6": 7, "12.8": 7, "12.9": 7, "13.0": 14, "13.2": 14}


@pytest.mark.parametrize("driver, cuda", list(itertools.product(range(len(DRIVERS)), CUDAS)))
def test_linux_driver_x_cuda(driver, cuda):
    verdict = compat.driver_supports(DRIVERS[driver], cuda, "linux", drivers=DRIVER_TABLE)
    assert verdict.ok is (driver >= FIRST_OK[cuda]), verdict.why
    if not verdict.ok:
        assert compat.min_driver(cuda, "linux", drivers=DRIVER_TABLE)[0] == DRIVERS[FIRST_OK[cuda]]


@pytest.mark.parametrize("driver, cuda, ok", [
    ("452.39", "11.8", True), ("452.06", "11.8", False), ("528.33", "12.4", True), ("527.41", "12.1", False),
    ("566.36", "12.6", True), ("576.57", "13.0", False), ("580.88", "13.0", True),
])
def test_windows_and_wsl_minimums(driver, cuda, ok):
    assert compat.driver_supports(driver, cuda, "windows", drivers=DRIVER_TABLE).ok is ok


def test_minor_version_compat_is_flagged_in_the_reason():
    assert "minor-version compatibility" in compat.driver_supports("535.104.05", "12.8", drivers=DRIVER_TABLE).why
    assert "minor-version" not in compat.driver_supports("575.57.08", "12.8", drivers=DRIVER_TABLE).why
    assert not compat.ptx_jit_ok("575.57.08", "13.0", drivers=DRIVER_TABLE)


@given(st.integers(400, 700), st.integers(0, 200), st.sampled_from(CUDAS))
def test_newer_drivers_never_lose_support(major, minor, cuda):
    older = f"{major}.{minor}"
    newer = f"{major + 1}.{minor}"
    if compat.driver_supports(older, cuda, drivers=DRIVER_TABLE).ok:
        assert compat.driver_supports(newer, cuda, drivers=DRIVER_TABLE).ok


# Compute capability x arch list -> the kernel that runs (None: "no kernel image is available").
ARCH = {
    "cu124": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"],
    "cu128-2.7": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
    "cu130-2.14": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"],
    "ext-90a": ["sm_80", "sm_90a"],
}
CC = ["6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]
EXPECTED_KERNEL = {
    "cu124": ["sm_60", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_86", "sm_86", "sm_90", None, None, None, None],
    "cu128-2.7": [None, None, None, "sm_75", "sm_80", "sm_86", "sm_86", "sm_86", "sm_90", "sm_100", "sm_100",
                  "sm_120", "sm_120"],
    "cu130-2.14": [None, None, None, "sm_75", "sm_80", "sm_86", "sm_86", "sm_86", "sm_90", "sm_100", "sm_100",
                   "sm_120", "sm_120"],
    "ext-90a": [None, None, None, None, "sm_80", "sm_80", "sm_80", "sm_80", "sm_90a", None, None, None, None],
}


@pytest.mark.parametrize("build, i", [(b, i) for b in ARCH for i in range(len(CC))])
def test_compute_capability_x_arch_list(build, i):
    assert compat.serving_kernel(ARCH[build], CC[i]).target == EXPECTED_KERNEL[build][i]


def test_ptx_jits_forward_only():
    assert compat.serving_kernel(["sm_80", "compute_80"], "9.0").target == "compute_80"
    assert compat.serving_kernel(["compute_90"], "8.9").target is None
    assert compat.serving_kernel(["sm_90", "compute_90"], "12.0").target == "compute_90"


KNOW = bundled_knowledge()
ED101 = next(r for r in load_rules() if r.id == "ED101")
ED102 = next(r for r in load_rules() if r.id == "ED102")


@pytest.mark.parametrize("driver, cuda", list(itertools.product(range(len(DRIVERS)), CUDAS)))
def test_driver_rule_matches_the_table(driver, cuda):
    snap = load_snapshot(fixture_path("h100_8x_nvswitch"))
    snap.driver.version = DRIVERS[driver]
    snap.torch.cuda = cuda
    assert bool(evaluate_rule(ED101, snap, KNOW.rules.tables, KNOW.index)) is (driver < FIRST_OK[cuda])


@pytest.mark.parametrize("build, i", [(b, i) for b in ARCH if b != "ext-90a" for i in range(len(CC))])
def test_arch_rule_matches_the_table(build, i):
    snap = load_snapshot(fixture_path("rtx5090_old_torch"))
    snap.gpus[0].compute_capability = CC[i]
    snap.torch.arch_list = ARCH[build]
    assert bool(evaluate_rule(ED102, snap, KNOW.rules.tables, KNOW.index)) is (EXPECTED_KERNEL[build][i] is None)

@pytest.mark.parametrize("cc, os_name, need", [
    ("10.0", "linux", "570.26"), ("10.3", "linux", "570.26"), ("12.0", "linux", "570.26"), ("12.1", "linux", "570.26"),
    ("12.0", "windows", "570.65"), ("9.0", "linux", None), ("8.9", "windows", None),
])
def test_blackwell_needs_r570_by_major_version(cc, os_name, need):
    assert compat.gpu_min_driver(cc, os_name, drivers=bundled_knowledge().index.drivers) == need


def test_wsl_blackwell_uses_the_windows_driver_minimum():
    snap = load_snapshot(fixture_path("wsl2_rtx4090"))
    snap.gpus[0].compute_capability = "12.0"
    snap.driver.version = "566.36"
    assert "ED107" in {f.id for f in diagnose_bundled(snap)}
    snap.driver.version = "572.16"
    assert "ED107" not in {f.id for f in diagnose_bundled(snap)}
