"""GPU health facts read through the NVML gateway from recorded NVML answers (tests/probes/nvml_recorded/),
with Xid events from a fake kernel log. Only the pynvml module is replaced."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from envdoctor.probes import gpu
from envdoctor.probes.base import ProbeContext
from envdoctor.probes.gpu_health import parse_xids, read_kernel_xids, throttle_names
from envdoctor.snapshot import Snapshot, Unavailable, Unknown, is_absent, snapshot_from_json
from tests.probes.recorded_nvml import RecordedNvml

A100_KMSG = (
    "6,1201,5123456789,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08\n"
    "4,2311,91234567890,-;NVRM: Xid (PCI:0000:07:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row "
    "(0x0000000000d2c1a0) Marked for Remapping, reset gpu to activate.\n"
    "4,2312,91234567999,-;NVRM: Xid (PCI:0000:07:00): 74, pid=3412, name=python, NVLink: fatal error detected on link 3\n"
    "4,2313,91234568000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
)


def probed(tmp_path: Path, recording: str, kmsg: str = None, bindir: Path = None):
    root = tmp_path / "root"
    (root / "dev").mkdir(parents=True, exist_ok=True)
    if kmsg is not None:
        (root / "dev" / "kmsg").write_text(kmsg)
    ctx = ProbeContext(root=root, env={"PATH": str(bindir or tmp_path / "nobin")}, nvml=RecordedNvml(recording))
    out = gpu.probe(ctx)
    return out, out.sections["gpus"][0]


def test_h100_healthy_reads_every_fact_and_nothing_is_wrong(tmp_path):
    out, g = probed(tmp_path, "h100_healthy", kmsg="6,1,1,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n")
    h = g.health
    assert h.throttle_reasons == []  # gpu_idle alone is not a reason to report
    assert h.xids == [] and h.xid_source == "kmsg"
    assert len(h.nvlink_errors) == 18
    assert all(e.crc_flit == e.crc_data == e.replay == e.recovery == 0 for e in h.nvlink_errors)
    rr = h.row_remap
    assert (rr.correctable, rr.uncorrectable, rr.pending, rr.failed) == (0, 0, False, False)
    assert rr.histogram == {"max": 2560, "high": 0, "partial": 0, "low": 0, "none": 0}
    assert (h.power_limit_w, h.power_default_w) == (700.0, 700.0)
    assert (h.temperature_c, h.slowdown_temperature_c) == (34, 89)
    assert h.compute_mode == "default"
    assert (h.app_clock_mhz, h.default_app_clock_mhz, h.max_clock_mhz) == (1980, 1980, 1980)
    assert g.persistence_mode is True
    assert out.note is None


def test_a100_with_pending_remap_and_nvlink_crc_errors(tmp_path):
    _, g = probed(tmp_path, "a100_remap_nvlink_crc", kmsg=A100_KMSG)
    h = g.health
    assert h.throttle_reasons == ["sw_power_cap", "hw_slowdown"]
    assert [x.code for x in h.xids] == [63, 74]  # GPU 0000:3b:00's Xid 79 is another GPU's
    assert "Marked for Remapping" in h.xids[0].text
    bad = [e for e in h.nvlink_errors if e.crc_flit or e.crc_data or e.replay or e.recovery]
    assert len(h.nvlink_errors) == 12
    assert [(e.link, e.crc_flit, e.crc_data, e.replay, e.recovery) for e in bad] == [(3, 1523, 4, 12, 1)]
    assert h.row_remap.pending is True and h.row_remap.uncorrectable == 2 and h.row_remap.failed is False
    assert h.row_remap.histogram["high"] == 3
    assert (h.power_limit_w, h.power_default_w) == (300.0, 400.0)
    assert h.compute_mode == "exclusive_process"
    assert (h.app_clock_mhz, h.default_app_clock_mhz) == (1095, 1275)
    assert g.retired_pages_pending is True and g.ecc_uncorrected == 2


def test_old_driver_and_gpu_without_the_counters_say_why(tmp_path):
    out, g = probed(tmp_path, "t4_old_driver")  # no /dev/kmsg, no dmesg
    h = g.health
    assert h.throttle_reasons == ["sw_thermal_slowdown"]  # through the older ...ThrottleReasons name
    assert isinstance(h.nvlink_errors, Unavailable) and "not supported" in h.nvlink_errors.reason
    assert isinstance(h.row_remap, Unavailable) and "nvmlDeviceGetRemappedRows" in h.row_remap.reason
    assert isinstance(h.slowdown_temperature_c, Unavailable)
    assert h.temperature_c == 84 and h.power_limit_w == 70.0
    # An unreadable kernel log leaves the Xids unknown, never "none".
    assert isinstance(h.xids, Unknown) and "not readable" in h.xids.reason
    assert "nvmlDeviceGetCurrentClocksEventReasons" in out.note and "nvmlDeviceGetRemappedRows" in out.note


def test_a_failed_nvml_call_is_a_failed_probe_not_a_value(tmp_path):
    nvml = RecordedNvml("h100_healthy")
    nvml.recording["devices"][0]["nvmlDeviceGetPowerManagementLimit"] = {"error": 999}
    ctx = ProbeContext(root=tmp_path, env={"PATH": str(tmp_path)}, nvml=nvml)
    h = gpu.probe(ctx).sections["gpus"][0].health
    assert str(h.power_limit_w).startswith("probe failed")


def test_dmesg_is_the_fallback_when_kmsg_is_unreadable(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "dmesg"
    script.write_text("#!/bin/sh\necho '[ 91.2] NVRM: Xid (PCI:0000:07:00): 48, pid=1, DBE (0x1,0x0)'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    _, g = probed(tmp_path, "a100_remap_nvlink_crc", bindir=bindir)
    assert g.health.xid_source == "dmesg" and [x.code for x in g.health.xids] == [48]


def test_dmesg_refused_leaves_xids_unknown_with_its_reason(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "dmesg"
    script.write_text("#!/bin/sh\necho 'dmesg: read kernel buffer failed: Operation not permitted' >&2\nexit 1\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    root = tmp_path / "root"
    ctx = ProbeContext(root=root, env={"PATH": str(bindir)})
    xids, source = read_kernel_xids(ctx)
    assert isinstance(xids, Unknown) and "dmesg" in xids.reason and isinstance(source, Unknown)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_kmsg_says_why(tmp_path):
    (tmp_path / "dev").mkdir()
    kmsg = tmp_path / "dev" / "kmsg"
    kmsg.write_text("x")
    kmsg.chmod(0)
    xids, _ = read_kernel_xids(ProbeContext(root=tmp_path, env={"PATH": str(tmp_path / "none")}))
    assert isinstance(xids, Unknown) and "Permission denied" in xids.reason


def test_parse_xids_by_pci_address():
    got = parse_xids(A100_KMSG + "[12.0] NVRM: Xid (PCI:0000:3B:00.0): 13, Graphics Exception\n")
    assert sorted(got) == ["0000:07:00", "0000:3b:00"]
    assert [x.code for x in got["0000:3b:00"]] == [79, 13]


def test_throttle_bits_by_name():
    assert throttle_names(0x1) == []
    assert throttle_names(0x4 | 0x40 | 0x80) == ["sw_power_cap", "hw_thermal_slowdown", "hw_power_brake_slowdown"]


@pytest.mark.parametrize("recording", ["h100_healthy", "a100_remap_nvlink_crc", "t4_old_driver"])
def test_health_facts_round_trip_through_the_snapshot(tmp_path, recording):
    _, g = probed(tmp_path, recording, kmsg=A100_KMSG)
    text = Snapshot(gpus=[g]).dumps()
    again = snapshot_from_json(json.loads(text))
    assert again.gpus[0].health == g.health
    assert again.dumps() == text


HEALTH_RULES = {f"ED6{n:02d}" for n in range(1, 13)}


def _health_findings(tmp_path, recording, kmsg=None):
    from envdoctor.snapshot import Host
    from tests.conftest import diagnose_bundled

    _, g = probed(tmp_path, recording, kmsg=kmsg)
    snap = Snapshot(host=Host(os="linux"), gpus=[g])
    found = diagnose_bundled(snap)
    return {f.id for f in found if f.id in HEALTH_RULES or f.id == "ED208"}


def test_rules_on_the_recorded_h100_find_nothing(tmp_path):
    assert _health_findings(tmp_path, "h100_healthy", kmsg="") == set()


def test_rules_on_the_recorded_a100_name_each_fault(tmp_path):
    got = _health_findings(tmp_path, "a100_remap_nvlink_crc", kmsg=A100_KMSG)
    # pending remap (ED208), NVLink CRC (ED603), HW slowdown (ED604), power cap (ED607),
    # exclusive process (ED608), clocks below base (ED610), hardware Xids 63 and 74 (ED611)
    assert got == {"ED208", "ED603", "ED604", "ED607", "ED608", "ED610", "ED611"}


def test_rules_on_the_recorded_old_t4_say_only_what_they_know(tmp_path):
    # Hot and thermally slowed; its missing counters and unreadable kernel log fire nothing.
    assert _health_findings(tmp_path, "t4_old_driver") == {"ED605"}


def test_the_facts_line_names_what_is_off_and_nothing_on_a_healthy_gpu(tmp_path):
    from envdoctor.present.facts import _gpu

    _, sick = probed(tmp_path, "a100_remap_nvlink_crc", kmsg=A100_KMSG)
    line = _gpu(sick)
    for words in ("clocks slowed: sw_power_cap, hw_slowdown", "compute mode exclusive_process", "power cap 300/400 W",
                  "row remap pending", "NVLink errors on 1 link(s)", "2 Xid event(s) since boot"):
        assert words in line, line
    _, healthy = probed(tmp_path, "h100_healthy", kmsg="")
    assert _gpu(healthy).endswith("NUMA 0")


def test_the_nvidia_smi_fallback_says_it_reads_no_health_counters():
    from envdoctor.probes.gpu import SMI_FIELDS, parse_smi_csv

    row = "0, NVIDIA H100 80GB HBM3, GPU-1, 00000000:18:00.0, 9.0, 81559, 550.54.15, 5, 5, 16, 16, Enabled, Disabled, 0"
    assert len(row.split(",")) == len(SMI_FIELDS.split(","))
    _, (g,) = parse_smi_csv(row)
    assert isinstance(g.health, Unavailable) and "nvidia-smi fallback" in g.health.reason


def test_a_kernel_log_read_only_in_part_gives_unknown_xids_not_none(tmp_path, monkeypatch):
    """An Xid may be in the part of /dev/kmsg that was not read: no Xid found there is no proof of none."""
    from envdoctor.probes import gpu_health

    monkeypatch.setattr(gpu_health, "_KERNEL_LOG_BYTES", 16)
    out, g = probed(tmp_path, "h100_healthy", kmsg="6,1,1,-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module\n" * 4)
    assert g.health.xids != []
    assert is_absent(g.health.xids) or g.health.xids is None


def test_an_nvml_error_on_the_first_nvlink_is_unknown_not_no_nvlink():
    from envdoctor.probes import gpu_health
    from envdoctor.snapshot import ProbeFailed, Unavailable

    class _Nvml:
        def query(self, name, *args):
            return ProbeFailed("NVML_ERROR_GPU_IS_LOST")

    got = gpu_health._nvlink_errors(_Nvml(), object())
    assert isinstance(got, ProbeFailed) and not isinstance(got, Unavailable)
