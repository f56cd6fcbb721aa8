"""CUDA unavailable, by mechanism (issue 25): the GPUs not passed into a container, whatever shows it (ED211); a
pip-listed torch whose PyPI build needs a newer driver, for every release the facts cover (ED121); a CUDA build
that cannot use CUDA for a reason the facts do not hold, said rather than kept silent (ED124); and a report that
states the driver but not its GPUs, which leaves the GPUs unknown, not "none"."""

from __future__ import annotations

import copy
import json
from typing import Any, Dict, List

import pytest

from envdoctor.snapshot import partial_reason, snapshot_from_json
from envdoctor.text.complete import complete_document
from tests.conftest import diagnose_bundled, fixture_path


def raw(name: str) -> Dict[str, Any]:
    return json.loads(fixture_path(name).read_text(encoding="utf-8"))


def ids(doc: Dict[str, Any]) -> Dict[str, str]:
    return {f.id: f.severity for f in diagnose_bundled(snapshot_from_json(doc))}


def report(stated: Dict[str, Any]) -> Dict[str, Any]:
    """A snapshot rebuilt from a report that states only `stated` (as `envdoctor diagnose` and the corpus do)."""
    base = {"python": {"version": "3.10.12"}, "host": {"os": "linux", "arch": "x86_64"}}
    return complete_document({**base, **stated}, "2024-06-01T00:00:00Z")


CUDA_TORCH = {"importable": True, "version": "2.3.1+cu121", "cuda": "12.1", "cuda_available": False}


# --- ED211: a container started without GPUs --------------------------------------------------------------

@pytest.mark.parametrize("host, extra", [
    ({"container": "docker", "container_gpu_access": False}, {}),
    ({"container": "docker", "gpu_device_nodes": []}, {}),
    ({"container": "podman"}, {"absent": {"driver": "unavailable: nvidia-smi: command not found"}}),
    ({"container": "docker"}, {"torch": {**CUDA_TORCH, "cuda_init_error":
                                         "Found no NVIDIA driver on your system. Please check that you have an "
                                         "NVIDIA GPU and installed a driver"}}),
    ({"container": "kubernetes"}, {"torch": {**CUDA_TORCH, "cuda_init_error":
                                             "CUDA driver initialization failed, you might not have a CUDA gpu. "
                                             "Error 100: no CUDA-capable device is detected"}}),
])
def test_a_container_without_gpus_is_named_whatever_shows_it(host: Dict[str, Any], extra: Dict[str, Any]) -> None:
    found = ids(report({"host": {"os": "linux", "arch": "x86_64", **host}, "torch": CUDA_TORCH, **extra}))
    assert found.get("ED211") == "warning"
    assert "ED111" not in found and "ED124" not in found  # the container explains the CUDA failure


def test_a_container_known_to_have_gpus_is_not_blamed() -> None:
    said = {**CUDA_TORCH, "cuda_init_error": "Error 100: no CUDA-capable device is detected"}
    found = ids(report({"host": {"os": "linux", "arch": "x86_64", "container": "docker",
                                 "container_gpu_access": True}, "torch": said}))
    assert "ED211" not in found and found.get("ED111") == "error"


def test_a_cpu_container_with_a_cpu_torch_is_not_a_container_without_gpus() -> None:
    found = ids(report({"host": {"os": "linux", "arch": "x86_64", "container": "docker", "gpu_device_nodes": []},
                        "torch": {"importable": True, "version": "2.3.1+cpu", "cuda_available": False},
                        "absent": {"torch.cuda": "unavailable: a CPU build"}}))
    assert "ED211" not in found


# --- ED121: the PyPI build of a torch version pip lists without its label -----------------------------

@pytest.mark.parametrize("version, driver, fires", [
    ("2.1.0", "470.182.03", True),     # PyPI 2.1 on Linux x86_64 is cu121: driver >= 525.60.13
    ("2.1.0", "535.104.05", False),
    ("2.7.1", "535.104.05", False),    # cu126 runs on the 12.x family minimum
    ("2.11.0", "550.54.15", True),     # cu130 needs R580
    ("2.11.0", "580.65.06", False),
    ("1.6.0", "418.67", True),         # the 1.0-1.8 table: cu102 needs 440.33
    ("2.1.0+cu118", "470.182.03", False),  # a labelled build says its own CUDA: not a PyPI guess
])
def test_pip_listed_torch_is_read_as_its_pypi_build(version: str, driver: str, fires: bool) -> None:
    found = ids(report({"torch": {"importable": True, "version": version}, "driver": {"version": driver}}))
    assert ("ED121" in found) is fires, found


def test_the_pypi_build_of_aarch64_torch_before_2_11_is_a_cpu_build_and_no_driver_claim() -> None:
    doc = report({"torch": {"importable": True, "version": "2.5.1"}, "driver": {"version": "470.182.03"}})
    doc["host"]["arch"] = "aarch64"
    assert "ED121" not in ids(doc)


def test_pypi_build_says_whether_cuda_was_reported_unavailable() -> None:
    def detail(stated_torch: Dict[str, Any]) -> str:
        doc = report({"torch": stated_torch, "driver": {"version": "470.182.03"}})
        return next(f.detail for f in diagnose_bundled(snapshot_from_json(doc)) if f.id == "ED121")
    assert "torch reports CUDA unavailable" in detail({"importable": True, "version": "2.1.0",
                                                       "cuda_available": False})
    assert "was not reported" in detail({"importable": True, "version": "2.1.0"})


# --- ED124: CUDA unavailable for a reason the facts do not hold ---------------------------------------

def test_cuda_unavailable_with_nothing_else_known_is_said_not_kept_silent() -> None:
    findings = diagnose_bundled(snapshot_from_json(report({"torch": CUDA_TORCH})))
    f = next(f for f in findings if f.id == "ED124")
    assert f.severity == "warning" and "nvidia-smi" in f.fix and "not reported" in f.detail


def test_cuda_visible_devices_hiding_the_gpus_is_named_when_the_gpus_are_unknown() -> None:
    doc = report({"torch": CUDA_TORCH, "env": {"CUDA_VISIBLE_DEVICES": "-1"}})
    f = next(f for f in diagnose_bundled(snapshot_from_json(doc)) if f.id == "ED124")
    assert "hides every GPU" in f.detail and "Unset CUDA_VISIBLE_DEVICES" in f.fix


def test_no_driver_outside_a_container_is_named_as_the_driver_missing() -> None:
    doc = report({"torch": CUDA_TORCH, "absent": {"driver": "unavailable: nvidia-smi: command not found"}})
    f = next(f for f in diagnose_bundled(snapshot_from_json(doc)) if f.id == "ED124")
    assert "no NVIDIA driver was found" in f.detail and "install the NVIDIA driver" in f.fix


@pytest.mark.parametrize("change", [
    lambda d: d["torch"].update(cuda_init_error="Error 999: unknown error"),         # ED111 reads it
    lambda d: d.update(driver={"version": "470.182.03"}),                             # ED101: too old for cu121
    lambda d: d["torch"].update(cuda_available=True),                                 # nothing to explain
    lambda d: d["host"].update(os="darwin"),                                          # ED113: no NVIDIA GPU
    lambda d: d.update(env={"CUDA_VISIBLE_DEVICES": ""}, driver={"version": "550.54.15"},
                       gpus=[{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}]),  # ED406
])
def test_cuda_unavailable_cause_unread_is_quiet_where_a_cause_is_known(change: Any) -> None:
    stated: Dict[str, Any] = {"host": {"os": "linux", "arch": "x86_64"}, "torch": copy.deepcopy(CUDA_TORCH)}
    change(stated)
    assert "ED124" not in ids(report(stated))


def test_cuda_unavailable_cause_unread_is_quiet_on_the_known_gpus_and_driver_case() -> None:
    assert "ED124" not in ids(raw("h100_cuda_silent"))  # GPUs and a fitting driver: ED105's case
    assert ids(raw("h100_cuda_silent")).get("ED105") == "error"


# --- a report that states the driver but not its GPUs ------------------------------------------------

def test_a_report_of_the_driver_alone_leaves_the_gpus_unknown() -> None:
    doc = report({"driver": {"version": "535.104.05"}, "torch": CUDA_TORCH})
    snap = snapshot_from_json(doc)
    assert snap.gpus == [] and partial_reason(snap.gpus)
    found: List[str] = list(ids(doc))
    assert "ED113" not in found  # "no NVIDIA GPU on this machine" would claim what the report never said


def test_a_report_with_gpus_keeps_them_whole() -> None:
    doc = report({"driver": {"version": "535.104.05"}, "torch": CUDA_TORCH,
                  "gpus": [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]})
    assert partial_reason(snapshot_from_json(doc).gpus) is None


def test_cuda_saying_the_driver_is_older_than_its_runtime_is_driver_too_old() -> None:
    said = "CUDA driver version is insufficient for CUDA runtime version"
    assert ids(report({"torch": {**CUDA_TORCH, "cuda_init_error": said}})).get("ED122") == "error"


def test_error_804_is_forward_compatibility_on_a_gpu_without_it_not_an_old_driver() -> None:
    # cudaErrorCompatNotSupportedOnDevice: a cuda-compat libcuda was loaded on a GPU that cannot use it
    found = ids(report({"torch": {**CUDA_TORCH, "cuda_init_error":
                                  "Error 804: forward compatibility was attempted on non supported HW"}}))
    assert "ED122" not in found and found.get("ED111") == "error"


@pytest.mark.parametrize("change", [
    {"gpu_device_nodes": ["/dev/nvidia0", "/dev/nvidiactl"]},
    {"driver": {"version": "535.161.08"}},
    {"gpus": [{"index": 0, "name": "NVIDIA L4", "compute_capability": "8.9"}]},
])
def test_a_container_that_shows_its_gpu_is_not_blamed_for_cuda_errors(change: Dict[str, Any]) -> None:
    host = {"os": "linux", "arch": "x86_64", "container": "docker"}
    stated: Dict[str, Any] = {"torch": {**CUDA_TORCH, "cuda_init_error": "Error 100: no CUDA-capable device is detected"}}
    if "gpu_device_nodes" in change:
        host.update(change)
    else:
        stated.update(change)
    found = ids(report({"host": host, **stated}))
    assert "ED211" not in found and found.get("ED111") == "error"


def test_a_container_whose_torch_uses_cuda_is_not_a_container_without_gpus() -> None:
    doc = report({"host": {"os": "linux", "arch": "x86_64", "container": "docker"},
                  "torch": {**CUDA_TORCH, "cuda_available": True},
                  "absent": {"driver": "unavailable: NVML library not found"}})
    assert "ED211" not in ids(doc)



def test_a_gpu_device_node_or_working_cuda_is_never_no_nvidia_gpu() -> None:
    # review: a container with /dev/nvidia0 and a working torch, whose NVML listed no GPU, got "No NVIDIA GPU on
    # this machine" (ED113)
    base = raw("l4_container_shm64")
    base["gpus"] = []
    no_sign = copy.deepcopy(base)
    no_sign["host"]["gpu_device_nodes"] = []
    no_sign["torch"]["cuda_available"] = False
    assert "ED113" in ids(no_sign)  # NVML answered with no GPU, and nothing says otherwise
    with_node = copy.deepcopy(no_sign)
    with_node["host"]["gpu_device_nodes"] = ["/dev/nvidia0", "/dev/nvidiactl"]
    working = copy.deepcopy(no_sign)
    working["torch"]["cuda_available"] = True
    assert "ED113" not in ids(with_node) and "ED113" not in ids(working)
