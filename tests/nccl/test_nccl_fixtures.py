"""Every taxonomy category has a fixture modelled on NCCL's real message formats, and it is ranked first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envdoctor.findings import Finding
from envdoctor.nccl import diagnose_paths, diagnose_text, load_rules
from tests.nccl.helpers import FIXTURES, ROOT, snapshot

FIXTURE_LOGS = sorted(FIXTURES.glob("*.log"))

# Causes that a log alone cannot separate from a look-alike; the snapshot decides.
FIXTURE_SNAPSHOTS = {
    "driver_bug_p2p_hang": lambda: snapshot(acs_enabled_bridges=0, iommu="passthrough"),
}


def expected(path: Path) -> str:
    return path.stem.split("__")[0]


@pytest.mark.parametrize("path", FIXTURE_LOGS, ids=lambda p: p.stem)
def test_fixture_root_cause_ranks_first(path: Path) -> None:
    make = FIXTURE_SNAPSHOTS.get(path.stem)
    report = diagnose_paths([path], snapshot=make() if make else None)
    assert report.findings, f"{path.name}: nothing diagnosed"
    top = report.findings[0]
    assert top.category == expected(path), [(f.category, f.score) for f in report.findings]
    assert top.evidence, "the root cause must quote the lines it rests on"
    assert top.fix


def test_every_category_has_a_fixture() -> None:
    categories = set(load_rules().categories)
    covered = {expected(p) for p in FIXTURE_LOGS}
    assert categories - covered == set()


def test_categories_cover_the_taxonomy() -> None:
    taxonomy = ROOT / "docs" / "nccl-taxonomy.md"
    import re

    text = taxonomy.read_text().split("## Taxonomy", 1)[-1]
    named = set(re.findall(r"^\| `([a-z0-9_]+)` \|", text, re.M))
    assert named and named <= set(load_rules().categories)


def test_healthy_log_has_no_finding() -> None:
    report = diagnose_paths([FIXTURES / "healthy_single_node.txt"])
    assert report.findings == [] and not report.failed and report.exit_code() == 0


def test_libibverbs_warning_alone_is_harmless_on_a_single_node() -> None:
    report = diagnose_paths([FIXTURES / "healthy_single_node.txt"])
    assert "ib_verbs_missing" not in [f.category for f in report.findings]


def test_misleading_ibverbs_line_does_not_win_over_shm() -> None:
    report = diagnose_paths([FIXTURES / "shm_exhausted__misleading_ibverbs.log"])
    cats = [f.category for f in report.findings]
    assert cats[0] == "shm_exhausted" and "ib_verbs_missing" not in cats


def test_timeouts_after_an_oom_blame_the_crash_not_the_slow_rank() -> None:
    report = diagnose_paths([FIXTURES / "timeout_rank_crashed.log"])
    top = report.findings[0]
    assert top.category == "timeout_rank_crashed" and top.confidence == "high"
    assert any("CUDA out of memory" in e for e in top.evidence)
    # the same watchdog lines without the crash read as a slow rank
    slow = [ln for ln in (FIXTURES / "timeout_rank_crashed.log").read_text().splitlines() if "Watchdog" in ln]
    from envdoctor.nccl import diagnose_text

    assert diagnose_text("\n".join(slow)).findings[0].category == "timeout_slow_rank"


def test_no_gpus_found_with_old_driver_is_the_driver() -> None:
    from envdoctor.nccl import diagnose_text

    no_gpus = "RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!"
    alone = diagnose_text(no_gpus).findings[0]
    both = diagnose_paths([FIXTURES / "driver_too_old__misleading_no_gpus.log"]).findings[0]
    assert alone.category == both.category == "driver_too_old"
    assert alone.confidence == "low" and both.confidence == "high"


def test_p2p_hang_without_snapshot_keeps_driver_bug_in_the_running() -> None:
    report = diagnose_paths([FIXTURES / "driver_bug_p2p_hang.log"])
    assert "driver_bug_p2p_hang" in [f.category for f in report.findings[:3]]
    assert report.findings[0].confidence == "low"


def test_json_document_matches_the_contract() -> None:
    doc = diagnose_paths([FIXTURES / "nvls_multicast.log"]).to_json()
    json.dumps(doc)
    assert doc["schema"] == "envdoctor.nccl/1"
    f = doc["findings"][0]
    assert {"id", "category", "title", "evidence", "fix", "confidence"} <= set(f)
    assert f["id"] == "NCCL-NVLS-MULTICAST" and f["confidence"] in ("high", "medium", "low")
    assert {"nccl_version", "ranks", "transports", "interfaces"} <= set(doc["facts"])
    assert doc["facts"]["nccl_version"] == "2.20.5"


def test_finding_converts_to_the_project_finding_shape() -> None:
    f = diagnose_paths([FIXTURES / "duplicate_gpu.log"]).findings[0]
    assert isinstance(f, Finding) and f.subjects == ["nccl"]
    assert (f.id, f.category, f.severity) == ("NCCL-DUPLICATE-GPU", "duplicate_gpu", "error")
    assert "Duplicate GPU detected" in f.detail


def test_a_flushed_rdma_request_alone_points_to_acs_and_keeps_the_first_error_in_charge() -> None:
    flush = ("node-b:984:1357 [4] transport/net_ib.cc:2244 NCCL WARN NET/IB : Got completion from peer 10.1.0.7<44206> "
             "with status=5 opcode=32656 len=32659 vendor err 249 (Recv) localGid ::ffff:10.1.0.8 remoteGids::ffff:10.1.0.7")
    alone = [f.category for f in diagnose_text(flush).findings]
    assert alone[:2] == ["gdr_acs", "roce_gid_index"]
    # a flush follows the error that broke the queue pair: after a retry timeout the RoCE cause stays first
    timeout = flush.replace("status=5 opcode=32656 len=32659 vendor err 249", "status=12 opcode=129 len=65536 vendor err 129")
    assert diagnose_text(timeout + "\n" + flush).findings[0].category == "roce_gid_index"
    # vendor err 249 without a flush status is not this signature
    assert diagnose_text(flush.replace("status=5", "status=7")).findings == []


def test_an_unresponsive_efa_receiver_is_the_security_group() -> None:
    line = ("libfabric:4711:1717000000::efa:ep_ctrl:efa_rdm_pke_handle_send_completion():412<warn> "
            "Error 4126: Unresponsive receiver (reachable by EFA device but handshake failed)")
    top = diagnose_text(line).findings[0]
    assert top.category == "firewall_blocked"
    assert "to and from itself" in load_rules().categories["firewall_blocked"].fix
