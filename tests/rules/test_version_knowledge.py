"""The version knowledge the rules use (issue 12, section 2): driver minimums back to CUDA 9.0, what each nvcc can
emit, old torch builds, and which Pythons have wheels where and when. Each test changes one fact of a fixture."""

from __future__ import annotations

import copy
from typing import Set

import pytest

from envdoctor.snapshot import NvidiaWheel, Unavailable, Unknown, load_snapshot
from tests.conftest import diagnose_bundled, fixture_path


def _ids(snap) -> Set[str]:
    return {f.id for f in diagnose_bundled(snap)}


def _errors(snap) -> Set[str]:
    return {f.category for f in diagnose_bundled(snap) if f.severity == "error"}


@pytest.mark.parametrize("torch_version, cuda, driver, fires", [
    ("1.5.0+cu102", "10.2", "410.104", True),   # 10.2 needs 440.33: no minor-version compatibility before 11
    ("1.6.0", "10.2", "418.67", True),
    ("1.3.0", "10.1", "410.48", True),          # 10.1 needs 418.39
    ("1.6.0", "10.2", "440.33", False),
    ("1.2.0", "10.0", "410.48", False),
    ("1.7.1+cu110", "11.0", "450.51.06", False),  # 11.0's own GA driver (450.51.05) runs it
    ("1.7.1+cu110", "11.0", "450.36.06", True),
])
def test_pre_cuda_11_builds_need_their_own_toolkit_driver(torch_version, cuda, driver, fires):
    snap = load_snapshot(fixture_path("h100_cuda_hidden"))
    snap.torch.version, snap.torch.cuda, snap.driver.version = torch_version, cuda, driver
    snap.torch.arch_list = []
    for g in snap.gpus:
        g.compute_capability = "7.0"
    assert ("ED101" in _ids(snap)) is fires
    assert "ED105" not in _ids(snap) or not fires  # never "although the driver fits" when it does not


def _old_gpu_torch(cc: str, cuda: str, version: str, arch_list):
    snap = load_snapshot(fixture_path("h200_8x_healthy"))
    snap.torch.version, snap.torch.cuda, snap.torch.arch_list = version, cuda, arch_list
    snap.torch.cuda_available = False
    for g in snap.gpus:
        g.compute_capability = cc
    snap.driver.version = "580.95.05"
    return snap


def test_an_empty_arch_list_is_read_from_the_index_for_the_variant_its_version_names():
    # torch 1.12.1+cu102 has sm_37..sm_70 and no PTX (LOCAL_WHEEL): a Tesla K40 (3.5) gets no kernel,
    # although CUDA 10.2's nvcc could have built one.
    assert "ED102" in _ids(_old_gpu_torch("3.5", "10.2", "1.12.1+cu102", []))
    assert "ED102" not in _ids(_old_gpu_torch("7.5", "10.2", "1.12.1+cu102", []))
    # Without a local label the build may be conda's or a source build: its list is not the index's.
    assert "ED102" not in _ids(_old_gpu_torch("3.5", "10.2", "1.12.1", []))
    assert "ED102" not in _ids(_old_gpu_torch("3.5", "10.2", "1.12.1", Unknown("not reported")))


def test_without_an_arch_list_only_what_the_nvcc_can_emit_decides():
    # CUDA 10.0's nvcc starts at sm_30: a GeForce 210 (1.2) has no kernel in any build made with it.
    assert "ED102" in _ids(_old_gpu_torch("1.2", "10.0", "1.2.0", Unknown("not reported")))
    # CUDA 11.8's knows up to sm_90: a Blackwell GPU has no kernel in a cu118 build.
    assert "ED102" in _ids(_old_gpu_torch("12.0", "11.8", "2.7.0", Unknown("not reported")))
    # Inside the range the build's own list would decide: unknown stays quiet.
    assert "ED102" not in _ids(_old_gpu_torch("6.1", "10.0", "1.2.0", Unknown("not reported")))


def test_old_ptx_does_not_serve_a_gpu_newer_than_its_toolkit():
    cu118 = ["sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "compute_37"]
    found = [f for f in diagnose_bundled(_old_gpu_torch("12.0", "11.8", "2.7.0+cu118", cu118)) if f.id == "ED102"]
    assert found and "CUDA 11.8 predates compute capability 12.0" in found[0].detail
    # PTX of a toolkit that knows the architecture still serves it.
    cu128 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "compute_100"]
    assert "ED102" not in _ids(_old_gpu_torch("12.0", "12.8", "2.7.0+cu128", cu128))


def _no_torch(python: str, os_name: str, arch: str, created: str):
    snap = load_snapshot(fixture_path("python37_legacy"))
    snap.python.version, snap.host.os, snap.host.arch = python, os_name, arch
    snap.created = created
    return snap


@pytest.mark.parametrize("python, os_name, arch, created, fires", [
    ("3.10.1", "linux", "x86_64", "2022-01-10T00:00:00Z", True),    # 1.10.1 had no cp310
    ("3.10.1", "linux", "x86_64", "2022-03-23T00:00:00Z", False),   # 1.11.0 (2022-03-10) has it
    ("3.11", "windows", "AMD64", "2023-02-27T00:00:00Z", True),     # Windows cp311 came with 2.0
    ("3.11", "linux", "x86_64", "2023-02-27T00:00:00Z", False),     # Linux had it from 1.13.0
    ("3.13", "windows", "AMD64", "2024-12-30T00:00:00Z", True),     # 2.5.1: Linux only
    ("3.13.1", "darwin", "arm64", "2025-01-01T00:00:00Z", True),
    ("3.13", "linux", "x86_64", "2024-12-30T00:00:00Z", False),
    ("3.13", "windows", "AMD64", "2025-02-15T00:00:00Z", False),    # 2.6.0
    ("3.12.5", "windows", "ARM64", "2024-08-19T00:00:00Z", True),   # no win_arm64 wheel before 2.7
    ("3.12", "linux", "x86_64", "2026-11-20T00:00:00Z", False),
    ("3.7.16", "linux", "x86_64", "2026-11-20T00:00:00Z", True),    # none since 2.0 (the last was 1.13.1)
    ("3.7.16", "linux", "x86_64", "2020-01-01T00:00:00Z", False),
])
def test_python_wheels_per_platform_and_date(python, os_name, arch, created, fires):
    assert ("ED106" in _ids(_no_torch(python, os_name, arch, created))) is fires


def test_an_installed_torch_proves_wheels_existed_even_when_it_does_not_import():
    snap = load_snapshot(fixture_path("broken_torch_a10g"))
    snap.python.version = "3.7.3"
    assert "python_unsupported" not in _errors(snap)
    gone = copy.deepcopy(snap)
    gone.torch = Unavailable("torch is not installed")
    assert "ED106" in _ids(gone)


def test_an_unknown_platform_claims_only_what_no_platform_has():
    snap = _no_torch("3.13", "windows", "AMD64", "2024-12-30T00:00:00Z")
    snap.host.os = Unknown("not reported")
    assert "ED106" not in _ids(snap)  # Linux had cp313 wheels


def test_toolkit_major_is_read_from_the_requirements_when_torch_cuda_is_unknown():
    snap = load_snapshot(fixture_path("h200_8x_healthy"))
    snap.torch.version, snap.torch.cuda = "2.2.1", Unknown("not reported")
    snap.cuda_toolkit.nvcc_version = "11.8"
    assert "ED302" not in _ids(snap)
    snap.torch.extra["requires_dist"] = ["nvidia-cublas-cu12", "nvidia-nccl-cu12", "sympy"]
    assert "ED302" in _ids(snap)
    labelled = load_snapshot(fixture_path("h200_8x_healthy"))
    labelled.torch.version, labelled.torch.cuda = "2.2.1+cu121", Unknown("not reported")
    labelled.cuda_toolkit.nvcc_version = "11.8"
    assert "ED302" in _ids(labelled)


def test_a_driver_too_old_for_every_torch_this_python_can_get_is_an_error_without_torch():
    snap = load_snapshot(fixture_path("gtx1080ti_driver440_no_torch"))
    found = [f for f in diagnose_bundled(snap) if f.id == "ED120"]
    assert [f.severity for f in found] == ["error"] and "450.80.02" in found[0].detail
    # Python 3.8 still gets torch 1.4-1.7 (CUDA 9.2/10.x builds the index does not describe): cannot tell.
    older = copy.deepcopy(snap)
    older.python.version = "3.8.10"
    assert "ED120" not in _ids(older)
    newer = copy.deepcopy(snap)
    newer.driver.version = "450.80.02"
    assert "ED120" not in _ids(newer)


def test_without_a_date_only_a_python_no_torch_ever_had_is_claimed():
    assert "ED106" in _ids(_no_torch("3.7.16", "linux", "x86_64", "2026-11-20T00:00:00Z"))
    assert "ED106" not in _ids(_no_torch("3.7.16", "linux", "x86_64", ""))
    assert "ED106" in _ids(_no_torch("3.4.10", "linux", "x86_64", ""))


def test_the_pip_build_of_an_unlabelled_old_torch_is_a_warning_only_while_cuda_is_unavailable():
    snap = load_snapshot(fixture_path("gtx1080ti_torch130_driver410"))
    found = [f for f in diagnose_bundled(snap) if f.id == "ED121"]
    assert [f.severity for f in found] == ["warning"] and "418.39" in found[0].detail
    working = copy.deepcopy(snap)
    working.torch.cuda_available = True
    assert "ED121" not in _ids(working)
    labelled = copy.deepcopy(snap)
    labelled.torch.version = "1.3.0+cu92"  # a named variant is not the pip wheel
    assert "ED121" not in _ids(labelled)
    known = copy.deepcopy(snap)
    known.torch.cuda = "10.0"  # conda's cudatoolkit 10.0 build: the driver fits
    assert not {"ED121", "ED101"} & _ids(known)


def test_a_cpu_build_or_a_stray_cuda_wheel_is_no_cuda_major():
    snap = load_snapshot(fixture_path("h200_8x_healthy"))
    snap.torch.version, snap.torch.cuda = "2.2.1+cpu", Unavailable("CPU build")
    snap.cuda_toolkit.nvcc_version = "11.8"
    snap.torch.extra["requires_dist"] = ["nvidia-cublas-cu12"]
    assert "ED302" not in _ids(snap)
    other = load_snapshot(fixture_path("h200_8x_healthy"))
    other.torch.version, other.torch.cuda = "2.2.1", Unknown("not reported")
    other.cuda_toolkit.nvcc_version = "11.8"
    stray = NvidiaWheel(required=Unavailable("not required by torch"), installed="12.1.3.1")
    other.torch.nvidia_wheels = {"nvidia-cublas-cu12": stray}  # installed by something else
    assert "ED302" not in _ids(other)
    other.torch.nvidia_wheels = {"nvidia-cublas-cu12": NvidiaWheel(required="nvidia-cublas-cu12==12.1.3.1",
                                                                   installed="12.1.3.1")}
    assert "ED302" in _ids(other)


def test_a_labelled_version_tells_the_cuda_when_torch_version_cuda_is_unknown():
    assert "ED102" in _ids(_old_gpu_torch("3.5", Unknown("not reported"), "1.12.1+cu102", []))
