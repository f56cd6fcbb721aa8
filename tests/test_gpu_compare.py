"""tools/gpu_compare.py: every GPU fact of a snapshot against `nvidia-smi -q` and torch's collect_env, on recorded
text of both nvidia-smi layouts (the R550+ 'Clocks Event Reasons' / 'GPU Power Readings' one and the older one)."""

from __future__ import annotations

import json
import sys

from envdoctor.probes import gpu
from envdoctor.probes.base import ProbeContext
from envdoctor.snapshot import Driver, Snapshot
from tests.conftest import ROOT
from tests.probes.recorded_nvml import RecordedNvml

sys.path.insert(0, str(ROOT / "tools"))
import gpu_compare

FIX = ROOT / "tests" / "fixtures" / "gpu_proof"


def _rows(rows):
    return {r[0]: r for r in rows}


def test_parse_the_r550_layout():
    machine, (g,) = gpu_compare.smi_facts(gpu_compare.parse_smi_q((FIX / "nvidia_smi_q_h200.txt").read_text()))
    assert machine == {"driver.version": "580.159.03", "driver.cuda_driver_version": "13.0"}
    assert g["name"] == "NVIDIA H200" and g["pci_bus_id"] == "0000:18:00.0" and g["memory_mib"] == 143771
    assert (g["pcie.gen"], g["pcie.width"], g["persistence_mode"], g["mig_enabled"]) == (5, 16, True, False)
    assert g["ecc_uncorrected"] == 0 and g["health.throttle_reasons"] == []  # Idle alone is not a reason
    assert g["health.power_limit_w"] == 700 and g["health.power_default_w"] == 700
    assert g["health.row_remap.histogram.max"] == 2560 and g["health.row_remap.pending"] is False
    assert g["health.slowdown_temperature_c"] is None  # only T.Limit-relative figures in this layout


def test_parse_the_older_layout():
    _, (g,) = gpu_compare.smi_facts(gpu_compare.parse_smi_q((FIX / "nvidia_smi_q_a100_old_layout.txt").read_text()))
    assert g["health.throttle_reasons"] == ["hw_slowdown", "sw_power_cap"]
    assert g["ecc_uncorrected"] == 2 and g["health.compute_mode"] == "exclusive_process"
    assert (g["health.power_limit_w"], g["health.power_default_w"]) == (300, 400)
    assert (g["health.app_clock_mhz"], g["health.default_app_clock_mhz"]) == (1095, 1275)
    assert g["health.row_remap.pending"] is True and g["health.slowdown_temperature_c"] == 89


def test_collect_env_facts():
    env = gpu_compare.collect_env_facts((FIX / "collect_env_h200.txt").read_text())
    assert env["torch.version"] == "2.11.0+cu130" and env["torch.cuda"] == "13.0" and env["torch.cuda_available"] is True
    assert env["driver.version"] == "580.159.03" and env["gpu_names"] == ["NVIDIA H200"]
    assert env["python.version"] == "3.12.3" and env["nccl_wheel"] == "2.27.7"


def _a100_snapshot(tmp_path) -> dict:
    out = gpu.probe(ProbeContext(root=tmp_path, env={"PATH": str(tmp_path)}, nvml=RecordedNvml("a100_remap_nvlink_crc")))
    snap = Snapshot(driver=out.sections["driver"], gpus=out.sections["gpus"])
    return json.loads(snap.dumps())


def test_snapshot_from_the_recorded_a100_agrees_with_its_nvidia_smi(tmp_path):
    rows = _rows(gpu_compare.compare(_a100_snapshot(tmp_path),
                                     (FIX / "nvidia_smi_q_a100_old_layout.txt").read_text(), None))
    for fact in ("driver.version", "gpus.0.name", "gpus.0.uuid", "gpus.0.pci_bus_id", "gpus.0.memory_mib",
                 "gpus.0.ecc_uncorrected", "gpus.0.health.throttle_reasons", "gpus.0.health.power_limit_w",
                 "gpus.0.health.compute_mode", "gpus.0.health.row_remap.pending", "gpus.0.retired_pages_pending",
                 "gpus.0.health.row_remap.histogram.high", "gpus.0.health.default_app_clock_mhz"):
        assert rows[fact][4] == "agree", rows[fact]
    assert not [r for r in rows.values() if r[4] == "DIFFER"], [r for r in rows.values() if r[4] == "DIFFER"]


def test_a_disagreement_is_shown(tmp_path):
    doc = _a100_snapshot(tmp_path)
    doc["gpus"][0]["health"]["power_limit_w"] = 400.0
    doc["driver"]["version"] = "535.54.03"
    rows = _rows(gpu_compare.compare(doc, (FIX / "nvidia_smi_q_a100_old_layout.txt").read_text(), None))
    assert rows["gpus.0.health.power_limit_w"][4] == "DIFFER" and rows["driver.version"][4] == "DIFFER"


def test_the_summary_names_missing_inputs(tmp_path):
    snap = tmp_path / "s.json"
    snap.write_text(Snapshot(driver=Driver(version="580.159.03"), gpus=[]).dumps())
    skipped = tmp_path / "smi.txt"
    skipped.write_text("SKIPPED: nvidia-smi not found\n")
    out = tmp_path / "summary.md"
    assert gpu_compare.main([str(snap), str(skipped), str(FIX / "collect_env_h200.txt"), "-o", str(out)]) == 0
    text = out.read_text()
    assert "input missing" in text and "nvidia-smi not found" in text
    assert "| driver.version | 580.159.03 |  | 580.159.03 | agree |" in text


def test_an_unreadable_snapshot_is_exit_2(tmp_path):
    assert gpu_compare.main([str(tmp_path / "none.json")]) == 2
