"""The machine snapshot raises or lowers causes the log alone leaves open."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envdoctor.nccl import diagnose_paths, diagnose_text
from envdoctor.snapshot import Gpu
from tests.nccl.helpers import FIXTURES, ROOT, GiB, MiB, snapshot, with_fabric_manager, with_interfaces

GENERIC = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.18.1\n"


def _finding(report, category):
    return next((f for f in report.findings if f.category == category), None)


def test_small_dev_shm_raises_shm_exhausted() -> None:
    bare = _finding(diagnose_text(GENERIC), "shm_exhausted")
    small = _finding(diagnose_text(GENERIC, snapshot(shm_bytes=64 * MiB)), "shm_exhausted")
    assert bare.confidence == "low" and small.confidence == "medium"
    assert small.score > bare.score
    assert any("64 MiB" in e for e in small.evidence)


def test_roomy_dev_shm_lowers_a_generic_shm_guess() -> None:
    roomy = diagnose_text(GENERIC, snapshot(shm_bytes=32 * GiB))
    assert _finding(roomy, "shm_exhausted") is None
    explicit = diagnose_paths([FIXTURES / "shm_exhausted.log"], snapshot(shm_bytes=32 * GiB))
    assert explicit.findings[0].category == "shm_exhausted"  # the log names /dev/shm: stale files may fill it


def test_socket_ifname_naming_no_interface() -> None:
    log = ("n:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to ens3f0\n"
           "n:1:1 [0] misc/socket.cc:484 NCCL WARN socketPollConnect: Connect to 10.0.0.2<4000> "
           "returned 110(Connection timed out)\n")
    without = diagnose_text(log)
    assert without.findings[0].category == "firewall_blocked"
    snap = with_interfaces(snapshot(), "lo", "eth0", "docker0")
    report = diagnose_text(log, snap)
    top = report.findings[0]
    assert top.category == "socket_ifname_wrong"
    assert any("NCCL_SOCKET_IFNAME=ens3f0 matches no interface" in e for e in top.evidence)
    fine = diagnose_text(log, with_interfaces(snapshot(), "lo", "ens3f0"))
    assert fine.findings[0].category == "firewall_blocked"


def test_ifname_matching_follows_nccl_rules() -> None:
    from envdoctor.nccl.predicates import ifname_matches

    names = ["eth0", "eth1", "ens3", "docker0", "lo"]
    assert ifname_matches("eth", names) == ["eth0", "eth1"]
    assert ifname_matches("=eth", names) == []
    assert ifname_matches("=eth1", names) == ["eth1"]
    assert ifname_matches("^docker,lo", names) == ["eth0", "eth1", "ens3"]
    assert ifname_matches("ens,eth0", names) == ["eth0", "ens3"]


def test_fabric_manager_down_raises_fabric_manager_and_nvls() -> None:
    nvls = (FIXTURES / "nvls_multicast.log").read_text()
    plain = diagnose_text(nvls)
    down = diagnose_text(nvls, with_fabric_manager(snapshot(), running=False))
    assert plain.findings[0].category == "nvls_multicast"
    assert _finding(down, "nvls_multicast").score > _finding(plain, "nvls_multicast").score
    assert _finding(down, "fabric_manager_down") is not None
    hang = ("[Rank 0] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=8388608, NumelOut=8388608")
    assert diagnose_text(hang, with_fabric_manager(snapshot(), running=False)).findings[0].category == "fabric_manager_down"
    up = diagnose_paths([FIXTURES / "fabric_manager_down.log"], with_fabric_manager(snapshot(), running=True))
    assert up.findings[0].confidence != "high"


def test_mig_mode_in_snapshot() -> None:
    snap = snapshot()
    snap.gpus = [Gpu(index=0, name="NVIDIA A100", compute_capability="8.0", mig_enabled=True)]
    report = diagnose_text("RuntimeError: NCCL error: invalid usage\n", snap)
    assert _finding(report, "mig_unsupported") is not None


def test_snapshot_file_on_the_command_line(tmp_path: Path) -> None:
    snap_file = tmp_path / "snap.json"
    snap_file.write_text(snapshot(shm_bytes=64 * MiB).dumps())
    log = tmp_path / "job.log"
    log.write_text(GENERIC)
    cmd = [sys.executable, "-m", "envdoctor", "nccl", "diagnose", str(log), "--snapshot", str(snap_file), "--json"]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1, out.stderr
    import json

    f = json.loads(out.stdout)["findings"][0]
    assert f["category"] == "shm_exhausted" and f["confidence"] == "medium"
    bad = subprocess.run([*cmd[:-3], "--snapshot", str(log)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and str(log) in bad.stderr
