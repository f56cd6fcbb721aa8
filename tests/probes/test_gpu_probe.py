"""The NVML probe and its fallbacks, faked only at the library / subprocess / file boundary."""

from __future__ import annotations

import os
import stat
import time

import pytest

from envdoctor.probes import gpu
from envdoctor.probes.base import ProbeContext, ProbeSkipped
from envdoctor.probes.nvml import Nvml
from envdoctor.snapshot import ProbeFailed, Unavailable
from tests.probes.fake_nvml import DRIVER_NOT_LOADED, GPU_IS_LOST, LIBRARY_NOT_FOUND, NOT_SUPPORTED, UNKNOWN, FakeNvml

SMI_CSV = (
    "0, NVIDIA A100-SXM4-80GB, GPU-1a2b, 00000000:07:00.0, 8.0, 81920, 535.129.03, 4, 4, 16, 16, Enabled, Disabled, 0\n"
    "1, NVIDIA A100-SXM4-80GB, GPU-3c4d, 00000000:0F:00.0, 8.0, 81920, 535.129.03, 1, 4, 16, 16, Disabled, [N/A], 3\n"
)


def ctx_for(tmp_path, nvml=None, path=""):
    return ProbeContext(root=tmp_path, nvml=nvml, env={"PATH": path}, timeout=4.0)


def test_nvml_probe_reads_driver_gpus_and_links(tmp_path):
    fake = FakeNvml()
    out = gpu.probe(ctx_for(tmp_path, fake))
    driver, gpus, topo = out.sections["driver"], out.sections["gpus"], out.sections["topology"]
    assert (driver.version, driver.cuda_driver_version, driver.source) == ("550.54.15", "12.4", "nvml")
    assert [g.pci_bus_id for g in gpus] == ["0000:18:00.0", "0000:28:00.0", "0000:38:00.0", "0000:48:00.0"]
    g0 = gpus[0]
    assert g0.compute_capability == "9.0" and g0.memory_bytes == 85520809984
    assert g0.cpu_affinity == "0-7" and gpus[2].cpu_affinity == "8-15"
    assert g0.nvlink.links_active == 4 and g0.nvlink.version == 4  # enum 6 is NVLink 4.0
    assert gpus[2].pcie.width == 8 and gpus[2].pcie.max_width == 16
    assert isinstance(gpus[1].ecc_uncorrected, Unavailable)  # NOT_SUPPORTED is "not available", not a failure
    assert topo.links[0] == ["X", "NV4", "SYS", "SYS"]
    assert topo.links[2] == ["SYS", "SYS", "X", "NV4"]
    assert topo.p2p[0][1] is True and topo.p2p[0][0] is None
    assert fake.initialised == 1 and fake.shutdowns == 1


def test_missing_functions_are_remembered_and_noted(tmp_path):
    fake = FakeNvml(drop={"nvmlDeviceGetRemappedRows", "nvmlDeviceGetRetiredPagesPendingStatus"})
    out = gpu.probe(ctx_for(tmp_path, fake))
    g3 = out.sections["gpus"][3]
    # GPU 3's NUMA function is missing in the driver: the /sys fallback has no entry either.
    assert isinstance(g3.numa_node, Unavailable)
    assert isinstance(g3.retired_pages_pending, Unavailable)
    assert "nvmlDeviceGetNumaNodeId" in out.note and "nvmlDeviceGetRemappedRows" in out.note


def test_numa_node_falls_back_to_sysfs(tmp_path):
    dev = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:48:00.0"
    dev.mkdir(parents=True)
    (dev / "numa_node").write_text("1\n")
    out = gpu.probe(ctx_for(tmp_path, FakeNvml()))
    assert out.sections["gpus"][3].numa_node == 1


def test_gateway_initialises_once_and_maps_errors():
    fake = FakeNvml(init_error=DRIVER_NOT_LOADED)
    nvml = Nvml(fake)
    why = nvml.init()
    assert isinstance(why, Unavailable) and "kernel driver is not loaded" in why.reason
    assert nvml.init() is why  # remembered, not retried


def _script(tmp_path, name, body):
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    path = bindir / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(bindir)


def test_nvidia_smi_fallback_when_nvml_library_missing(tmp_path):
    csv = tmp_path / "smi.csv"
    csv.write_text(SMI_CSV)
    bindir = _script(tmp_path, "nvidia-smi", f'cat "{csv}"\n')
    out = gpu.probe(ctx_for(tmp_path, FakeNvml(init_error=LIBRARY_NOT_FOUND), bindir))
    d, gpus = out.sections["driver"], out.sections["gpus"]
    assert d.version == "535.129.03" and d.source == "nvidia-smi"
    assert [g.compute_capability for g in gpus] == ["8.0", "8.0"]
    assert gpus[1].pci_bus_id == "0000:0f:00.0" and gpus[1].pcie.gen == 1
    assert gpus[0].persistence_mode is True and gpus[1].persistence_mode is False
    assert gpus[0].mig_enabled is False and isinstance(gpus[1].mig_enabled, Unavailable)
    assert gpus[1].ecc_uncorrected == 3
    assert "libnvidia-ml.so" in out.note


@pytest.mark.slow
def test_nvidia_smi_hanging_becomes_timeout_record(tmp_path):
    bindir = _script(tmp_path, "nvidia-smi", "sleep 60\n")
    start = time.monotonic()
    out = gpu.probe(ctx_for(tmp_path, FakeNvml(init_error=LIBRARY_NOT_FOUND), bindir))
    assert time.monotonic() - start < 10
    assert out.status == "timeout"
    assert isinstance(out.sections["driver"], ProbeFailed) and "timed out" in out.sections["driver"].error


def test_proc_driver_version_when_no_nvml_and_no_smi(tmp_path):
    proc = tmp_path / "proc" / "driver" / "nvidia"
    proc.mkdir(parents=True)
    (proc / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 01:44:30 UTC 2024\n"
        "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n")
    out = gpu.probe(ctx_for(tmp_path, FakeNvml(init_error=LIBRARY_NOT_FOUND)))
    assert out.sections["driver"].version == "550.54.14" and out.sections["driver"].source == "procfs"
    assert out.status == "failed"


def test_no_driver_at_all_is_skipped_with_reason(tmp_path):
    with pytest.raises(ProbeSkipped) as exc:
        gpu.probe(ctx_for(tmp_path, FakeNvml(init_error=LIBRARY_NOT_FOUND)))
    assert "libnvidia-ml.so" in str(exc.value) and "no nvidia-smi" in str(exc.value)


@pytest.mark.parametrize("text, expected", [
    ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build", "570.86.15"),
    ("NVRM version: NVIDIA UNIX aarch64 Kernel Module  560.35.03  Fri Aug 16 21:21:48 UTC 2024", "560.35.03"),
    ("garbage", None),
])
def test_parse_proc_version(text, expected):
    assert gpu.parse_proc_version(text) == expected


def test_smi_csv_ignores_malformed_lines():
    driver, gpus = gpu.parse_smi_csv("Failed to initialize NVML: Driver/library version mismatch\n" + SMI_CSV[:60])
    assert driver is None and gpus == []


def test_sys_read_errors_do_not_raise(tmp_path):
    dev = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:48:00.0" / "numa_node"
    dev.mkdir(parents=True)  # a directory where a file should be: reading it fails with EISDIR
    out = gpu.probe(ctx_for(tmp_path, FakeNvml()))
    assert isinstance(out.sections["gpus"][3].numa_node, Unavailable)
    assert os.path.isdir(dev)


# --- no placeholders: a value, a reason it does not exist, or a failure -------------------------


def test_driver_version_that_nvml_cannot_read_is_a_failure_not_unknown(tmp_path):
    out = gpu.probe(ctx_for(tmp_path, FakeNvml(errors={"nvmlSystemGetDriverVersion": UNKNOWN})))
    driver = out.sections["driver"]
    assert isinstance(driver, ProbeFailed) and "nvmlSystemGetDriverVersion" in driver.error
    assert len(out.sections["gpus"]) == 4  # the GPUs are still known


def test_driver_version_falls_back_to_procfs_when_nvml_cannot_read_it(tmp_path):
    proc = tmp_path / "proc" / "driver" / "nvidia"
    proc.mkdir(parents=True)
    (proc / "version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 2024\n")
    driver = gpu.probe(ctx_for(tmp_path, FakeNvml(errors={"nvmlSystemGetDriverVersion": UNKNOWN}))).sections["driver"]
    assert (driver.version, driver.source, driver.cuda_driver_version) == ("550.54.14", "procfs", "12.4")


def test_gpu_name_and_compute_capability_are_never_invented(tmp_path):
    fake = FakeNvml(errors={"nvmlDeviceGetName": UNKNOWN, "nvmlDeviceGetCudaComputeCapability": GPU_IS_LOST})
    gpus = gpu.probe(ctx_for(tmp_path, fake)).sections["gpus"]
    assert all(isinstance(g.name, ProbeFailed) and "nvmlDeviceGetName" in g.name.error for g in gpus)
    assert all(isinstance(g.compute_capability, ProbeFailed) and "GPU is lost" in g.compute_capability.error
               for g in gpus)
    assert gpus[0].uuid.startswith("GPU-")  # the other facts are still read
    with pytest.raises(ValueError):
        _ = gpus[0].sm


def test_not_supported_name_is_still_not_a_fact(tmp_path):
    gpus = gpu.probe(ctx_for(tmp_path, FakeNvml(errors={"nvmlDeviceGetName": NOT_SUPPORTED}))).sections["gpus"]
    assert isinstance(gpus[0].name, ProbeFailed)  # every GPU has a name: not getting it is a failure


def test_gpus_that_cannot_be_counted_are_unknown_not_none(tmp_path):
    out = gpu.probe(ctx_for(tmp_path, FakeNvml(errors={"nvmlDeviceGetCount": UNKNOWN})))
    assert isinstance(out.sections["gpus"], ProbeFailed) and "nvmlDeviceGetCount" in out.sections["gpus"].error
    assert isinstance(out.sections["topology"], ProbeFailed)
    assert out.sections["driver"].version == "550.54.15" and out.status == "failed"


def test_failed_nvidia_smi_fallback_leaves_gpus_unknown(tmp_path):
    bindir = _script(tmp_path, "nvidia-smi", "echo 'Failed to initialize NVML: Unknown Error' >&2\nexit 255\n")
    out = gpu.probe(ctx_for(tmp_path, FakeNvml(init_error=LIBRARY_NOT_FOUND), bindir))
    assert isinstance(out.sections["gpus"], ProbeFailed) and out.status == "failed"


def test_driver_without_any_way_to_list_gpus_leaves_gpus_unknown(tmp_path):
    proc = tmp_path / "proc" / "driver" / "nvidia"
    proc.mkdir(parents=True)
    (proc / "version").write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 2024\n")
    out = gpu.probe(ctx_for(tmp_path, FakeNvml(init_error=LIBRARY_NOT_FOUND)))
    assert out.sections["driver"].version == "550.54.14"
    assert isinstance(out.sections["gpus"], ProbeFailed)


def test_smi_without_compute_capability_or_name_writes_no_placeholder():
    row = "0, , GPU-1a2b, 00000000:07:00.0, [N/A], 81920, 470.82.01, 4, 4, 16, 16, Enabled, [N/A], 0\n"
    driver, gpus = gpu.parse_smi_csv(row)
    assert driver.version == "470.82.01"
    assert isinstance(gpus[0].compute_capability, Unavailable) and "compute_cap" in gpus[0].compute_capability.reason
    assert isinstance(gpus[0].name, ProbeFailed)


def test_unknown_gpu_facts_round_trip_through_the_snapshot(tmp_path):
    from envdoctor.probes.runner import PROBES, assemble
    from envdoctor.snapshot import ProbeRecord, snapshot_from_json

    fake = FakeNvml(gpus=1, errors={"nvmlDeviceGetName": UNKNOWN, "nvmlDeviceGetCudaComputeCapability": UNKNOWN})
    spec = next(p for p in PROBES if p.name == "nvml")
    snap = assemble([(ProbeRecord(name="nvml", status="ok"), gpu.probe(ctx_for(tmp_path, fake)))], [spec])
    data = snap.to_json()
    assert data["gpus"][0]["name"] is None and data["absent"]["gpus.0.compute_capability"].startswith("failed: ")
    back = snapshot_from_json(data)
    assert back.gpus[0].compute_capability == snap.gpus[0].compute_capability

    failed = gpu.probe(ctx_for(tmp_path, FakeNvml(errors={"nvmlDeviceGetCount": UNKNOWN})))
    snap = assemble([(ProbeRecord(name="nvml", status="failed"), failed)], [spec])
    data = snap.to_json()
    assert data["gpus"] is None and data["absent"]["gpus"].startswith("failed: ")
    assert isinstance(snapshot_from_json(data).gpus, ProbeFailed)


def test_a_crashed_gpu_probe_leaves_gpus_unknown_and_a_skipped_one_empty():
    from envdoctor.probes.runner import PROBES, assemble
    from envdoctor.snapshot import ProbeRecord

    spec = next(p for p in PROBES if p.name == "nvml")
    crashed = assemble([(ProbeRecord(name="nvml", status="failed", error="RuntimeError: boom"), None)], [spec])
    assert isinstance(crashed.gpus, ProbeFailed)
    skipped = assemble([(ProbeRecord(name="nvml", status="skipped", error="no NVIDIA driver"), None)], [spec])
    assert skipped.gpus == []
