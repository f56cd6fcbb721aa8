"""Facts that machines rebuilt from real reports (tests/corpus) showed the rules did not use. Each test states the
general fact on a variant of a snapshot fixture, never on a corpus case."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List

from envdoctor.snapshot import snapshot_from_json
from tests.conftest import diagnose_bundled, fixture_path


def variant(name: str, change: Callable[[Dict[str, Any]], None]) -> Dict[str, Any]:
    data = json.loads(fixture_path(name).read_text(encoding="utf-8"))
    change(data)
    return data


def found(data: Dict[str, Any]) -> Dict[str, Any]:
    return {f.id: f for f in diagnose_bundled(snapshot_from_json(data))}


def errors(data: Dict[str, Any]) -> List[str]:
    return sorted(i for i, f in found(data).items() if f.severity == "error")


# --- ED102: torch's own arch list decides, even when its version and CUDA are not known ----------------------


def _torch_build_unknown(archs: List[str]) -> Callable[[Dict[str, Any]], None]:
    def change(d: Dict[str, Any]) -> None:
        d["torch"]["version"] = None
        d["torch"]["cuda"] = None
        d["torch"]["arch_list"] = archs
        d["python"]["packages"].pop("torch", None)
    return change


def test_ed102_arch_list_without_the_gpu_is_enough():
    data = variant("rtx5090_old_torch", _torch_build_unknown(["sm_50", "sm_60", "sm_70", "sm_80", "sm_90"]))
    f = found(data)["ED102"]
    assert f.severity == "error" and "sm_120" in f.title and "[sm_50 sm_60 sm_70 sm_80 sm_90]" in f.detail


def test_ed102_quiet_when_ptx_could_serve_and_the_cuda_that_made_it_is_unknown():
    data = variant("rtx5090_old_torch", _torch_build_unknown(["sm_80", "sm_90", "compute_90"]))
    assert "ED102" not in found(data)


def test_ed102_quiet_when_the_list_is_not_cuda_targets():
    assert "ED102" not in found(variant("rtx5090_old_torch", _torch_build_unknown(["gfx90a", "gfx942"])))


# --- ED101: torch's "driver is too old (found version N)" when the driver's own version was not read ---------


def _driver_unread(message: str) -> Callable[[Dict[str, Any]], None]:
    def change(d: Dict[str, Any]) -> None:
        d["driver"] = None
        d["gpus"] = []
        d["torch"]["cuda_init_error"] = message
    return change


TOO_OLD = "CUDA initialization: The NVIDIA driver on your system is too old (found version {}). Please update"


def test_ed101_from_torch_message_when_the_driver_version_is_unknown():
    data = variant("b200_driver_575", _driver_unread(TOO_OLD.format(12090)))
    f = found(data)["ED101"]
    assert f.category == "driver_too_old" and "CUDA 12.9 only" in f.detail and ">= 580" in f.fix
    assert "ED111" not in found(data)  # one finding for one cause


def test_ed101_quiet_when_the_found_version_would_run_torch_cuda():
    # A CUDA 13.1 driver runs a CUDA 13.0 torch: the message contradicts the number, so ED101 does not claim it.
    assert "ED101" not in errors(variant("b200_driver_575", _driver_unread(TOO_OLD.format(13010))))


def test_ed101_not_read_from_a_no_driver_message():
    no_driver = "CUDA initialization: Found no NVIDIA driver on your system."
    assert "ED101" not in found(variant("b200_driver_575", _driver_unread(no_driver)))


# --- ED513: torch 2.3 - 2.4.0 Windows wheels were built against NumPy 1.x -----------------------------------


def _windows_torch(version: str, os_name: str = "windows") -> Callable[[Dict[str, Any]], None]:
    def change(d: Dict[str, Any]) -> None:
        d["host"]["os"], d["host"]["arch"] = os_name, "AMD64" if os_name == "windows" else "x86_64"
        d["torch"]["version"] = version
        d["torch"]["numpy"] = None  # the bridge was not exercised: only the versions speak
        d["python"]["packages"]["torch"] = version.split("+")[0]
        d["python"]["packages"]["numpy"] = "2.0.1"
    return change


def test_ed513_windows_torch_240_under_numpy_2():
    f = found(variant("h200_8x_healthy", _windows_torch("2.4.0+cu121")))["ED513"]
    assert f.title.endswith("on Windows, which needs numpy<2") and "131668" in f.detail


def test_ed513_quiet_for_the_fixed_windows_build_and_for_linux():
    assert "ED513" not in found(variant("h200_8x_healthy", _windows_torch("2.4.1+cu121")))
    assert "ED513" not in found(variant("h200_8x_healthy", _windows_torch("2.4.0+cu121", "linux")))
