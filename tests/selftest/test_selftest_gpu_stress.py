"""`selftest gpu --stress`: the health watch at the NVML boundary (recorded answers that change during the run),
the datasheet comparison, the findings, the CPU run of the worker's stress phase, and the skip without CUDA."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from envdoctor.errors import InputError
from envdoctor.probes.base import ProbeContext
from envdoctor.rules.tables import load_tables
from envdoctor.selftest.gpu_stress import peaks, slow_findings, stress_findings, stress_metrics
from envdoctor.selftest.gpu_watch import GpuWatch
from envdoctor.selftest.runner import SelftestOptions
from tests.conftest import ROOT
from tests.probes.recorded_nvml import RecordedNvml

from .conftest import by_name, cli, doc

TABLES = load_tables(ROOT / "rules" / "tables")


class GrowingNvml(RecordedNvml):
    """The recorded A100, whose uncorrected ECC count and link 3's CRC counter grow with every read, and whose
    kernel log gains an Xid 79 line once the run has started."""

    def __init__(self, kmsg: Path) -> None:
        super().__init__("a100_remap_nvlink_crc")
        self.kmsg = kmsg
        self.reads = 0
        device = self.recording["devices"][0]
        device["nvmlDeviceGetTotalEccErrors"] = 2
        device["nvmlDeviceGetCurrentClocksEventReasons"] = 0x4 | 0x40  # power cap, then HW thermal slowdown

    def _answer(self, name, answer, args):
        if name == "nvmlDeviceGetTotalEccErrors":
            self.reads += 1
            if self.reads == 2:
                with self.kmsg.open("a") as f:
                    f.write("4,9,9,-;NVRM: Xid (PCI:0000:07:00): 79, pid='<unknown>', GPU has fallen off the bus.\n")
            return 2 + self.reads
        if name == "nvmlDeviceGetNvLinkErrorCounter" and tuple(args) == (3, 2):
            return 1523 + 10 * self.reads
        return super()._answer(name, answer, args)


def kernel_log(tmp_path: Path) -> Path:
    (tmp_path / "dev").mkdir(parents=True, exist_ok=True)
    kmsg = tmp_path / "dev" / "kmsg"
    kmsg.write_text("4,1,1,-;NVRM: Xid (PCI:0000:07:00): 63, Row Remapper: New row marked for remapping\n")
    return kmsg


def test_watch_reports_what_grew_during_the_run(tmp_path):
    kmsg = kernel_log(tmp_path)
    watch = GpuWatch(lib=GrowingNvml(kmsg), ctx=ProbeContext(root=tmp_path, env={"PATH": str(tmp_path)}), interval=60)
    watch.start()
    seen = watch.stop()
    (g,) = seen["gpus"]
    assert g["name"] == "NVIDIA A100-SXM4-80GB"
    assert g["ecc_uncorrected_delta"] == 1
    assert g["nvlink_delta"] == {"3": {"replay": 0, "recovery": 0, "crc_flit": 10, "crc_data": 0}}
    assert [x["code"] for x in g["xids_new"]] == [79]  # the Xid 63 from before the run is not new
    assert g["throttle_seen"] == {"sw_power_cap": 2, "hw_thermal_slowdown": 2}  # sampled at start and stop
    ids = {f.id: f for f in stress_findings(stress_metrics({"seconds": 1, "memory": [], "burn": []}, seen))}
    assert set(ids) == {"SELFTEST-GPU-ECC-GREW", "SELFTEST-GPU-XID", "SELFTEST-GPU-NVLINK-GREW", "SELFTEST-GPU-THROTTLED"}
    assert ids["SELFTEST-GPU-ECC-GREW"].severity == "error" and ids["SELFTEST-GPU-NVLINK-GREW"].severity == "warning"
    assert "+10 crc_flit" in ids["SELFTEST-GPU-NVLINK-GREW"].detail
    assert "hw_thermal_slowdown" in ids["SELFTEST-GPU-THROTTLED"].title


def test_watch_on_a_healthy_gpu_finds_nothing(tmp_path):
    kernel_log(tmp_path)
    watch = GpuWatch(lib=RecordedNvml("h100_healthy"), ctx=ProbeContext(root=tmp_path), interval=60)
    watch.start()
    seen = watch.stop()
    assert seen["gpus"][0]["ecc_uncorrected_delta"] == 0 and seen["gpus"][0]["nvlink_delta"] == {}
    assert stress_findings(stress_metrics({}, seen)) == []


def test_watch_on_an_old_driver_says_what_it_could_not_read(tmp_path):
    watch = GpuWatch(lib=RecordedNvml("t4_old_driver"), ctx=ProbeContext(root=tmp_path, env={"PATH": str(tmp_path)}),
                     interval=60)
    watch.start()
    (g,) = watch.stop()["gpus"]
    assert g["nvlink_delta"] == "no active NVLink"
    assert isinstance(g["xids_new"], str) and "not readable" in g["xids_new"]
    assert g["throttle_seen"] == {"sw_thermal_slowdown": 2}


def test_watch_without_nvml_says_why():
    class NoDriver:
        def nvmlInit(self):
            err = Exception("driver not loaded")
            err.value = 9
            raise err

    watch = GpuWatch(lib=NoDriver())
    watch.start()
    assert "driver is not loaded" in watch.stop()["error"]


H100_DEVICE = {"device": "cuda:0", "name": "NVIDIA H100 80GB HBM3",
               "matmul": {"float32": {"tflops": 50.0}, "tf32": {"tflops": 350.0}, "bfloat16": {"tflops": 690.0},
                          "float16": {"tflops": 700.0}}}


def test_achieved_tflops_against_the_datasheet():
    (row,) = peaks([H100_DEVICE], {"burn": [{"device": "cuda:0", "dtype": "bfloat16", "tflops": 650.0}]}, TABLES)
    assert row["model"] == "H100 SXM" and row["peak_tflops"]["bfloat16"] == 989.5
    assert row["of_peak"]["bfloat16"] == pytest.approx(690 / 989.5, abs=1e-3)
    assert row["burn_of_peak"] == pytest.approx(650 / 989.5, abs=1e-3)
    assert "datasheet" in row["source"]
    assert slow_findings([row]) == []


def test_a_gpu_far_below_its_peak_is_flagged():
    slow = dict(H100_DEVICE, matmul={"bfloat16": {"tflops": 210.0}, "float16": {"tflops": 200.0}})
    (f,) = slow_findings(peaks([slow], None, TABLES))
    assert f.id == "SELFTEST-GPU-SLOW" and f.severity == "warning" and "21%" in f.title and f.subjects == ["gpu:0"]


def test_an_unlisted_gpu_says_so():
    (row,) = peaks([dict(H100_DEVICE, name="NVIDIA A10G")], None, TABLES)
    assert "not in gpu_peaks.json" in row["why"] and slow_findings([row]) == []


def test_corrupted_memory_and_wrong_products_are_errors():
    m = stress_metrics({"memory": [{"device": "cuda:1", "bytes": 2 ** 30, "mismatches": {"ones": 0, "address": 17},
                                    "ok": False}],
                        "burn": [{"device": "cuda:1", "dtype": "bfloat16", "ok": False, "max_rel_dev": 0.5}]}, None)
    found = {f.id: f for f in stress_findings(m)}
    assert set(found) == {"SELFTEST-GPU-MEMORY-PATTERN", "SELFTEST-GPU-BURN-WRONG"}
    assert all(f.severity == "error" and f.subjects == ["gpu:1"] for f in found.values())
    assert "'address': 17" in found["SELFTEST-GPU-MEMORY-PATTERN"].detail


@pytest.mark.parametrize("seconds", [-1.0, 3601.0])
def test_stress_seconds_are_bounded(seconds):
    with pytest.raises(InputError, match="--stress"):
        SelftestOptions(stress=seconds).check()


@pytest.mark.slow
def test_stress_phase_runs_on_the_cpu_and_the_watch_fails_the_test(tmp_path, marker, monkeypatch):
    """The worker's memory pattern test and burn for real (on the CPU), the NVML watch on the growing A100."""
    from envdoctor.selftest.common import probe_target
    from envdoctor.selftest.gpu import run_gpu

    monkeypatch.setenv("ENVDOCTOR_TEST_MARK", marker)
    kmsg = kernel_log(tmp_path)
    watch = GpuWatch(lib=GrowingNvml(kmsg), ctx=ProbeContext(root=tmp_path, env={"PATH": str(tmp_path)}))
    res = run_gpu(probe_target(sys.executable), device="cpu", stress=1.0, watch=watch)
    s = res.metrics["stress"]
    (mem,) = s["memory"]
    assert mem["ok"] and mem["bytes"] == 64 << 20 and set(mem["mismatches"]) == {"ones", "zeros", "0x55", "0xaa", "address"}
    (burn,) = s["burn"]
    assert burn["ok"] and burn["bitwise_equal"] and burn["iterations"] > 0 and burn["tflops"] > 0
    assert s["health"]["gpus"][0]["ecc_uncorrected_delta"] >= 1
    assert res.status == "failed" and "uncorrected ECC" in res.error
    assert {"SELFTEST-GPU-ECC-GREW", "SELFTEST-GPU-XID"} <= {f.id for f in res.findings}


@pytest.mark.slow
def test_stress_is_skipped_without_cuda(marker):
    proc = cli(["selftest", "gpu", "--stress", "5", "--json"], env={"ENVDOCTOR_TEST_MARK": marker})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    t = by_name(doc(proc), "gpu")
    assert t["status"] == "skipped" and "CUDA is not available" in t["error"]


def test_bad_stress_is_a_usage_error():
    proc = cli(["selftest", "gpu", "--stress", "-3"])
    assert proc.returncode == 2 and "--stress" in proc.stderr
